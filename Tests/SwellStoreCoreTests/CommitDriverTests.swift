import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The one commit procedure (`CommitDriver`) on every store (`.onEveryStore`): column
/// updates write only their masks' attributes and are reported as updated with those names;
/// a step that fails rolls back every step before it, metadata included.
@Suite(.onEveryStore) struct CommitDriverTests {
    private func stored(_ container: PersistentContainer) throws -> [Int: (location: String?, rating: Int?)] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var rows: [Int: (location: String?, rating: Int?)] = [:]
            for object in try context.fetch(FetchRequest(entityName: "JournalEntry")) {
                rows[object["id"] as! Int] = (object["location"] as? String, object["rating"] as? Int)
            }
            return rows
        }
    }

    @Test func columnUpdatesWriteTheirMasksOnlyAndARollbackUndoesEveryStep() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "driver")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let insert = BatchInsertRequest(entityName: "JournalEntry", objects: (1...3).map {
                ["id": $0, "date": Date(timeIntervalSince1970: 0), "location": "L\($0)", "rating": $0]
            })
            _ = try context.execute(insert)
        }
        let coordinator = container.persistentStoreCoordinator
        let store = try coordinator.store
        let ids = try context.performAndWait { () throws -> [Int: Int64] in
            var ids: [Int: Int64] = [:]
            for object in try context.fetch(FetchRequest(entityName: "JournalEntry")) { ids[object["id"] as! Int] = object.objectID.primaryKey }
            return ids
        }
        let entity = journalEntity
        let position = { (name: String) in entity.attributes.firstIndex { $0.name == name }! }

        // Rows 0 and 1 of the columns update the entries 1 and 2: location only for 1, location and rating for 2.
        var columns = BatchColumns()
        let id = columns.integers("id"), location = columns.strings("location"), rating = columns.integers("rating")
        for (key, place, stars) in [(1, "New 1", 9), (2, "New 2", 8)] {
            columns.append(Int64(key), to: id)
            columns.append(place, to: location)
            columns.append(Int64(stars), to: rating)
        }
        var update = ColumnUpdate(entity: entity.name, columns: columns, positions: ["id", "location", "rating"].map(position),
                                  attributeCount: entity.attributes.count)
        var locationOnly = AttributeMask.empty
        locationOnly.insert(position("location"))
        var both = locationOnly
        both.insert(position("rating"))
        update.append(row: 0, primaryKey: ids[1]!, mask: locationOnly)
        update.append(row: 1, primaryKey: ids[2]!, mask: both)
        let result = try store.commit(StoreChangeSet(operations: [], columnUpdates: [update], metadata: ["driver": "1"],
                                                     mergePolicy: .mergeByPropertyObjectTrump))
        let updated = Dictionary(uniqueKeysWithValues: result.updated.map { ($0.key.primaryKey, $0.value) })
        #expect(updated == [ids[1]!: ["location"], ids[2]!: ["location", "rating"]])
        var rows = try stored(container)
        #expect(rows[1]?.location == "New 1" && rows[1]?.rating == 1, "the rating was not in entry 1's mask")
        #expect(rows[2]?.location == "New 2" && rows[2]?.rating == 8)
        #expect(rows[3]?.location == "L3" && rows[3]?.rating == 3)
        #expect(try store.read { try $0.metadata(forKey: "driver") } == "1")

        // A column insert, then an operation that fails: nothing of the commit stays.
        var fresh = BatchColumns()
        let freshID = fresh.integers("id"), freshDate = fresh.dates("date")
        fresh.append(Int64(99), to: freshID)
        fresh.append(Date(timeIntervalSince1970: 0), to: freshDate)
        let insert = ColumnInsert(entity: entity.name, columns: fresh, positions: [position("id"), position("date")], rows: [0],
                                  ids: [try store.allocateIDs(for: entity.name, count: 1).lowerBound], attributeCount: entity.attributes.count)
        let failing = StoreChangeSet.Operation(entity: "NoSuchEntity", primaryKey: 1,
                                               row: PendingRow(kind: .deleted, values: [], mask: .empty, sequence: 0))
        #expect(throws: StoreError.self) {
            try store.commit(StoreChangeSet(operations: [failing], columnInserts: [insert], metadata: ["driver": "2"],
                                            mergePolicy: .mergeByPropertyObjectTrump))
        }
        rows = try stored(container)
        #expect(rows[99] == nil, "the column insert before the failing step was rolled back")
        #expect(rows.count == 3)
        #expect(try store.read { try $0.metadata(forKey: "driver") } == "1")
        // The failed commit's transaction is over: the next one commits.
        _ = try store.commit(StoreChangeSet(operations: [], metadata: ["driver": "3"], mergePolicy: .mergeByPropertyObjectTrump))
        #expect(try store.read { try $0.metadata(forKey: "driver") } == "3")
    }
}
