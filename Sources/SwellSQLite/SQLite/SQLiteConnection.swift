import CSQLite
import Foundation
import SwellStoreCore

/// One SQLite connection: the owner of a `sqlite3` handle and its prepared
/// statements.
///
/// A connection is used by one owner at a time (a store serialises access to
/// each of its connections with a lock); it is not `Sendable`. It is closed when
/// released, and closed again if opening fails half-way.
package final class SQLiteConnection {
    /// The `sqlite3` handle while open; nil once `close()` closed it, so a later use throws
    /// instead of touching freed memory.
    private(set) var openHandle: OpaquePointer?
    package let path: String
    private var statements: [String: SQLiteStatement] = [:]

    /// How a connection opens its file.
    package enum OpenMode {
        case readWriteCreate
        case readWrite
        case readOnly

        package var flags: Int32 {
            let base = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
            switch self {
            case .readWriteCreate: return base | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            case .readWrite: return base | SQLITE_OPEN_READWRITE
            case .readOnly: return base | SQLITE_OPEN_READONLY
            }
        }
    }

    package init(path: String, mode: OpenMode = .readWriteCreate) throws(SQLiteError) {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, mode.flags, nil)
        guard code == SQLITE_OK, let db else {
            let error = SQLiteError(code: code, handle: db)
            sqlite3_close_v2(db)
            throw error
        }
        self.openHandle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 10_000)
        try registerPredicateFunctions()
    }

    /// Whether `close()` closed it.
    package var isClosed: Bool { openHandle == nil }

    /// The open handle.
    ///
    /// - Throws: `SQLiteError` with `SQLITE_MISUSE`, naming the file, after `close()`.
    package var handle: OpaquePointer {
        get throws(SQLiteError) {
            guard let openHandle else {
                throw SQLiteError(code: SQLITE_MISUSE, message: "the connection to \(path) was closed")
            }
            return openHandle
        }
    }

    /// Closes the connection on purpose: finalizes its cached statements, then the handle
    /// (the last connection to a WAL database checkpoints it and removes the `-wal` file).
    /// Closing twice does nothing.
    ///
    /// - Throws: `SQLiteError` naming the statements still open elsewhere (SQLITE_BUSY); the
    ///   connection then stays open, and is closed when released.
    package func close() throws(SQLiteError) {
        guard let handle = openHandle else { return }
        statements.removeAll()
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else {
            var open: [String] = []
            var statement = sqlite3_next_stmt(handle, nil)
            while let current = statement {
                open.append(sqlite3_sql(current).map { String(cString: $0) } ?? "?")
                statement = sqlite3_next_stmt(handle, current)
            }
            throw SQLiteError(code: code, message: "cannot close \(path): statements left open: \(open.joined(separator: "; "))")
        }
        openHandle = nil
    }

    /// A connection nobody closed (a failed open half-way, an owner that threw) is closed
    /// here, deferred by SQLite until its last statement is finalized.
    deinit {
        guard let openHandle else { return }
        statements.removeAll()
        sqlite3_close_v2(openHandle)
    }

    /// Syncs the connection's journal (the `-wal` file in WAL mode) to disk through
    /// SQLite's own file handle: every commit written to it so far then survives a
    /// power cut. Without a journal open there is nothing to sync.
    package func syncJournal() throws(SQLiteError) {
        let handle = try handle
        var file: UnsafeMutablePointer<sqlite3_file>?
        let code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: handle) }
        guard let file, let methods = file.pointee.pMethods, let sync = methods.pointee.xSync else { return }
        let synced = sync(file, SQLITE_SYNC_NORMAL)
        guard synced == SQLITE_OK else {
            throw SQLiteError(code: synced, message: "cannot sync \(path)-wal to disk: \(String(cString: sqlite3_errstr(synced)))")
        }
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        let handle = try handle
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// The cached prepared statement for `sql`, reset and ready to bind.
    package func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs a query and returns all its rows.
    package func query(_ sql: String, _ arguments: [StoreValue] = []) throws(SQLiteError) -> [[StoreValue]] {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var rows: [[StoreValue]] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// Runs a statement with arguments, discarding rows.
    package func run(_ sql: String, _ arguments: [StoreValue] = []) throws(SQLiteError) {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        try statement.run()
    }

    /// The rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { openHandle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ kind: String = "IMMEDIATE", _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // The body's error is reported; a failed ROLLBACK means SQLite already rolled back.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Drops cached statements (after a schema change).
    package func clearStatementCache() {
        statements.removeAll()
    }
}

