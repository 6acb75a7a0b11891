extension StoreError {
    /// `.sqlite`: SQLite refused a statement with `code`, saying `message`.
    static func sqlite(_ code: SQLiteResultCode, message: String, sql: String?) -> StoreError {
        var error = StoreError(.sqlite, sql.map { "SQLite error \(code.rawValue): \(message) (in: \($0))" }
                                          ?? "SQLite error \(code.rawValue): \(message)")
        error.sqliteCode = code
        error.sql = sql
        return error
    }

    /// A SQLite failure as a store error: disk full and not-a-store by name, any other by its code.
    init(_ error: SQLiteError, path: String) {
        if error.isDiskFull {
            self = .diskFull(path: path)
        } else if error.isNotAStore {
            self = .notAStore(path: path, reason: error.message)
        } else {
            self = .sqlite(SQLiteResultCode(rawValue: error.code), message: error.message, sql: error.sql)
        }
    }

    /// `error` as a store error: a store error as it is, a SQLite error by its code (disk
    /// full and not-a-store by name), anything else as `.underlying`.
    init(converting error: any Error, path: String) {
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
