import Foundation
import SwellStore
import SwellStoreTestSupport
import Testing

/// `BulkSession`, the public face of the row-level work `swell` does (DocC "Bulk sessions"),
/// used as an app would: only what `import SwellStore` offers.
@Suite(.onEveryStore) struct BulkSessionTests {
    let directory = TemporaryDirectory()

    private func row(_ entity: EntityDescription, id: Int, location: String?) -> [StoreValue] {
        var values = [StoreValue](repeating: .null, count: entity.attributes.count)
        values[entity.attributes.firstIndex { $0.name == "id" }!] = .integer(Int64(id))
        values[entity.attributes.firstIndex { $0.name == "date" }!] =
            StoreValue(swiftValue: Date(timeIntervalSince1970: 1_700_000_000), for: .date)!
        if let location { values[entity.attributes.firstIndex { $0.name == "location" }!] = .text(location) }
        return values
    }

    /// Saves a background context, then the view and writer contexts, to the store.
    private func saveUp(_ worker: ManagedObjectContext, in container: PersistentContainer) throws -> ContextDidSaveChanges {
        let changes = try worker.performAndWait { try BulkSession(worker).save() }
        try container.viewContext.performAndWait { try container.viewContext.save() }
        try container.writerContext.performAndWait { try container.writerContext.save() }
        return changes
    }

    @Test func rowsMoveUpTheStackAndMergeByKeyUnderTheParentsPolicy() throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let first = container.newBackgroundContext()
        let inserted = try first.performAndWait {
            let session = BulkSession(first)
            let entity = try session.entity(named: "JournalEntry")
            session.reserveRows(3, entity: entity)
            for id in 1...3 { session.insertRow(entity: entity, keyIndices: entity.keyIndices, values: row(entity, id: id, location: "A\(id)")) }
            return entity
        }
        #expect(try saveUp(first, in: container).inserted.count == 3)

        let second = container.newBackgroundContext()
        second.performAndWait {
            _ = BulkSession(second).insertRow(entity: inserted, values: row(inserted, id: 2, location: "B2"))
        }
        _ = try saveUp(second, in: container)
        #expect(try storedRowCount(container.storeURL) == 3, "id 2 merged into the stored object, not a second row")
        let reader = try makeRootContext(at: container.storeURL)
        let locations = try reader.performAndWait {
            var found: [Int64: StoreValue] = [:]
            let index = inserted.attributes.firstIndex { $0.name == "location" }!
            try BulkSession(reader).enumerateRows(FetchRequest(entityName: "JournalEntry")) { _, values in
                if case .integer(let id) = values[0] { found[id] = values[index] }
            }
            return found
        }
        #expect(locations == [1: .text("A1"), 2: .text("B2"), 3: .text("A3")])
    }

    @Test func storedRowsLeaveOutTheKeysAnUnsavedChangeConcerns() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            let session = BulkSession(worker)
            let entity = try session.entity(named: "JournalEntry")
            for id in 1...2 { session.insertRow(entity: entity, values: row(entity, id: id, location: "here")) }
        }
        _ = try saveUp(worker, in: container)

        let other = container.newBackgroundContext()
        let (keys, current) = try other.performAndWait {
            let session = BulkSession(other)
            let entity = try session.entity(named: "JournalEntry")
            let stored = try session.storedRows(forKeys: [[.integer(1)], [.integer(2)], [.integer(9)]], entity: entity)
            let location = entity.attributes.firstIndex { $0.name == "location" }!
            var changed = stored[[.integer(2)]]!.values
            changed[location] = .text("moved")
            session.updateRow(entity: entity, primaryKey: stored[[.integer(2)]]!.primaryKey, values: changed, indices: [location])
            let after = try session.storedRows(forKeys: [[.integer(1)], [.integer(2)]], entity: entity)
            return (Set(after.keys), session.currentValues(entity: entity, primaryKey: stored[[.integer(2)]]!.primaryKey)[location])
        }
        #expect(keys == [[.integer(1)]], "key 2 has an unsaved change here; key 9 is stored nowhere")
        #expect(current == .text("moved"))
    }

    @Test func theStoreIsReachableAsItsClassUntilTheCoordinatorCloses() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        #expect(coordinator.persistentStore != nil)
        let isSQLite = coordinator.persistentStore is SQLiteStore
        #expect(isSQLite == container.storeURL.isFileURL)
        try coordinator.close()
        #expect(coordinator.persistentStore == nil)
    }
}
