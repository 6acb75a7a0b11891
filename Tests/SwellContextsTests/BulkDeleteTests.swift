import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// `deleteRows(entity:primaryKeys:)`: replace mode's deletions by primary key.
@Suite(.onEveryStore) struct BulkDeleteTests {
    let directory = TemporaryDirectory()

    /// A container whose store holds journal entries 1…`count`, and their primary keys by id.
    private func storedEntries(_ count: Int) async throws -> (PersistentContainer, [Int: Int64]) {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try await worker.perform {
            for id in 1...count { insertEntry(worker, id: id) }
            try worker.save()
        }
        try await container.saveToDisk()
        let reader = container.newBackgroundContext()
        let keys = try await reader.perform { () throws -> [Int: Int64] in
            var keys: [Int: Int64] = [:]
            try reader.enumerateRows(FetchRequest(entityName: "JournalEntry")) { primaryKey, values in
                if case .integer(let id) = values[0] { keys[Int(id)] = primaryKey }
            }
            return keys
        }
        return (container, keys)
    }

    @Test(.sqliteStoreOnly) func deleteRowsReadsNoRowAndMakesNoObject() async throws {
        let (container, keys) = try await storedEntries(300)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let worker = container.newBackgroundContext()
        let doomed = (101...300).compactMap { keys[$0] }
        let before = store.readCount.load(ordering: .relaxed)
        let registered = await worker.perform {
            worker.deleteRows(entity: "JournalEntry", primaryKeys: doomed)
            return worker.registeredObjects.count
        }
        #expect(store.readCount.load(ordering: .relaxed) == before)
        #expect(registered == 0)
        // No object of the worker's was edited: its deletions move up off its queue.
        let moved = try await Task.detached { try worker.saveIntoParentOffQueue() }.value
        #expect(moved?.deleted.count == 200)
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 100)
        #expect(try count(container.newBackgroundContext(), "JournalEntry", "id > 100") == 0)
    }

    @Test func deleteRowsDeletesAnObjectTheContextHandedOutAsDeleteDoes() async throws {
        let (container, keys) = try await storedEntries(3)
        let worker = container.newBackgroundContext()
        let primaryKey = try #require(keys[2])
        let deleted = try await worker.perform { () throws -> Bool in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 2")
            let object = try #require(try worker.fetch(request).first)
            worker.deleteRows(entity: "JournalEntry", primaryKeys: [primaryKey])
            let deleted = object.isDeleted
            try worker.save()
            return deleted
        }
        #expect(deleted)
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 2)
    }
}
