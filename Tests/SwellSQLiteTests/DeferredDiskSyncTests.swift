import CSQLite
import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A store whose commits do not wait for the disk until it closes (SQLiteStore's deferred disk sync:
/// what a pipeline run asks for) syncs them when it closes; by default every commit waits.
@Suite(.onEveryStore) struct DeferredDiskSyncTests {
    let directory = TemporaryDirectory()

    private func commit(_ container: PersistentContainer, ids: Range<Int64>) throws {
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date")
        for key in ids {
            columns.append(key, to: id)
            columns.append(Date(timeIntervalSince1970: Double(key)), to: date)
        }
        let worker = container.newBackgroundContext()
        _ = try worker.performAndWait { try worker.execute(BatchInsertRequest(entityName: "JournalEntry", columns: columns)) }
    }

    private func count(at url: URL) throws -> Int {
        let reader = try makeRootContext(at: url)
        return try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "JournalEntry")) }
    }

    @Test(.sqliteStoreOnly) func byDefaultEveryCommitWaitsForTheDiskAndCloseHasNothingToSync() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        #expect(store.writerSynchronous == 2)
        try commit(container, ids: 0..<100)
        try container.persistentStoreCoordinator.close()
        #expect(store.deferredSyncs.load(ordering: .relaxed) == 0)
    }

    @Test(.sqliteStoreOnly) func deferredCommitsAreSyncedWhenTheStoreCloses() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        try store.deferDiskSyncUntilClose()
        #expect(store.writerSynchronous == 1)
        try commit(container, ids: 0..<100)
        try commit(container, ids: 100..<150)
        // Another connection keeps the file open (another process reading it): the close's
        // own checkpoint does not run then, so the sync must not be left to it.
        var other: OpaquePointer?
        #expect(sqlite3_open(store.path, &other) == SQLITE_OK)
        defer { sqlite3_close(other) }
        #expect(sqlite3_exec(other, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK)
        try container.persistentStoreCoordinator.close()
        #expect(store.deferredSyncs.load(ordering: .relaxed) == 1)
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"), "the other connection keeps the WAL")
        #expect(try count(at: container.storeURL) == 150)
    }

    @Test(.sqliteStoreOnly) func anExplicitSyncSyncsDeferredCommitsAndNothingOtherwise() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let deferred = store
        try deferred.syncDeferredCommits()
        #expect(store.deferredSyncs.load(ordering: .relaxed) == 0, "commits wait for the disk: nothing to sync")
        try deferred.deferDiskSyncUntilClose()
        try commit(container, ids: 0..<10)
        try deferred.syncDeferredCommits()
        #expect(store.deferredSyncs.load(ordering: .relaxed) == 1)
        try container.persistentStoreCoordinator.close()
        try #require(try count(at: container.storeURL) == 10)
    }

    @Test(.sqliteStoreOnly) func deferringAClosedStoreThrows() throws {
        let container = try makeContainer(directory)
        let deferred = try #require(container.persistentStoreCoordinator.sqliteStore)
        try container.persistentStoreCoordinator.close()
        #expect(throws: StoreError.self) { try deferred.deferDiskSyncUntilClose() }
    }
}
