import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The WAL is checkpointed off the writer's queue (`SQLiteCheckpointer`).
@Suite(.onEveryStore) struct CheckpointTests {
    let directory = TemporaryDirectory()

    /// Commits `rows` journal entries with a long location each, in one batch insert.
    private func commit(_ container: PersistentContainer, ids: Range<Int64>) throws {
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date"), location = columns.strings("location")
        let text = String(repeating: "x", count: 400)
        for key in ids {
            columns.append(key, to: id)
            columns.append(Date(timeIntervalSince1970: 0), to: date)
            columns.append(text, to: location)
        }
        let worker = container.newBackgroundContext()
        _ = try worker.performAndWait { try worker.execute(BatchInsertRequest(entityName: "JournalEntry", columns: columns)) }
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test(.sqliteStoreOnly) func commitsPastTheThresholdAreCheckpointedByTheCheckpointer() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let before = size(store.path)
        // About 2,000 pages of WAL: past the threshold, below the limit at which a commit checkpoints itself.
        try commit(container, ids: 0..<20_000)
        store.checkpointer.waitUntilIdle()
        #expect(store.checkpointer.checkpoints.load(ordering: .relaxed) >= 1)
        // The pages reached the store file (not only the WAL).
        #expect(size(store.path) > before + 8_000_000)
        // Rows committed after a checkpoint are read as before.
        try commit(container, ids: 20_000..<20_010)
        let reader = try makeRootContext(at: container.storeURL)
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "JournalEntry")) } == 20_010)
    }

    @Test(.sqliteStoreOnly) func closingWaitsForTheCheckpointAndLeavesNoWAL() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        try commit(container, ids: 0..<20_000)
        try container.persistentStoreCoordinator.close()
        #expect(!FileManager.default.fileExists(atPath: store.path + "-wal"))
        let reader = try makeRootContext(at: container.storeURL)
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "JournalEntry")) } == 20_000)
    }
}
