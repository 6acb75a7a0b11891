import CSQLite
import SwellStoreCore

/// A failure reported by SQLite: its result code, its message and the SQL that
/// failed (never the bound arguments, which may hold user data).
package struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_FULL`, …).
    package let code: Int32
    /// SQLite's own message.
    package let message: String
    /// The statement that failed, when there was one.
    package let sql: String?

    package init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Reads the error state of `handle` after a call returned `code`.
    package init(code: Int32, handle: OpaquePointer?, sql: String? = nil) {
        let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        self.init(code: extended, message: message, sql: sql)
    }

    /// The primary result code (the low byte of the extended one).
    package var primaryCode: Int32 { code & 0xff }

    /// A unique index or primary key refused a row (not NOT NULL, CHECK, a foreign key or a trigger).
    package var isUniqueViolation: Bool {
        code == SQLiteResultCode.constraintUnique.rawValue || code == SQLiteResultCode.constraintPrimaryKey.rawValue
    }
    package var isDiskFull: Bool { primaryCode == SQLITE_FULL }
    package var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// The file is not a database, is corrupt, or could not be opened.
    package var isNotAStore: Bool { primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_CANTOPEN }

    package var description: String {
        if let sql { return "SQLite error \(code): \(message) (in: \(Self.shortened(sql)))" }
        return "SQLite error \(code): \(message)"
    }

    /// A statement as an error shows it: a long one (a many-row INSERT) cut after its first
    /// `limit` characters, with how much was left out.
    package static func shortened(_ sql: String, limit: Int = 240) -> String {
        guard sql.count > limit else { return sql }
        return "\(sql.prefix(limit))… (\(sql.count - limit) more characters)"
    }
}
