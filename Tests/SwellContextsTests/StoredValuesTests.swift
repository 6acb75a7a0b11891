import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// `storedValues(forKeys:)`: the stored object of a key, only when no unsaved change concerns it.
@Suite(.onEveryStore) struct StoredValuesTests {
    let directory = TemporaryDirectory()

    @Test func onlyKeysNoLevelConcernsGiveTheirStoredValues() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        try await container.writerContext.perform {
            for id in 1...4 { _ = insertEntry(container.writerContext, id: id, rating: id) }
            try container.writerContext.save()
        }
        // Key 2's object changed in the view, key 5 is new in the view, key 3 changed in the worker itself.
        let view = container.viewContext
        try await view.perform {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 2")
            try view.fetch(request).first?["rating"] = 9
            _ = insertEntry(view, id: 5)
            try view.save()
        }
        let worker = container.newBackgroundContext()
        let found = try await worker.perform { () throws -> [[StoreValue]: [StoreValue]] in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 3")
            try worker.fetch(request).first?["rating"] = 7
            let keys: [[StoreValue]] = (1...6).map { [.integer(Int64($0))] }
            return try worker.storedValues(forKeys: keys, entity: journalEntity)
        }
        #expect(Set(found.keys) == [[.integer(1)], [.integer(4)]])
        #expect(found[[.integer(4)]]?[6] == .integer(4))
    }
}
