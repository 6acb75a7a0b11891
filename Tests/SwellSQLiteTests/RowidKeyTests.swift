import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A JournalEntry row as `insertRow` takes it (attribute order: id, date, height, period, wind, location, rating).
func journalRow(_ id: Int64, location: String? = nil, rating: Int64? = nil) -> [StoreValue] {
    [.integer(id), .real(1_700_000_000), .null, .null, .null, location.map(StoreValue.text) ?? .null, rating.map(StoreValue.integer) ?? .null]
}

/// Inserts rows with `insertRow` into a new child of the view context and saves it into the view context.
/// Issue 9: an entity keyed by one required integer attribute keeps it as the table's
/// rowid; rows inserted with `insertRow` take their key as their ID.
@Suite(.onEveryStore) struct RowidKeyTests {
    let directory = TemporaryDirectory()

    @Test(.sqliteStoreOnly) func anIntegerKeyIsTheTablesRowidAndOtherKeysKeepTheirIndex() throws {
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

    @Test(.sqliteStoreOnly) func sqlite3ReadsTheRowsByKeyAndIDsApartFromTheirKeyAreInPK() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .objectTrump
        try await insertRows(container, [journalRow(3, location: "a"), journalRow(5, location: "b"), journalRow(9)])
        let view = container.viewContext
        let apiID = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 20, location: "api")
            try view.save()
            return entry.objectID
        }
        try await container.saveToDisk()
        #expect(apiID.primaryKey != 20)
        let row = try storedRows(container.storeURL, "SELECT * FROM JournalEntry WHERE id = 5")
        #expect(row == [[.integer(5), .real(1_700_000_000), .null, .null, .null, .text("b"), .null, .null]])
        #expect(try storedRows(container.storeURL, "SELECT id, _pk FROM JournalEntry ORDER BY id")
            == [[.integer(3), .null], [.integer(5), .null], [.integer(9), .null], [.integer(20), .integer(apiID.primaryKey)]])
        let observer = try makeRootContext(at: container.storeURL)
        let entries = try entriesByKey(observer)
        #expect(entries.mapValues(\.id) == [3: 3, 5: 5, 9: 9, 20: apiID.primaryKey])
        let byID = try observer.performAndWait { try observer.existingObject(with: apiID)["location"] as? String }
        #expect(byID == "api")
    }

    @Test(.sqliteStoreOnly) func anObjectInsertedThroughTheAPIKeepsItsIDWhenItsKeyIsSetLater() async throws {
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

    @Test(.sqliteStoreOnly) func insertRowTakesTheKeyAsTheIDInAChildContext() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .objectTrump
        let worker = container.newBackgroundContext()
        let (ids, changes) = try await worker.perform { () throws -> ([Int64], ContextDidSaveChanges) in
            worker.insertRow(entity: journalEntity, values: journalRow(42, location: "first"))
            // The same key again in one context: this level has ID 42, so the row takes a new ID.
            worker.insertRow(entity: journalEntity, values: journalRow(42, location: "second"))
            worker.insertRow(entity: journalEntity, values: journalRow(-7))
            let ids = try worker.fetch(FetchRequest(entityName: "JournalEntry")).map(\.objectID.primaryKey)
            return (ids, try worker.saveReturningChanges())
        }
        #expect(ids.count == 3)
        #expect(ids.contains(42) && ids.contains(-7))
        let second = try #require(ids.first { $0 != 42 && $0 != -7 })
        #expect(changes.merged.map { [$0.key.primaryKey, $0.value.primaryKey] } == [[second, 42]])
        #expect(Set(changes.inserted.map(\.primaryKey)) == [42, -7])
        // A root context's rows get new IDs: nothing checks a key taken as an ID before its commit.
        let writer = container.writerContext
        try await writer.perform {
            writer.insertRow(entity: journalEntity, values: journalRow(77))
            try writer.save()
        }
        try await container.saveToDisk()
        let stored = try storedRows(container.storeURL, "SELECT id, _pk, location FROM JournalEntry ORDER BY id")
        #expect(stored.count == 3)
        #expect(stored[0] == [.integer(-7), .null, .null])
        #expect(stored[1] == [.integer(42), .null, .text("second")])
        #expect(stored[2][0] == .integer(77) && stored[2][1] != .null)
    }

    @Test(.sqliteStoreOnly, arguments: [MergePolicy.error, .rollback, .objectTrump, .overwrite, .storeTrump], [false, true])
    func twoChildrenInsertingOneKeyAreOneObjectByThePolicy(policy: MergePolicy, firstOnDisk: Bool) async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await insertRows(container, [journalRow(7, location: "first")])
        if firstOnDisk { try await container.saveToDisk() }
        view.mergePolicy = policy
        let second = container.newBackgroundContext()
        let recorder = SaveRecorder(second)
        let outcome = await second.perform { () -> Result<ContextDidSaveChanges, StoreError> in
            second.insertRow(entity: journalEntity, values: journalRow(7, location: "second", rating: 3))
            do { return .success(try second.saveReturningChanges()) } catch { return .failure(error as! StoreError) }
        }
        let seven = ObjectID(entityName: "JournalEntry", primaryKey: 7, storeIdentifier: container.persistentStoreCoordinator.storeIdentifier)
        switch outcome {
        case .failure(let error):
            #expect(policy == .error)
            guard error.kind == .constraintConflict, let entity = error.entity else {
                Issue.record("expected a constraint conflict, got \(error)")
                return
            }
            #expect(entity == "JournalEntry" && error.key == ["id": "7"])
            #expect(error.objects == [seven])
            #expect(await second.perform { second.hasChanges })
        case .success(let changes):
            #expect(policy != .error)
            #expect(changes.merged == [seven: seven])
            #expect(changes.inserted.isEmpty)
            #expect(recorder.changes.first?.merged == [seven: seven])
        }
        try await container.saveToDisk()
        let expected: (String, Int?) = switch policy {
        case .error, .rollback: ("first", nil)
        case .mergeByPropertyObjectTrump, .overwrite: ("second", 3)
        case .mergeByPropertyStoreTrump: ("first", 3)
        }
        let entries = try entriesByKey(try makeRootContext(at: container.storeURL))
        #expect(entries.count == 1)
        #expect(entries[7]?.id == 7)
        #expect(entries[7]?.location == expected.0)
        #expect(entries[7]?.rating == expected.1)
        #expect(try storedRows(container.storeURL, "SELECT id, _pk FROM JournalEntry") == [[.integer(7), .null]])
    }

    @Test func aRowWhoseKeyIsAnotherObjectsIDTakesANewID() async throws {
        let url = directory.file("clash.sqlite")
        var container = PersistentContainer(name: "clash", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        try await insertRows(container, [journalRow(7, location: "seven")])
        let view = container.viewContext
        let madeID = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 500, location: "api")
            try view.save()
            return entry.objectID
        }
        try await container.saveToDisk()
        #expect(madeID.primaryKey >= ObjectIDSpace.rowidKeyedBase)
        // A store made before allocated IDs moved to the base: the API object's ID is 8, in `_pk`,
        // a number a row's key may take as its ID.
        try SQLiteConnection(path: url.path).execute("UPDATE JournalEntry SET _pk = 8 WHERE id = 500")
        let apiID = ObjectID(entityName: "JournalEntry", primaryKey: 8, storeIdentifier: madeID.storeIdentifier)
        container = PersistentContainer(name: "clash", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        let reopenedView = container.viewContext
        reopenedView.mergePolicy = .objectTrump
        // Clash with the store: key = the API object's ID (kept in its `_pk`).
        let storeClash = try await insertRows(container, [journalRow(apiID.primaryKey, location: "key is an ID")])
        let movedFromStore = try #require(storeClash.merged[apiID])
        #expect(movedFromStore != apiID)
        #expect(storeClash.inserted == [movedFromStore])
        // Clash at a level: object 7's key changes in the view context, then a row with key 7 arrives.
        try await reopenedView.perform {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 7")
            try #require(try reopenedView.fetch(request).first)["id"] = 70
        }
        let levelClash = try await insertRows(container, [journalRow(7, location: "new seven")])
        let seven = ObjectID(entityName: "JournalEntry", primaryKey: 7, storeIdentifier: apiID.storeIdentifier)
        let movedFromLevel = try #require(levelClash.merged[seven])
        #expect(levelClash.inserted == [movedFromLevel])
        // Clash with an unsaved object whose key changed: no other object has key 9, but one has ID 9.
        try await insertRows(container, [journalRow(9, location: "nine")])
        try await reopenedView.perform {
            let nine = ObjectID(entityName: "JournalEntry", primaryKey: 9, storeIdentifier: apiID.storeIdentifier)
            try reopenedView.existingObject(with: nine)["id"] = 90
        }
        let unsavedClash = try await insertRows(container, [journalRow(9, location: "new nine")])
        let nine = ObjectID(entityName: "JournalEntry", primaryKey: 9, storeIdentifier: apiID.storeIdentifier)
        let movedFromUnsaved = try #require(unsavedClash.merged[nine])
        try await container.saveToDisk()
        let stored = try storedRows(url, "SELECT id, _pk, location FROM JournalEntry ORDER BY id")
        #expect(stored == [
            [.integer(7), .integer(movedFromLevel.primaryKey), .text("new seven")],
            [.integer(apiID.primaryKey), .integer(movedFromStore.primaryKey), .text("key is an ID")],
            [.integer(9), .integer(movedFromUnsaved.primaryKey), .text("new nine")],
            [.integer(70), .integer(7), .text("seven")],
            [.integer(90), .integer(9), .text("nine")],
            [.integer(500), .integer(apiID.primaryKey), .text("api")],
        ])
        let observer = try makeRootContext(at: url)
        let (api, old7) = try observer.performAndWait {
            (try observer.existingObject(with: apiID)["location"] as? String, try observer.existingObject(with: seven)["id"] as? Int)
        }
        #expect(api == "api")
        #expect(old7 == 70)
    }

    @Test(.sqliteStoreOnly) func aKeyAnotherStackTookAsItsIDMeanwhileIsMergedAtTheCommit() async throws {
        let first = try makeContainer(directory, name: "shared")
        let second = PersistentContainer(name: "shared", managedObjectModel: journalModel, storeURL: first.storeURL)
        try second.loadPersistentStores()
        for container in [first, second] {
            container.viewContext.mergePolicy = .objectTrump
            container.writerContext.mergePolicy = .objectTrump
        }
        // Both stacks check key 7 against the store before either commits it.
        try await insertRows(first, [journalRow(7, location: "first")])
        let view = first.viewContext
        try await view.perform(schedule: .enqueued) { try view.save() }
        try await insertRows(second, [journalRow(7, location: "second")])
        try await second.saveToDisk()
        let writer = first.writerContext
        let recorder = SaveRecorder(writer)
        try await writer.perform { try writer.save() }
        let changes = try #require(recorder.changes.first)
        let seven = ObjectID(entityName: "JournalEntry", primaryKey: 7, storeIdentifier: first.persistentStoreCoordinator.storeIdentifier)
        #expect(changes.inserted.isEmpty)
        #expect(changes.merged == [seven: seven])
        #expect(changes.updated[seven]?.contains("location") == true)
        #expect(try storedRows(first.storeURL, "SELECT id, _pk, location FROM JournalEntry") == [[.integer(7), .null, .text("first")]])
    }

    @Test(.sqliteStoreOnly) func aKeyChangeMovesTheRowAndKeepsItsID() async throws {
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

    @Test(.sqliteStoreOnly) func deletesFindTheRowByItsIDNotByAKeyOfTheSameNumber() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        // IDs 1 and 2 swapped against their keys: ID 1 has key 2, ID 2 has key 1.
        let (a, b) = try await writer.perform { () throws -> (ObjectID, ObjectID) in
            let a = insertEntry(writer, id: 0, location: "a")
            let b = insertEntry(writer, id: 0, location: "b")
            a["id"] = Int(b.objectID.primaryKey)
            b["id"] = Int(a.objectID.primaryKey)
            try writer.save()
            return (a.objectID, b.objectID)
        }
        // Key 900 is below the allocated IDs (`ObjectIDSpace.rowidKeyedBase`), so the row takes it as its ID.
        try await insertRows(container, [journalRow(900, location: "nine hundred")])
        try await container.saveToDisk()
        try await writer.perform {
            writer.delete(try writer.existingObject(with: a))
            try writer.save()
        }
        #expect(try storedRows(container.storeURL, "SELECT id, _pk, location FROM JournalEntry ORDER BY id")
            == [[.integer(900), .null, .text("nine hundred")], [.integer(a.primaryKey), .integer(b.primaryKey), .text("b")]])
        let worker = container.newBackgroundContext()
        try await worker.perform {
            worker.deleteRows(entity: "JournalEntry", primaryKeys: [b.primaryKey, 900])
            try worker.save()
        }
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 0)
    }

    /// `ObjectIDSpace`: allocated IDs start at the base, above every key taken as an ID; a key
    /// at or above the base is stored with an allocated ID; keys near `Int64.max` never push
    /// the allocation into overflowing.
    @Test func allocatedIDsLiveAtTheBaseAndHugeKeysGetAllocatedIDs() async throws {
        let url = directory.file("huge.sqlite")
        var container = PersistentContainer(name: "huge", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        try await insertRows(container, [journalRow(.max), journalRow(.min), journalRow(1 << 62), journalRow(1 << 40)])
        let view = container.viewContext
        let first = await view.perform { insertEntry(view, id: 1).objectID.primaryKey }
        #expect(first >= ObjectIDSpace.rowidKeyedBase)
        try await container.saveToDisk()
        container = PersistentContainer(name: "huge", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        let reopened = container.viewContext
        let second = await reopened.perform { insertEntry(reopened, id: 2).objectID.primaryKey }
        #expect(second > first)
        try await container.saveToDisk()
        let ids = try entriesByKey(try makeRootContext(at: url)).mapValues(\.id)
        #expect(ids.count == 6)
        #expect(Set(ids.values).count == 6)
        #expect(ids[.min] == .min)
        #expect(ids[1 << 40] == 1 << 40)
        #expect(ids[1] == first)
        #expect(ids[2] == second)
        for key in [Int.max, 1 << 62] { #expect(ids[key].map { $0 >= ObjectIDSpace.rowidKeyedBase } == true, "\(key)") }
    }

    @Test(.sqliteStoreOnly) func lookUpsByIDKeyAndKeyOrderUseTheRowidAndThePartialIndexWithoutSorting() throws {
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
