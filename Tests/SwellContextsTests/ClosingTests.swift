import Foundation
import CSQLite
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Handles closed on purpose (issue 13, item 3; GRDB's `Database.close()`): a container,
/// its coordinator and its store close their connections when told, refuse work after,
/// close twice without harm, and the store opens again with what was saved.
@Suite(.onEveryStore) struct ClosingTests {
    let directory = TemporaryDirectory()

    @Test func aClosedContainerRefusesWorkAndItsStoreOpensAgainWithTheData() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            insertEntry(worker, id: 1, location: "Ocean Beach")
            try worker.save()
        }
        try await container.saveToDisk()
        try container.close()
        try container.close()   // a second close does nothing
        #expect(container.persistentStoreCoordinator.storeURL == nil)
        let after = container.newBackgroundContext()
        let refusal = #expect(throws: StoreError.self) {
            try after.performAndWait { try after.count(for: FetchRequest(entityName: "JournalEntry")) }
        }
        if case .noPersistentStore? = refusal {} else { Issue.record("expected noPersistentStore, got \(String(describing: refusal))") }
        // An in-memory store is gone with its last coordinator (Core Data's too); the others keep the data.
        if directory.store != .memory {
            let again = try makeContainer(directory)
            #expect(try count(again.viewContext) == 1)
            try again.close()
        }
    }

    /// The last connection to a SQLite file checkpoints it on close: no `-wal` file is left.
    @Test(.sqliteStoreOnly) func closingTheLastConnectionCheckpointsTheSQLiteFile() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            for id in 1...50 { insertEntry(worker, id: id) }
            try worker.save()
        }
        try await container.saveToDisk()
        let store = directory.storeURL("journal").path
        #expect(FileManager.default.fileExists(atPath: store + "-wal"))
        _ = try count(container.viewContext)   // a reader in the pool too
        try container.close()
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
        #expect(FileManager.default.fileExists(atPath: store))
    }

    /// A SQLite connection used after `close()` throws a misuse error naming its file: its
    /// handle is gone, never a dangling pointer into freed memory.
    @Test func aClosedSQLiteConnectionRefusesEveryLaterUse() throws {
        let path = directory.file("closed.sqlite").path
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER)")
        try connection.close()
        #expect(connection.isClosed)
        let uses: [(String, () throws -> Void)] = [
            ("execute", { try connection.execute("INSERT INTO t VALUES (1)") }),
            ("query", { _ = try connection.query("SELECT x FROM t") }),
            ("run", { try connection.run("INSERT INTO t VALUES (?)", [.integer(2)]) }),
            ("statement", { _ = try connection.statement("SELECT 1") }),
        ]
        for (name, use) in uses {
            let error = #expect(throws: SQLiteError.self, "\(name)") { try use() }
            #expect(error?.code == SQLITE_MISUSE, "\(name)")
            #expect(error?.message.contains(path) == true, "\(name): \(String(describing: error))")
        }
        #expect(connection.changes == 0)
        try connection.close()   // closing again does nothing
    }
}
