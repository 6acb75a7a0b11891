import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store guarantees 49: two coordinators — in one process or in two — that write one store never
/// give two objects one ID and never lose each other's rows.
@Suite(.onEveryStore) struct TwoWritersTests {
    let directory = TemporaryDirectory()

    /// Inserts notes with these texts, returning their IDs (on the context's queue).
    private func insertNotes(_ context: ManagedObjectContext, _ texts: [String]) -> [ObjectID] {
        context.performAndWait {
            texts.map { text in
                let note = context.insertNewObject(forEntityName: "Note")
                note["text"] = text
                return note.objectID
            }
        }
    }

    private func save(_ context: ManagedObjectContext) throws {
        try context.performAndWait { try context.save() }
    }

    /// What a third coordinator reads back for each ID: every object's own text.
    private func texts(at url: URL, of ids: [ObjectID: String]) throws -> [ObjectID: String] {
        let reader = try makeRootContext(at: url)
        return try reader.performAndWait {
            try ids.keys.reduce(into: [:]) { result, id in
                result[id] = try reader.existingObject(with: id)["text"] as? String
            }
        }
    }

    @Test func coordinatorsInterleavingInsertsAndSavesGiveDistinctIDsAndKeepEveryRow() throws {
        let url = directory.storeURL("shared")
        let first = try makeRootContext(at: url)
        let second = try makeRootContext(at: url)
        var expected: [ObjectID: String] = [:]
        func add(_ context: ManagedObjectContext, _ texts: [String]) {
            for (id, text) in zip(insertNotes(context, texts), texts) {
                #expect(expected[id] == nil, "\(id) handed out twice")
                expected[id] = text
            }
        }
        add(first, ["a1", "a2", "a3"])
        add(second, ["b1", "b2", "b3"])
        try save(first)
        add(second, ["b4", "b5"])
        try save(second)
        add(first, ["a4", "a5"])
        add(second, ["b6"])
        try save(second)
        try save(first)
        #expect(expected.count == 11)
        #expect(try count(try makeRootContext(at: url), "Note") == 11)
        #expect(try texts(at: url, of: expected) == expected)
    }

    /// JournalEntry's key is its table's rowid: a row inserted with its key takes the key as
    /// its ID, and an object inserted through the API takes an allocated one. Neither writer
    /// may take as a key-ID a number the other allocated, nor allocate one the other took.
    @Test func aKeyTakenAsIDByOneWriterIsNeverAnIDTheOtherHandsOut() async throws {
        let url = directory.storeURL("rowid")
        let first = try makeRootContext(at: url)
        let second = try makeRootContext(at: url)
        let apiID = first.performAndWait { insertEntry(first, id: 1000, location: "api").objectID }
        // The other writer's pipeline brings rows whose keys are that number and the ones around it.
        let worker = ManagedObjectContext(concurrencyType: .privateQueue)
        worker.parent = second
        let keys = [apiID.primaryKey - 1, apiID.primaryKey, apiID.primaryKey + 1].filter { $0 > 0 }
        try worker.performAndWait {
            for key in keys { worker.insertRow(entity: journalEntity, values: journalRow(key, location: "row \(key)")) }
            try worker.save()
        }
        try save(second)
        try save(first)
        // Then the first writer allocates again, after the rows are on disk.
        let laterID = first.performAndWait { insertEntry(first, id: 2000, location: "later").objectID }
        try save(first)
        let reader = try makeRootContext(at: url)
        let stored = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "JournalEntry")).map { ($0.objectID, $0["id"] as? Int, $0["location"] as? String) }
        }
        #expect(stored.count == keys.count + 2)
        #expect(Set(stored.map(\.0)).count == stored.count, "two objects share an ID: \(stored)")
        let (api, later) = try reader.performAndWait {
            (try reader.existingObject(with: apiID)["location"] as? String, try reader.existingObject(with: laterID)["location"] as? String)
        }
        #expect(api == "api")
        #expect(later == "later")
    }

    /// The same across processes: a child process writes the file between this process's
    /// inserts and its save, and takes as keys the IDs this process holds unsaved.
    @Test(.sqliteStoreOnly) func twoProcessesWritingOneFileGiveDistinctIDsAndKeepEveryRow() async throws {
        let url = directory.file("processes.sqlite")
        let here = try makeRootContext(at: url)
        let ours = insertNotes(here, ["p1", "p2", "p3"])
        let apiID = here.performAndWait { insertEntry(here, id: 1000, location: "api").objectID }
        let path = url.path
        await #expect(processExitsWith: .success) { [path = path as String, key = apiID.primaryKey as Int64] in
            let context = try makeRootContext(at: URL(fileURLWithPath: path))
            try context.performAndWait {
                for text in ["c1", "c2", "c3", "c4"] {
                    context.insertNewObject(forEntityName: "Note")["text"] = text
                }
                try context.save()
            }
            let worker = ManagedObjectContext(concurrencyType: .privateQueue)
            worker.parent = context
            try worker.performAndWait {
                worker.insertRow(entity: journalEntity, values: journalRow(key, location: "child row"))
                try worker.save()
            }
            try context.performAndWait { try context.save() }
        }
        try save(here)
        let more = insertNotes(here, ["p4"])
        try save(here)
        let reader = try makeRootContext(at: url)
        let notes = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Note")).map { ($0.objectID, $0["text"] as? String) }
        }
        #expect(Set(notes.compactMap(\.1)) == ["p1", "p2", "p3", "p4", "c1", "c2", "c3", "c4"])
        #expect(Set(notes.map(\.0)).count == notes.count, "two notes share an ID: \(notes)")
        let mine = try reader.performAndWait { try (ours + more).map { try reader.existingObject(with: $0)["text"] as? String } }
        #expect(mine == ["p1", "p2", "p3", "p4"])
        let entries = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "JournalEntry")).map(\.objectID)
        }
        #expect(entries.count == 2)
        #expect(Set(entries).count == 2, "two entries share an ID: \(entries)")
        #expect(try reader.performAndWait { try reader.existingObject(with: apiID)["location"] as? String } == "api")
    }

    /// A store file made before IDs were reserved through it (no `swell_ids`): coordinators
    /// start above the IDs its tables hold, and from then on reserve through the file.
    @Test(.sqliteStoreOnly) func aStoreWithoutTheIDTableStartsAboveItsRowsInEveryCoordinator() throws {
        let url = directory.file("older.sqlite")
        let maker = try makeRootContext(at: url)
        let old = insertNotes(maker, ["o1", "o2", "o3"])
        try save(maker)
        try maker.persistentStoreCoordinator?.sqliteStore?.close()
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute("DROP TABLE IF EXISTS swell_ids")
        try connection.close()
        let first = try makeRootContext(at: url)
        let second = try makeRootContext(at: url)
        let a = insertNotes(first, ["a"])
        let b = insertNotes(second, ["b"])
        try save(first)
        try save(second)
        let largestOld = old.map(\.primaryKey).max()!
        #expect((a + b).allSatisfy { $0.primaryKey > largestOld })
        #expect(a != b)
        #expect(try texts(at: url, of: [a[0]: "a", b[0]: "b", old[0]: "o1"]) == [a[0]: "a", b[0]: "b", old[0]: "o1"])
        #expect(try storedRows(url, "SELECT count(*) FROM swell_ids WHERE entity = 'Note'") == [[.integer(1)]])
    }

    /// A context takes IDs without waiting for the file's write lock, which another writer
    /// may hold for a long commit: the store reserves its next block ahead, in the background.
    @Test(.sqliteStoreOnly) func aContextTakesIDsReservedAheadWhileAnotherWriterHoldsTheFile() throws {
        let url = directory.file("ahead.sqlite")
        let first = try makeRootContext(at: url)
        let coordinator = try #require(first.persistentStoreCoordinator)
        let taken = insertNotes(first, ["first"])   // the store's first block; the next one is reserved ahead
        try #require(coordinator.sqliteStore).ids.waitForReservationsAhead()
        let holder = try SQLiteConnection(path: url.path)
        try holder.execute("BEGIN IMMEDIATE")   // another writer holds the file's write lock
        let second = ManagedObjectContext(concurrencyType: .privateQueue)
        second.persistentStoreCoordinator = coordinator
        let ahead = insertNotes(second, ["second"])   // a new context's block: from the one reserved ahead
        try holder.execute("ROLLBACK")
        try save(first)
        try save(second)   // no reservation failed (it would have waited out the busy timeout, then failed)
        #expect(taken != ahead)
        #expect(try texts(at: url, of: [taken[0]: "first", ahead[0]: "second"]) == [taken[0]: "first", ahead[0]: "second"])
    }
}
