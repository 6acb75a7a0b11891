import Foundation
import Testing
@testable import SwellStore

/// A JournalEntry row as `insertRow` takes it (attribute order: id, date, height, period, wind, location, rating).
func journalRow(_ id: Int64, location: String? = nil, rating: Int64? = nil) -> [StoreValue] {
    [.integer(id), .real(1_700_000_000), .null, .null, .null, location.map(StoreValue.text) ?? .null, rating.map(StoreValue.integer) ?? .null]
}

/// Inserts rows with `insertRow` into a new child of the view context and saves it into the view context.
@discardableResult
func insertRows(_ container: PersistentContainer, _ rows: [[StoreValue]]) async throws -> ContextDidSaveChanges {
    let worker = container.newBackgroundContext()
    return try await worker.perform {
        for row in rows { worker.insertRow(entity: journalEntity, values: row) }
        return try worker.saveReturningChanges()
    }
}

/// `SELECT <columns> FROM <table> ORDER BY <order>` on the store file, through its own connection.
func storedRows(_ url: URL, _ sql: String, _ arguments: [StoreValue] = []) throws -> [[StoreValue]] {
    try SQLiteConnection(path: url.path, mode: .readOnly).query(sql, arguments)
}

/// Every JournalEntry in a context as key → object ID number, with its location and rating.
func entriesByKey(_ context: ManagedObjectContext) throws -> [Int: (id: Int64, location: String?, rating: Int?)] {
    try context.performAndWait {
        var result: [Int: (id: Int64, location: String?, rating: Int?)] = [:]
        for entry in try context.fetch(FetchRequest(entityName: "JournalEntry")) {
            result[entry["id"] as! Int] = (entry.objectID.primaryKey, entry["location"] as? String, entry["rating"] as? Int)
        }
        return result
    }
}

/// Issue 9: an entity keyed by one required integer attribute keeps it as the table's
/// rowid; rows inserted with `insertRow` take their key as their ID.
@Suite struct RowidKeyTests {
    let directory = TemporaryDirectory()

    @Test func anIntegerKeyIsTheTablesRowidAndOtherKeysKeepTheirIndex() throws {
        let tag = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)], uniquenessConstraint: ["label"])
        let reading = EntityDescription(name: "Reading", attributes: [AttributeDescription(name: "seq", type: .integer, isOptional: true)],
                                        uniquenessConstraint: ["seq"])
        let pair = EntityDescription(name: "Pair", attributes: [AttributeDescription(name: "a", type: .integer), AttributeDescription(name: "b", type: .integer)],
                                     uniquenessConstraint: ["a", "b"])
        let model = ManagedObjectModel(entities: [journalEntity, noteEntity, tag, reading, pair])
        let container = try makeContainer(directory, model: model)
        let url = container.storeURL
        func columns(_ table: String) throws -> [[StoreValue]] {
            try storedRows(url, "SELECT name, type, pk FROM pragma_table_info(?)", [.text(table)])
        }
        func indexes(_ table: String) throws -> [[StoreValue]] {
            try storedRows(url, "SELECT name, \"unique\", partial FROM pragma_index_list(?) ORDER BY name", [.text(table)])
        }
        #expect(try columns("JournalEntry") == [
            [.text("id"), .text("INTEGER"), .integer(1)], [.text("date"), .text("REAL"), .integer(0)],
            [.text("height"), .text("TEXT"), .integer(0)], [.text("period"), .text("TEXT"), .integer(0)],
            [.text("wind"), .text("TEXT"), .integer(0)], [.text("location"), .text("TEXT"), .integer(0)],
            [.text("rating"), .text("INTEGER"), .integer(0)], [.text("_pk"), .text("INTEGER"), .integer(0)],
        ])
        // One b-tree for the rows (keyed by id); only IDs apart from their key are indexed.
        #expect(try indexes("JournalEntry") == [[.text("swell_JournalEntry_pk"), .integer(1), .integer(1)]])
        #expect(try storedRows(url, "SELECT name FROM pragma_index_info('swell_JournalEntry_pk')") == [[.text("_pk")]])
        for (table, index) in [("Tag", "swell_Tag_key"), ("Reading", "swell_Reading_key"), ("Pair", "swell_Pair_key")] {
            #expect(try columns(table).first == [.text("_pk"), .text("INTEGER"), .integer(1)], "\(table)")
            #expect(try indexes(table) == [[.text(index), .integer(1), .integer(0)]], "\(table)")
        }
        #expect(try columns("Note").first == [.text("_pk"), .text("INTEGER"), .integer(1)])
        #expect(try indexes("Note").isEmpty)
        let metadata = try storedRows(url, "SELECT key, value FROM swell_metadata WHERE key IN ('format_version', 'rowid_columns') ORDER BY key")
        #expect(metadata == [[.text("format_version"), .text("2")],
                             [.text("rowid_columns"), .text(#"{"JournalEntry":"id","Note":"_pk","Pair":"_pk","Reading":"_pk","Tag":"_pk"}"#)]])
    }

    @Test func anObjectInsertedThroughTheAPIKeepsItsIDWhenItsKeyIsSetLater() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let (before, afterChildSave) = try await worker.perform { () throws -> (ObjectID, ObjectID) in
            let entry = worker.insertNewObject(forEntityName: "JournalEntry")
            let before = entry.objectID
            entry["date"] = Date(timeIntervalSince1970: 0)
            entry["location"] = "Rockaway"
            entry["id"] = Int(before.primaryKey) + 1000
            try worker.save()
            return (before, entry.objectID)
        }
        #expect(before == afterChildSave)
        let view = container.viewContext
        let inView = try await view.perform { try view.existingObject(with: before)["id"] as? Int }
        #expect(inView == Int(before.primaryKey) + 1000)
        try await container.saveToDisk()
        let observer = try makeRootContext(at: container.storeURL)
        let (location, fetched) = try observer.performAndWait { () throws -> (String?, ObjectID?) in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == %@", Int(before.primaryKey) + 1000)
            return (try observer.existingObject(with: before)["location"] as? String, try observer.fetch(request).first?.objectID)
        }
        #expect(location == "Rockaway")
        #expect(fetched == before)
        #expect(try storedRows(container.storeURL, "SELECT _pk FROM JournalEntry") == [[.integer(before.primaryKey)]])
    }

    @Test func aKeyChangeMovesTheRowAndKeepsItsID() async throws {
        let container = try makeContainer(directory)
        try await insertRows(container, [journalRow(1), journalRow(2), journalRow(3, location: "three")])
        try await container.saveToDisk()
        let view = container.viewContext
        func setKey(_ from: Int, _ to: Int) async throws {
            try await view.perform {
                var request = FetchRequest(entityName: "JournalEntry")
                request.predicate = FetchPredicate(format: "id == %@", from)
                try #require(try view.fetch(request).first)["id"] = to
            }
            try await container.saveToDisk()
        }
        try await setKey(2, 200)
        #expect(try storedRows(container.storeURL, "SELECT id, _pk FROM JournalEntry ORDER BY id")
            == [[.integer(1), .null], [.integer(3), .null], [.integer(200), .integer(2)]])
        #expect(try entriesByKey(try makeRootContext(at: container.storeURL)).mapValues(\.id) == [1: 1, 3: 3, 200: 2])
        // Back to its ID: the row is keyed by its ID again, with nothing in `_pk`.
        try await setKey(200, 2)
        #expect(try storedRows(container.storeURL, "SELECT id, _pk FROM JournalEntry ORDER BY id")
            == [[.integer(1), .null], [.integer(2), .null], [.integer(3), .null]])
        // A root context moving an object onto another's key: the two become one by its policy.
        let writer = container.writerContext
        writer.mergePolicy = .objectTrump
        try await writer.perform {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 1")
            let entry = try #require(try writer.fetch(request).first)
            entry["id"] = 3
            entry["rating"] = 5
            try writer.save()
        }
        let stored = try storedRows(container.storeURL, "SELECT id, _pk, location, rating FROM JournalEntry ORDER BY id")
        #expect(stored == [[.integer(2), .null, .null, .null], [.integer(3), .null, .text("three"), .integer(5)]])
    }

    @Test func lookUpsByIDKeyAndKeyOrderUseTheRowidAndThePartialIndexWithoutSorting() throws {
        let container = try makeContainer(directory)
        let connection = try SQLiteConnection(path: container.storeURL.path, mode: .readOnly)
        let layout = TableLayout(journalEntity)
        func plan(_ sql: String) throws -> String {
            try connection.query("EXPLAIN QUERY PLAN " + sql).compactMap { row in
                if case .text(let detail)? = row.last { return detail } else { return nil }
            }.joined(separator: "; ")
        }
        let select = "SELECT \(layout.id), location FROM \(layout.table)"
        let byID = try plan("\(select) WHERE \(layout.idEquals(parameter: 1))")
        #expect(byID.contains("MULTI-INDEX OR") && byID.contains("INTEGER PRIMARY KEY (rowid=?)") && byID.contains("INDEX swell_JournalEntry_pk (_pk=?)"))
        let byIDs = try plan("\(select) WHERE \(layout.idIn(jsonParameter: 1))")
        #expect(byIDs.contains("INTEGER PRIMARY KEY (rowid=?)") && byIDs.contains("INDEX swell_JournalEntry_pk (_pk=?)"), "\(byIDs)")
        #expect(try plan("\(select) WHERE \"id\" = ?") == "SEARCH JournalEntry USING INTEGER PRIMARY KEY (rowid=?)")
        // Updates and deletes by ID: the row keyed by its ID first, then the one whose ID is in `_pk`.
        #expect(try plan("UPDATE \(layout.table) SET rating = ?1 WHERE \"id\" = ?2 AND \"_pk\" IS NULL")
            == "SEARCH JournalEntry USING INTEGER PRIMARY KEY (rowid=?)")
        #expect(try plan("DELETE FROM \(layout.table) WHERE \"_pk\" = ?1") == "SEARCH JournalEntry USING INDEX swell_JournalEntry_pk (_pk=?)")
        let keys = try plan("\(select) WHERE \"id\" IN (SELECT value FROM json_each(?))")
        #expect(keys.contains("SEARCH JournalEntry USING INTEGER PRIMARY KEY (rowid=?)"))
        let displaced = try plan("SELECT \"_pk\", location FROM \(layout.table) WHERE \"_pk\" IN (SELECT value FROM json_each(?))")
        #expect(displaced.contains("SEARCH JournalEntry USING INDEX swell_JournalEntry_pk (_pk=?)"), "\(displaced)")
        #expect(try plan("\(select) ORDER BY \"id\" ASC, \(layout.tieBreak) ASC") == "SCAN JournalEntry")
        #expect(try plan("\(select) ORDER BY \(layout.tieBreak) ASC") == "SCAN JournalEntry")
        #expect(try plan("\(select) ORDER BY \"id\" DESC, \(layout.tieBreak) ASC") == "SCAN JournalEntry")
    }
}
