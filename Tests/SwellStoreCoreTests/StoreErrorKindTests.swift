import CSQLite
import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store errors callers can switch on (issue 13, item 2): SQLite's refusals carry a
/// `SQLiteResultCode` (named codes, primary code), never a bare number; errors from beneath
/// that no case describes are kept as they were thrown.
@Suite(.onEveryStore) struct StoreErrorKindTests {
    let directory = TemporaryDirectory()

    /// A trigger another program put on the table refuses the insert: the save fails with
    /// SQLite's own code (SQLITE_CONSTRAINT_TRIGGER), which the caller can compare by kind —
    /// not as a uniqueness conflict, which only a unique index or primary key is.
    @Test(.sqliteStoreOnly) func aStatementSQLiteRefusesCarriesItsResultCode() async throws {
        let container = try makeContainer(directory)
        let other = try SQLiteConnection(path: directory.storeURL("journal").path)
        try other.execute("CREATE TRIGGER refuse BEFORE INSERT ON \"JournalEntry\" BEGIN SELECT RAISE(ABORT, 'closed for the season'); END")
        try other.close()
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            insertEntry(worker, id: 1)
            try worker.save()
        }
        let error = await #expect(throws: StoreError.self) { try await container.saveToDisk() }
        guard let error, error.kind == .sqlite, let code = error.sqliteCode else {
            Issue.record("expected a SQLite error, got \(String(describing: error))")
            return
        }
        #expect(code == .constraintTrigger)
        #expect(code.primary == .constraint)
        #expect(code != .constraintUnique)
        #expect(error.description.contains(": closed for the season"))
        // Matched in a catch as GRDB matches result codes: the extended code, or its primary.
        #expect(SQLiteResultCode.constraintTrigger ~= error)
        #expect(SQLiteResultCode.constraint ~= error)
        #expect(!(SQLiteResultCode.constraintUnique ~= error))
        #expect(!(SQLiteResultCode.busy ~= error))
        #expect(StoreError.Kind.sqlite ~= error)
        #expect(!(StoreError.Kind.constraintConflict ~= error))
        #expect(try storedRowCount(directory.storeURL("journal")) == 0)
    }

    @Test func namedCodesAreSQLitesNumbers() {
        #expect(SQLiteResultCode.constraintUnique.rawValue == 2067)
        #expect(SQLiteResultCode.constraintNotNull.rawValue == 1299)
        #expect(SQLiteResultCode.constraintPrimaryKey.rawValue == 1555)
        #expect(SQLiteResultCode.constraintTrigger.rawValue == 1811)
        #expect(SQLiteResultCode.constraintUnique.primary == .constraint)
        #expect(SQLiteResultCode(rawValue: 5 | (1 << 8)).primary == .busy)   // SQLITE_BUSY_RECOVERY
        #expect(SQLiteResultCode.full.description.contains("database or disk is full"))
    }

    @Test func sqliteErrorsMapToTheirCasesAndOthersAreKeptAsThrown() {
        let full = StoreError(SQLiteError(code: SQLITE_FULL, message: "database or disk is full"), path: "/data/s.sqlite")
        #expect(full.kind == .diskFull && full.path == "/data/s.sqlite", "\(full)")
        let notADatabase = StoreError(SQLiteError(code: SQLITE_NOTADB, message: "file is not a database"), path: "/x")
        #expect(notADatabase.kind == .notAStore, "\(notADatabase)")
        struct Elsewhere: Error {}
        let converted = StoreError(converting: Elsewhere(), path: "/x")
        #expect(converted.kind == .underlying && converted.underlying is Elsewhere, "\(converted)")
        let kept = StoreError(converting: StoreError.noPersistentStore, path: "/x")
        #expect(kept.kind == .noPersistentStore, "\(kept)")
    }

    /// A many-row INSERT in an error is cut to its start: the message names the statement,
    /// without thousands of placeholders.
    @Test func aLongStatementIsShortenedInAnError() {
        let sql = "INSERT INTO \"T\" (\"a\") VALUES " + Array(repeating: "(?)", count: 500).joined(separator: ", ")
        let error = SQLiteError(code: SQLITE_CONSTRAINT, message: "UNIQUE constraint failed: T.a", sql: sql)
        #expect(error.description.hasPrefix("SQLite error 19: UNIQUE constraint failed: T.a (in: INSERT INTO \"T\" (\"a\") VALUES (?), (?)"))
        #expect(error.description.count < 320)
        #expect(error.description.hasSuffix("more characters))"))
        let short = SQLiteError(code: SQLITE_CONSTRAINT, message: "m", sql: "SELECT 1")
        #expect(short.description == "SQLite error 19: m (in: SELECT 1)")
    }
}
