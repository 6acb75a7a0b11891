import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Persistent history (Store guarantees 46–48) on every store: saves and batch requests record
/// transactions in order, with author, context name, updated attributes and deleted keys; a
/// failed commit records nothing; another coordinator's writes are recorded once history is
/// on; a transaction merged as a change notice updates another coordinator's objects;
/// purging removes what came before a token.
@Suite(.onEveryStore) struct HistoryTests {
    func container(_ directory: TemporaryDirectory, history: Bool = true) throws -> PersistentContainer {
        let container = PersistentContainer(name: "history", managedObjectModel: journalModel, storeURL: directory.storeURL("history"),
                                            options: PersistentStoreOptions(history: history))
        try container.loadPersistentStores()
        return container
    }

    @Test func savesRecordTransactionsInOrderWithWhoAndWhat() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        writer.transactionAuthor = "importer"
        let ids = try writer.performAndWait { () throws -> [ObjectID] in
            let entries = (1...3).map { insertEntry(writer, id: $0, location: "Pacifica", rating: $0) }
            try writer.save()
            entries[0]["rating"] = 5
            entries[1]["location"] = "Mavericks"
            writer.delete(entries[2])
            try writer.save()
            return entries.map(\.objectID)
        }
        let history = try writer.performAndWait { try writer.fetchHistory(after: nil) }
        #expect(history.count == 2)
        #expect(history[0].token < history[1].token && history[0].author == "importer" && history[0].contextName == "history.writer")
        #expect(Set(history[0].changes.map(\.objectID)) == Set(ids) && history[0].changes.allSatisfy { $0.changeType == .insert })
        let second = Dictionary(uniqueKeysWithValues: history[1].changes.map { ($0.objectID, $0) })
        #expect(second[ids[0]]?.changeType == .update && second[ids[0]]?.updatedProperties == ["rating"])
        #expect(second[ids[1]]?.updatedProperties == ["location"])
        #expect(second[ids[2]]?.changeType == .delete && second[ids[2]]?.deletedKey?["id"] as? Int == 3)
        #expect(history[1].changeNotice["deleted"] == [ids[2]] && history[1].changeNotice["updated"] == [ids[0], ids[1]])
        // After a token: only what came later.
        #expect(try writer.performAndWait { try writer.fetchHistory(after: history[0].token) }.map(\.token) == [history[1].token])
        // Tokens are Codable, to be kept between runs.
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(history[1].token))
        #expect(decoded == history[1].token)
    }

    /// A reader that keeps rows by key must learn which key an object left: an update that
    /// changes the key records the key before it (`previousKey`); one that gives an object
    /// another row's key merges the two, and the object that goes is a delete carrying the
    /// key it had, not the one it was given. Setting a key to what it was records none.
    @Test func keyChangesRecordTheKeyBefore() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        let ids = try writer.performAndWait { () throws -> [ObjectID] in
            writer.mergePolicy = .mergeByPropertyObjectTrump
            let entries = (1...3).map { insertEntry(writer, id: $0, location: "Pacifica") }
            try writer.save()
            let ids = entries.map(\.objectID)  // as saved: the merged object takes the survivor's after
            entries[0]["id"] = 10         // a new key
            entries[1]["id"] = 3          // entry 3's key: the two become one
            entries[2]["id"] = 3          // as it was
            entries[2]["location"] = "Mavericks"
            try writer.save()
            return ids
        }
        let history = try writer.performAndWait { try writer.fetchHistory(after: nil) }
        #expect(history.count == 2)
        let changes = history.last?.changes ?? []
        let first = changes.first { $0.objectID == ids[0] }
        #expect(first?.changeType == .update && first?.previousKey?["id"] as? Int == 1, "\(changes)")
        let merged = changes.first { $0.objectID == ids[1] }
        #expect(merged?.changeType == .delete && merged?.deletedKey?["id"] as? Int == 2, "\(changes)")
        let kept = changes.first { $0.objectID == ids[2] }
        #expect(kept?.changeType == .update && kept?.previousKey == nil, "\(changes)")
        #expect(history[0].changes.allSatisfy { $0.previousKey == nil && $0.deletedKey == nil })
    }

    /// Objects are kept as ranges of primary keys; an integer key can be the ID, and negative.
    @Test func negativeAndScatteredKeysComeBackAsTheyWent() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        let ids = try writer.performAndWait { () throws -> Set<ObjectID> in
            let entries = [-7, -3, -2, -1, 0, 1, 5, 6, 100].map { insertEntry(writer, id: $0) }
            try writer.save()
            return Set(entries.map(\.objectID))
        }
        let history = try writer.performAndWait { try writer.fetchHistory(after: nil) }
        #expect(history.count == 1 && Set(history[0].changes.map(\.objectID)) == ids && history[0].changes.count == ids.count)
    }

    /// The stored form of a group's keys reads back as the same keys, negative ones included.
    @Test func aGroupsKeysRoundTripThroughTheirStoredForm() {
        let keys: [Int64] = [-9_223_372_036_854_775_808, -7, -3, -2, -1, 0, 1, 5, 6, 100, 9_223_372_036_854_775_807]
        let group = HistoryRecord.Group(entity: "JournalEntry", type: .delete, updated: [], primaryKeys: keys,
                                        keysBefore: keys.map { ["id": .integer($0)] })
        let changes = HistoryText.changes(entity: "JournalEntry", type: "delete", updated: HistoryText.updated(group), keys: HistoryText.keys(group),
                                          deletedKeys: HistoryText.deletedKeys(group), model: journalModel, storeIdentifier: "s")
        #expect(changes.map(\.objectID.primaryKey) == keys)
        #expect(changes.map { ($0.deletedKey?["id"] as? Int).map(Int64.init) } == keys.map(Optional.some))
    }

    @Test func batchRequestsRecordTheirChanges() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        try writer.performAndWait {
            writer.transactionAuthor = "bulk"
            _ = try writer.execute(BatchInsertRequest(entityName: "JournalEntry", objects: (1...4).map {
                ["id": $0, "date": Date(timeIntervalSince1970: 0), "rating": $0]
            }))
            let update = BatchUpdateRequest(entityName: "JournalEntry")
            update.predicate = FetchPredicate(format: "id <= 2")
            update.propertiesToUpdate = ["rating": 9]
            _ = try writer.execute(update)
            var fetch = FetchRequest(entityName: "JournalEntry")
            fetch.predicate = FetchPredicate(format: "id >= 3")
            _ = try writer.execute(BatchDeleteRequest(fetchRequest: fetch))
        }
        let history = try writer.performAndWait { try writer.fetchHistory(after: nil) }
        #expect(history.map { $0.changes.map(\.changeType.rawValue).sorted() } == [Array(repeating: "insert", count: 4), ["update", "update"], ["delete", "delete"]])
        #expect(history.allSatisfy { $0.author == "bulk" })
        #expect(history[1].changes.allSatisfy { $0.updatedProperties == ["rating"] })
        #expect(Set(history[2].changes.compactMap { $0.deletedKey?["id"] as? Int }) == [3, 4])
    }

    @Test func aFailedCommitRecordsNothing() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        try writer.performAndWait {
            insertEntry(writer, id: 1)
            try writer.save()
        }
        // Another coordinator stores id 2 first; this save's id 2 then conflicts (merge policy error).
        let other = try makeRootContext(at: container.storeURL)
        try other.performAndWait {
            insertEntry(other, id: 2)
            try other.save()
        }
        let failed = writer.performAndWait { () -> Bool in
            insertEntry(writer, id: 2)
            insertEntry(writer, id: 3)
            return (try? writer.save()) == nil
        }
        #expect(failed)
        let history = try writer.performAndWait { try writer.fetchHistory(after: nil) }
        // The other coordinator's save is recorded (history is the store's, whoever writes); the failed one is not.
        #expect(history.count == 2 && history[1].changes.count == 1 && history[1].contextName == nil)
        #expect(try other.performAndWait { try other.count(for: FetchRequest(entityName: "JournalEntry")) } == 2)
    }

    @Test func aTransactionMergedAsANoticeUpdatesAnotherCoordinatorsObjects() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        try writer.performAndWait {
            insertEntry(writer, id: 1, rating: 1)
            try writer.save()
        }
        let reader = try makeRootContext(at: container.storeURL)
        let entry = try reader.performAndWait { try reader.fetch(FetchRequest(entityName: "JournalEntry"))[0] }
        #expect(reader.performAndWait { entry["rating"] as? Int } == 1)
        let seen = try reader.performAndWait { try reader.fetchHistory(after: nil) }.last!.token
        try writer.performAndWait {
            let stored = try writer.fetch(FetchRequest(entityName: "JournalEntry"))[0]
            stored["rating"] = 4
            try writer.save()
        }
        let news = try reader.performAndWait { try reader.fetchHistory(after: seen) }
        #expect(news.count == 1)
        for transaction in news { ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.changeNotice, into: [reader]) }
        #expect(reader.performAndWait { entry["rating"] as? Int } == 4)
    }

    @Test func purgingRemovesWhatCameBeforeAToken() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory)
        let writer = container.writerContext
        try writer.performAndWait {
            for id in 1...3 {
                insertEntry(writer, id: id)
                try writer.save()
            }
            let tokens = try writer.fetchHistory(after: nil).map(\.token)
            #expect(try writer.historyPurgedBefore() == nil)
            try writer.deleteHistory(before: tokens[2])
            #expect(try writer.fetchHistory(after: nil).map(\.token) == [tokens[2]])
            // The store notes how far it was purged, and never moves that back.
            #expect(try writer.historyPurgedBefore() == tokens[2])
            try writer.deleteHistory(before: tokens[0])
            #expect(try writer.historyPurgedBefore() == tokens[2])
        }
    }

    @Test func aStoreWithoutHistoryRecordsNone() throws {
        let directory = TemporaryDirectory()
        let container = try container(directory, history: false)
        let writer = container.writerContext
        try writer.performAndWait {
            insertEntry(writer, id: 1)
            try writer.save()
            #expect(try writer.fetchHistory(after: nil).isEmpty)
        }
    }

    /// Store guarantees 47 under kill -9: a process killed in the middle of a save leaves neither the
    /// save's rows nor its history transaction; the transactions before it are whole.
    @Test(.sqliteStoreOnly) func aProcessKilledMidSaveLeavesNeitherItsChangesNorItsHistory() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("killed.sqlite")
        let path = url.path
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            let container = PersistentContainer(name: "killed", managedObjectModel: journalModel, storeURL: URL(fileURLWithPath: path),
                                                options: PersistentStoreOptions(history: true))
            try container.loadPersistentStores()
            let writer = container.writerContext
            try writer.performAndWait {
                for id in 1...100 { insertEntry(writer, id: id) }
                try writer.save()
            }
            let store = container.persistentStoreCoordinator.sqliteStore!
            store.commitObserverInterval = 5_000
            store.commitObserver = { written in
                if written >= 20_000 { kill(getpid(), SIGKILL) }
            }
            try writer.performAndWait {
                for id in 101...50_100 { insertEntry(writer, id: id) }
                try writer.save()
            }
        }
        let container = PersistentContainer(name: "killed", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        let writer = container.writerContext
        let (rows, history) = try writer.performAndWait {
            (try writer.count(for: FetchRequest(entityName: "JournalEntry")), try writer.fetchHistory(after: nil))
        }
        #expect(rows == 100)
        #expect(history.count == 1 && history[0].changes.count == 100 && history[0].changes.allSatisfy { $0.changeType == .insert })
    }
}
