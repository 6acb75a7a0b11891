import CSQLite
import SwellStoreCore

/// A prepared SQLite statement, owned by one connection and used on that
/// connection's owner only. Finalised when released.
package final class SQLiteStatement {
    package let handle: OpaquePointer
    package let sql: String
    private unowned let connection: SQLiteConnection

    package init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let database = try connection.handle
        let code = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: code, handle: database, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and clears its bindings, ready for new arguments.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `value` to the 1-based parameter `index`.
    package func bind(_ value: StoreValue, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
        case .real(let double): code = sqlite3_bind_double(handle, index, double)
        case .text(let string):
            var string = string
            code = string.withUTF8 { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    guard let base = chars.baseAddress else {
                        return sqlite3_bind_text64(handle, index, "", 0, swell_sqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                    return sqlite3_bind_text64(handle, index, base, UInt64(chars.count), swell_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        }
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: connection.openHandle, sql: sql) }
    }

    /// Binds `values` to parameters 1…n.
    package func bind(_ values: [StoreValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Steps once: true when a row is ready, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(code: code, handle: connection.openHandle, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion, discarding rows.
    package func run() throws(SQLiteError) {
        while try step() {}
        sqlite3_reset(handle)
    }

    package var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The value of column `index` (0-based) of the current row.
    package func column(_ index: Int32) -> StoreValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_NULL: return .null
        default:
            guard let text = sqlite3_column_text(handle, index) else { return .null }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        }
    }

    package func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// All columns of the current row.
    package func row() -> [StoreValue] {
        (0..<columnCount).map { column($0) }
    }
}
