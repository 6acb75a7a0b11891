import SwellStoreCore

extension StoreError {
    /// `.sqlite`: SQLite refused a statement, saying why.
    package static func sqlite(_ failure: SQLiteError) -> StoreError {
        var error = StoreError(.sqlite, failure.sql.map { "SQLite error \(failure.code): \(failure.message) (in: \($0))" }
                                          ?? "SQLite error \(failure.code): \(failure.message)")
        error.sql = failure.sql
        error.reason = failure.message
        error.underlying = failure
        return error
    }

    /// SQLite's result code, for `.sqlite` (compare with `SQLiteResultCode`'s named codes).
    public var sqliteCode: SQLiteResultCode? {
        (underlying as? SQLiteError).map { SQLiteResultCode(rawValue: $0.code) }
    }

    /// A SQLite failure as a store error: disk full and not-a-store by name, any other by its code.
    package init(_ error: SQLiteError, path: String) {
        if error.isDiskFull {
            self = .diskFull(path: path)
        } else if error.isNotAStore {
            self = .notAStore(path: path, reason: error.message)
        } else {
            self = .sqlite(error)
        }
    }

    /// `error` as a store error: a store error as it is, a SQLite error by its code (disk
    /// full and not-a-store by name), anything else as `.underlying`.
    package init(converting error: any Error, path: String) {
        switch error {
        case let error as StoreError: self = error
        case let error as SQLiteError: self.init(error, path: path)
        default: self = .underlying(error)
        }
    }
}

extension SQLiteResultCode {
    /// Whether `error` is a store error with this SQLite code: an extended code matches itself,
    /// a primary code every extended code under it (`catch SQLiteResultCode.busy`), as GRDB's
    /// `ResultCode` matches.
    public static func ~= (code: SQLiteResultCode, error: any Error) -> Bool {
        guard let found = (error as? StoreError)?.sqliteCode else { return false }
        return code == found || (code.primary == code && found.primary == code)
    }
}
