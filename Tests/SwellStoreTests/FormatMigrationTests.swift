import Foundation
import Testing
@testable import SwellStore

/// Store format 2 (issue 9): a store written by format 1 (every table keyed by `_pk`, the key
/// in a unique index) opens with every row and object ID intact, its integer-keyed tables
/// rebuilt in place, and takes writes. The fixture's story is in fixtures/stores/README.md.
@Suite struct FormatMigrationTests {
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

    @Test func aKeyColumnHoldingSomethingOtherThanIntegersFailsTheMigrationNamingIt() throws {
        let url = try fixtureCopy()
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute("UPDATE Spot SET id = 'one' WHERE _pk = 1")
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: Self.model).addPersistentStore(at: url)
        } throws: { error in
            guard case StoreError.migrationFailed(let entity, let attribute, let reason) = error else { return false }
            return entity == "Spot" && attribute == "id" && reason.contains("1 stored row")
        }
        // Nothing changed: the store is still format 1.
        #expect(try storedRows(url, "SELECT value FROM swell_metadata WHERE key = 'format_version'") == [[.text("1")]])
    }
}
