import CSQLite
import SwellStoreCore

/// A SQLite result code (GRDB's `ResultCode`), as a `.sqlite` store error carries it (`sqliteCode`): the
/// extended code SQLite reported, its primary code, and SQLite's name for it.
///
/// Compare with the named codes or by primary code:
///
/// ```swift
/// catch SQLiteResultCode.busy { … }                 // SQLITE_BUSY and every SQLITE_BUSY_*
/// catch SQLiteResultCode.constraintUnique { … }     // that extended code only
/// ```
///
/// `description` is SQLite's text for the code and its number, e.g.
/// `constraint failed (SQLite code 2067)`.
public struct SQLiteResultCode: Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (the primary code in its low byte).
    public let rawValue: Int32

    /// A result code from its number (SQLite's `SQLITE_*` value).
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code: `SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`.
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xff) }

    /// SQLite's description of the code ("database is locked", "constraint failed", …).
    public var description: String {
        "\(String(cString: sqlite3_errstr(rawValue))) (SQLite code \(rawValue))"
    }

    /// `SQLITE_ERROR`: a generic error (a bad statement, a missing table).
    public static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_BUSY`: another connection holds the lock past the busy timeout.
    public static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a conflict inside one connection's shared cache.
    public static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_READONLY`: the file or its directory cannot be written.
    public static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the file is damaged.
    public static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_FULL`: the disk is full.
    public static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    public static let cannotOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_CONSTRAINT`: a constraint was violated.
    public static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_CONSTRAINT_UNIQUE`: a unique index was violated.
    public static let constraintUnique = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a primary key was violated.
    public static let constraintPrimaryKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// `SQLITE_CONSTRAINT_TRIGGER`: a trigger refused the row (`RAISE(ABORT, …)`).
    public static let constraintTrigger = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (7 << 8))
    /// `SQLITE_CONSTRAINT_NOTNULL`: a NOT NULL column got NULL.
    public static let constraintNotNull = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// `SQLITE_MISUSE`: the library was used wrongly (a statement left open at close).
    public static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_NOTADB`: the file is not a SQLite database.
    public static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
}
