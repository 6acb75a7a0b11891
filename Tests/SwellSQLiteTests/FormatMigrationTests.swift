import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store format 2 (issue 9): a store written by format 1 (every table keyed by `_pk`, the key
/// in a unique index) opens with every row and object ID intact, its integer-keyed tables
/// rebuilt in place, and takes writes. The fixture's story is in fixtures/stores/README.md.
@Suite(.onEveryStore) struct FormatMigrationTests {
    let directory = TemporaryDirectory()

    static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Spot", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "rating", type: .integer, isOptional: true),
            AttributeDescription(name: "surveyed", type: .date, isOptional: true),
        ], uniquenessConstraint: ["id"]),
        EntityDescription(name: "Tag", attributes: [
            AttributeDescription(name: "label", type: .string), AttributeDescription(name: "uses", type: .integer, isOptional: true),
        ], uniquenessConstraint: ["label"]),
        EntityDescription(name: "Reading", attributes: [
            AttributeDescription(name: "seq", type: .integer, isOptional: true), AttributeDescription(name: "value", type: .double),
        ], uniquenessConstraint: ["seq"]),
        EntityDescription(name: "Log", attributes: [AttributeDescription(name: "line", type: .string)]),
    ])

    static let far: Int64 = 1 << 40

    /// A copy of fixtures/stores/format1.sqlite (a store is migrated in place: never open the fixture itself).
    private func fixtureCopy() throws -> URL {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/stores/format1.sqlite")
        let url = directory.file("format1.sqlite")
        try FileManager.default.copyItem(at: fixture, to: url)
        return url
    }

    private func spotID(_ key: Int64) -> ObjectID {
        ObjectID(entityName: "Spot", primaryKey: key, storeIdentifier: "B18649A1-BB07-4608-AF67-FB4454551916")
    }

    /// Every Spot as (ID, name, key, rating), by key, through a context.
    private func spots(_ context: ManagedObjectContext) throws -> [[String]] {
        try context.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            return try context.fetch(request).map {
                ["\($0.objectID.primaryKey)", $0["name"] as! String, "\($0["id"] as! Int)", ($0["rating"] as? Int).map(String.init) ?? "-"]
            }
        }
    }

    @Test func aFormat1StoreOpensWithEveryRowAndIDIntact() throws {
        let url = try fixtureCopy()
        let context = try makeRootContext(at: url, model: Self.model)
        #expect(try storedRows(url, "SELECT id, _pk FROM Spot ORDER BY id") == [
            [.integer(-3), .integer(9)], [.integer(1), .null], [.integer(2), .null], [.integer(3), .null], [.integer(4), .integer(6)],
            [.integer(5), .null], [.integer(10), .integer(4)], [.integer(70), .integer(7)], [.integer(Self.far), .integer(10)],
        ])
        #expect(try spots(context) == [
            ["9", "Below Zero", "-3", "-"], ["1", "Mavericks", "1", "5"], ["2", "Linda Mar", "2", "-"], ["3", "Ocean Beach", "3", "3"],
            ["6", "Rincon", "4", "5"], ["5", "Pleasure Point", "5", "-"], ["4", "Steamer Lane", "10", "4"], ["7", "Malibu", "70", "2"],
            ["10", "Far Away", "\(Self.far)", "1"],
        ])
        try context.performAndWait { () throws -> Void in
            // ID 4 is the object keyed 10, not the one keyed 4; ID 8 was deleted.
            #expect(try context.existingObject(with: spotID(4))["name"] as? String == "Steamer Lane")
            #expect(try context.existingObject(with: spotID(6))["name"] as? String == "Rincon")
            #expect(try context.existingObject(with: spotID(10))["surveyed"] as? Date == Date(timeIntervalSince1970: 1_714_545_000))
            #expect(throws: StoreError.self) { try context.existingObject(with: spotID(8)) }
            #expect(try context.storeMetadata(forKey: "fixture.note") == "kept")
        }
        // The other tables are untouched: `_pk` is still their rowid and their key keeps its index.
        #expect(try storedRows(url, "SELECT name, pk FROM pragma_table_info('Spot') WHERE pk > 0 OR name = '_pk' ORDER BY cid")
            == [[.text("id"), .integer(1)], [.text("_pk"), .integer(0)]])
        #expect(try storedRows(url, "SELECT name, partial FROM pragma_index_list('Spot')") == [[.text("swell_Spot_pk"), .integer(1)]])
        #expect(try storedRows(url, "SELECT _pk, label, uses FROM Tag ORDER BY _pk")
            == [[.integer(1), .text("reef"), .integer(3)], [.integer(2), .text("point"), .integer(1)], [.integer(3), .text("beach"), .integer(7)]])
        for (table, index) in [("Tag", "swell_Tag_key"), ("Reading", "swell_Reading_key")] {
            #expect(try storedRows(url, "SELECT name FROM pragma_index_list(?)", [.text(table)]) == [[.text(index)]])
        }
        #expect(try storedRows(url, "SELECT _pk, seq, value FROM Reading ORDER BY _pk") == [[.integer(1), .integer(1), .real(2.5)], [.integer(2), .null, .real(0.5)]])
        #expect(try storedRows(url, "SELECT _pk, line FROM Log") == [[.integer(1), .text("first")]])
        #expect(try storedRows(url, "SELECT key, value FROM swell_metadata WHERE key != 'model' ORDER BY key") == [
            [.text("format_version"), .text("2")],
            [.text("rowid_columns"), .text(#"{"Log":"_pk","Reading":"_pk","Spot":"id","Tag":"_pk"}"#)],
            [.text("store_uuid"), .text("B18649A1-BB07-4608-AF67-FB4454551916")],
        ])
        #expect(try storedRows(url, "PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test func aMigratedStoreTakesInsertsUpdatesDeletesAndKeyChanges() async throws {
        let url = try fixtureCopy()
        let container = PersistentContainer(name: "format1", managedObjectModel: Self.model, storeURL: url)
        try container.loadPersistentStores()
        let view = container.viewContext
        view.mergePolicy = .objectTrump
        let spot = Self.model.entitiesByName["Spot"]!
        let worker = container.newBackgroundContext()
        let changes = try await worker.perform { () throws -> ContextDidSaveChanges in
            // Key 6 is Rincon's ID (kept in `_pk`): the row takes a new ID. Key 8 is free (its object was deleted).
            // Key 4 is Rincon's key: an upsert of Rincon.
            worker.insertRow(entity: spot, values: [.text("Six"), .integer(6), .null, .null])
            worker.insertRow(entity: spot, values: [.text("Eight"), .integer(8), .null, .null])
            worker.insertRow(entity: spot, values: [.text("Rincon"), .integer(4), .integer(1), .null])
            return try worker.saveReturningChanges()
        }
        let six = try #require(changes.merged[spotID(6)])
        #expect(six.primaryKey > Self.far)
        #expect(changes.merged[spotID(4)] == (spotID(6)))
        #expect(changes.inserted == [six, spotID(8)])
        let added = try await view.perform { () throws -> ObjectID in
            let added = view.insertNewObject(forEntityName: "Spot")
            added["name"] = "New"
            added["id"] = 11
            view.delete(try view.existingObject(with: spotID(4)))
            try view.existingObject(with: spotID(7))["id"] = 7
            return added.objectID
        }
        #expect(added.primaryKey > Self.far && added != six)
        try await container.saveToDisk()
        #expect(try storedRows(url, "SELECT id, _pk, name, rating FROM Spot ORDER BY id") == [
            [.integer(-3), .integer(9), .text("Below Zero"), .null],
            [.integer(1), .null, .text("Mavericks"), .integer(5)],
            [.integer(2), .null, .text("Linda Mar"), .null],
            [.integer(3), .null, .text("Ocean Beach"), .integer(3)],
            [.integer(4), .integer(6), .text("Rincon"), .integer(1)],
            [.integer(5), .null, .text("Pleasure Point"), .null],
            [.integer(6), .integer(six.primaryKey), .text("Six"), .null],
            [.integer(7), .null, .text("Malibu"), .integer(2)],
            [.integer(8), .null, .text("Eight"), .null],
            [.integer(11), .integer(added.primaryKey), .text("New"), .null],
            [.integer(Self.far), .integer(10), .text("Far Away"), .integer(1)],
        ])
        // Reopened (a new coordinator): the same objects under the same IDs, and new IDs above them all.
        let reopened = try makeRootContext(at: url, model: Self.model)
        #expect(try spots(reopened).map { [$0[0], $0[2]] } == [
            ["9", "-3"], ["1", "1"], ["2", "2"], ["3", "3"], ["6", "4"], ["5", "5"], ["\(six.primaryKey)", "6"], ["7", "7"], ["8", "8"],
            ["\(added.primaryKey)", "11"], ["10", "\(Self.far)"],
        ])
        let next = try reopened.performAndWait { () throws -> Int64 in
            let object = reopened.insertNewObject(forEntityName: "Spot")
            object["name"] = "Newer"
            object["id"] = 12
            try reopened.save()
            return object.objectID.primaryKey
        }
        #expect(next > max(six.primaryKey, added.primaryKey))
        #expect(try storedRows(url, "PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test func aKeyColumnHoldingSomethingOtherThanIntegersFailsTheMigrationNamingIt() throws {
        let url = try fixtureCopy()
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute("UPDATE Spot SET id = 'one' WHERE _pk = 1")
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: Self.model).addPersistentStore(at: url)
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .migrationFailed else { return false }
            return error.entity == "Spot" && error.attribute == "id" && error.description.contains("1 stored row")
        }
        // Nothing changed: the store is still format 1.
        #expect(try storedRows(url, "SELECT value FROM swell_metadata WHERE key = 'format_version'") == [[.text("1")]])
    }
}
