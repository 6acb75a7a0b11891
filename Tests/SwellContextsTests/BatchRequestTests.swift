import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
import Synchronization
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Batch requests (Store guarantees 37–43), on every store
/// (`.onEveryStore`: SQLite, in-memory, PostgreSQL).
@Suite(.onEveryStore) struct BatchRequestTests {
    let directory = TemporaryDirectory()
    let day = Date(timeIntervalSince1970: 1_700_000_000)

    /// Stored rows of `JournalEntry` as `id → [attribute: value]`, read by a fresh root context
    /// of its own coordinator (not any context that executed or merged anything).
    private func storedEntries(_ container: PersistentContainer) throws -> [Int: [String: String]] {
        let reader = try makeRootContext(at: container.storeURL)
        return try reader.performAndWait {
            var rows: [Int: [String: String]] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "JournalEntry")) {
                var values: [String: String] = [:]
                for name in ["location", "period", "rating", "wind"] {
                    if let value = object[name] { values[name] = "\(value)" }
                }
                rows[object["id"] as! Int] = values
            }
            return rows
        }
    }

    private func seed(_ container: PersistentContainer, _ rows: [(Int, String?, Int?)]) throws {
        let writer = container.writerContext
        try writer.performAndWait {
            for (id, location, rating) in rows { insertEntry(writer, id: id, location: location, rating: rating, date: day) }
            try writer.save()
        }
    }

    // MARK: 37: three forms, no objects registered

    @Test func dictionariesAreInsertedWithoutRegisteringObjects() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let request = BatchInsertRequest(entityName: "JournalEntry", objects: [
            ["id": 1, "date": day, "location": "Reef"],
            ["id": 2, "date": day, "rating": 4],
            ["id": 3, "date": day, "location": NSNull(), "rating": NSNull()],
        ])
        request.resultType = .changes
        let result = try worker.performAndWait { try worker.execute(request) }
        #expect((result.inserted, result.updated, result.unchanged) == (3, 0, 0))
        #expect(result.count == 3)
        #expect(worker.performAndWait { worker.registeredObjects.isEmpty && !worker.hasChanges })
        #expect(container.writerContext.performAndWait { container.writerContext.registeredObjects.isEmpty })
        #expect(try storedEntries(container) == [1: ["location": "Reef"], 2: ["rating": "4"], 3: [:]])
        #expect(try storedRowCount(container.storeURL) == 3)
    }

    @Test func aHandlerFillsRowsUntilItSaysItIsDone() throws {
        let container = try makeContainer(directory)
        let calls = LockedCounter()
        let request = BatchInsertRequest(entityName: "JournalEntry") { row in
            let index = calls.next()
            if index == 1_000 {
                row["id"] = 999_999   // the dictionary of the call that says "done" is not inserted
                return true
            }
            row["id"] = index
            row["date"] = Date(timeIntervalSince1970: Double(index))
            row["rating"] = index % 5
            return false
        }
        request.resultType = .count
        let result = try container.writerContext.performAndWait { try container.writerContext.execute(request) }
        #expect(result.count == 1_000)
        #expect(calls.value == 1_001)
        #expect(try storedRowCount(container.storeURL) == 1_000)
        #expect(try count(makeRootContext(at: container.storeURL), "JournalEntry", "rating == 4") == 200)
    }

    @Test func columnsCarryTypedValuesAndNulls() throws {
        let container = try makeContainer(directory)
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date"), location = columns.strings("location"), rating = columns.integers("rating")
        for index in 0..<300 {
            columns.append(index, to: id)
            columns.append(Date(timeIntervalSince1970: Double(index) * 86_400), to: date)
            columns.append(index % 3 == 0 ? nil : "spot \(index) é", to: location)
            columns.append(index % 2 == 0 ? Int64(index) : nil, to: rating)
        }
        let request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
        request.resultType = .changes
        let result = try container.writerContext.performAndWait { try container.writerContext.execute(request) }
        #expect(result.inserted == 300)
        let stored = try storedEntries(container)
        #expect(stored.count == 300)
        #expect(stored[3] == [:])
        #expect(stored[4] == ["location": "spot 4 é", "rating": "4"])
        #expect(stored[7] == ["location": "spot 7 é"])
        let reader = try makeRootContext(at: container.storeURL)
        let dates = try reader.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 10")
            return try reader.fetch(request).first?["date"] as? Date
        }
        #expect(dates == Date(timeIntervalSince1970: 864_000))
    }

    /// Where the key is the table's rowid, a new row's key is its ID (no `_pk` kept), unless
    /// another object holds that ID: a row whose key changed keeps its old key as its ID.
    @Test(.onStores(except: .postgres, "PostgreSQL tables keep IDs apart from keys"))
    func aRowidKeyedRowTakesItsKeyAsIDUnlessAnotherObjectHoldsIt() throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        func insert(_ ids: [Int]) throws -> [ObjectID] {
            var columns = BatchColumns()
            let id = columns.integers("id"), date = columns.dates("date")
            for value in ids {
                columns.append(value, to: id)
                columns.append(day, to: date)
            }
            let request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
            request.resultType = .objectIDs
            return try writer.performAndWait { try writer.execute(request).objectIDs ?? [] }
        }
        #expect(try insert([7, 3]).map(\.primaryKey) == [3, 7])
        // The object with ID 7 takes the key 8: ID 7 stays its.
        try writer.performAndWait {
            let seven = try writer.existingObject(with: ObjectID(entityName: "JournalEntry", primaryKey: 7, storeIdentifier: container.writerContext.persistentStoreCoordinator!.storeIdentifier))
            seven["id"] = 8
            try writer.save()
        }
        let again = try insert([7])
        #expect(again.count == 1 && again[0].primaryKey != 7)
        let keys = try writer.performAndWait { () throws -> (Int?, Int?) in
            writer.reset()
            return (try writer.existingObject(with: again[0])["id"] as? Int,
                    try writer.existingObject(with: ObjectID(entityName: "JournalEntry", primaryKey: 7, storeIdentifier: writer.persistentStoreCoordinator!.storeIdentifier))["id"] as? Int)
        }
        #expect(keys.0 == 7 && keys.1 == 8)
        #expect(try storedEntries(container).keys.sorted() == [3, 7, 8])
    }

    /// A key of two attributes (text and date) meets its stored rows in one look-up.
    @Test func aCompoundKeyIsUpsertedByBothOfItsAttributes() throws {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Reading", attributes: [
            AttributeDescription(name: "station", type: .string),
            AttributeDescription(name: "day", type: .date),
            AttributeDescription(name: "value", type: .double, isOptional: true),
        ], uniquenessConstraint: ["station", "day"])])
        let container = try makeContainer(directory, name: "readings", model: model)
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        func run(_ rows: [(String, Double, Double)]) throws -> BatchResult {
            var columns = BatchColumns()
            let station = columns.strings("station"), day = columns.dates("day"), value = columns.doubles("value")
            for (name, seconds, reading) in rows {
                columns.append(name, to: station)
                columns.append(secondsSince1970: seconds, to: day)
                columns.append(reading, to: value)
            }
            let request = BatchInsertRequest(entityName: "Reading", columns: columns)
            request.resultType = .changes
            return try writer.performAndWait { try writer.execute(request) }
        }
        // A NUL in a key is looked up on its own (json_each ends strings there); PostgreSQL stores no NUL.
        let odd = TestStore.current == .postgres ? "B-x" : "B\u{0}x"
        let first = try run([("A", 0, 1), ("A", 86_400, 2), ("B", 0, 3), (odd, 0, 4)])
        #expect((first.inserted, first.updated, first.unchanged) == (4, 0, 0))
        let second = try run([("A", 0, 1), ("A", 86_400, 2.5), ("B", 86_400, 5), (odd, 0, 4)])
        #expect((second.inserted, second.updated, second.unchanged) == (1, 1, 2))
        #expect(try count(makeRootContext(at: container.storeURL, model: model), "Reading") == 5)
    }

    /// A store of `Tag`s keyed by their text `name`, and a function that upserts `(name, uses)`
    /// rows as one batch insert of columns (`objectTrump`) and gives its result.
    private func tagStore(_ name: String) throws -> (model: ManagedObjectModel, url: URL, run: ([(String, Int64)]) throws -> BatchResult) {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Tag", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "uses", type: .integer, isOptional: true),
        ], uniquenessConstraint: ["name"])])
        let container = try makeContainer(directory, name: name, model: model)
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        return (model, container.storeURL, { rows in
            var columns = BatchColumns()
            let name = columns.strings("name"), count = columns.integers("uses")
            for (text, uses) in rows {
                columns.append(text, to: name)
                columns.append(uses, to: count)
            }
            let request = BatchInsertRequest(entityName: "Tag", columns: columns)
            request.resultType = .changes
            return try writer.performAndWait { try writer.execute(request) }
        })
    }

    /// Text keys go to SQLite's one query for a batch's keys as a JSON array: quotes,
    /// backslashes, control characters and non-ASCII keys must come back as the same keys.
    @Test func textKeysWithCharactersJSONEscapesAreMetAgain() throws {
        let (model, url, run) = try tagStore("tags")
        let names = ["say \"hi\"", "back\\slash", "tab\there", "bell\u{7}", "café", "🌊 wave", "plain"]
        let first = try run(names.enumerated().map { ($1, Int64($0)) })
        #expect((first.inserted, first.updated, first.unchanged) == (names.count, 0, 0))
        let second = try run(names.enumerated().map { ($1, $0 == 2 ? 99 : Int64($0)) })
        #expect((second.inserted, second.updated, second.unchanged) == (0, 1, names.count - 1))
        #expect(try count(makeRootContext(at: url, model: model), "Tag") == names.count)
    }

    /// Swift holds "é" composed (NFC) and decomposed (NFD) equal; SQLite's index does not.
    /// A batch whose rows carry both forms of a stored key is one key to the batch: its later
    /// row updates the stored row its key finds, whose key bytes stay as stored (rewriting
    /// them to the other form replaced the row stored under that form).
    @Test func aKeySwiftHoldsEqualInOtherBytesKeepsItsStoredBytes() throws {
        let (model, url, run) = try tagStore("tags-nfc")
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        _ = try run([(composed, 1)])
        _ = try run([(decomposed, 2)])
        // Two rows on SQLite and PostgreSQL (their indexes compare bytes), one in memory.
        let before = try count(makeRootContext(at: url, model: model), "Tag")
        let result = try run([(composed, 3), (decomposed, 4)])
        #expect((result.inserted, result.updated) == (0, 1))
        // Rewriting the composed row's key to the decomposed bytes replaced the other row.
        #expect(try count(makeRootContext(at: url, model: model), "Tag") == before)
    }

    @Test func columnsThatDoNotFitTheEntityAreRefused() throws {
        let container = try makeContainer(directory)
        var wrongType = BatchColumns()
        let location = wrongType.integers("location")
        wrongType.append(1, to: location)
        var uneven = BatchColumns()
        let id = uneven.integers("id"), date = uneven.dates("date")
        uneven.append(1, to: id)
        uneven.append(2, to: id)
        uneven.append(day, to: date)
        let writer = container.writerContext
        #expect {
            try writer.performAndWait { try writer.execute(BatchInsertRequest(entityName: "JournalEntry", columns: wrongType)) }
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.kind == .typeMismatch && error.attribute == "location" && error.expectedType == .string
        }
        #expect {
            try writer.performAndWait { try writer.execute(BatchInsertRequest(entityName: "JournalEntry", columns: uneven)) }
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .invalidBatchRow, error.attribute == "date" else { return false }
            return error.description.contains("1 values where other columns have 2")
        }
        #expect(try storedRowCount(container.storeURL) == 0)
    }

    // MARK: 38: one transaction

    @Test func aBadRowFailsTheWholeRequestNamingTheRowAndWritesNothing() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        var rows: [[String: Any]] = (0..<600).map { ["id": $0 + 10, "date": day] }
        rows[0] = ["id": 1, "date": day, "location": "Changed"]
        rows[500] = ["id": 510, "location": "no date"]
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        #expect {
            try writer.performAndWait { try writer.execute(BatchInsertRequest(entityName: "JournalEntry", objects: rows)) }
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .invalidBatchRow,
                  error.entity == "JournalEntry", error.row == 500, error.attribute == "date" else { return false }
            return "\(error)".contains("row 500")
        }
        #expect {
            try writer.performAndWait {
                try writer.execute(BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 2, "date": day], ["id": 3, "date": "Monday"]]))
            }
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .invalidBatchRow, error.row == 1, error.attribute == "date" else { return false }
            return error.description.contains("String")
        }
        #expect {
            try writer.performAndWait { try writer.execute(BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 2, "date": day, "colour": "red"]])) }
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.kind == .invalidBatchRow && error.row == 0 && error.attribute == "colour"
        }
        #expect(try storedEntries(container) == [1: ["location": "Reef", "rating": "3"]])
    }

    /// The request runs on the writer's queue, never on the main thread: from the view
    /// context synchronously (the main queue waits) or with `await` (it does not).
    @MainActor
    @Test func aBatchFromTheViewContextRunsOffTheMainThread() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let onMain = LockedFlags()
        func request(first id: Int) -> BatchInsertRequest {
            let calls = LockedCounter()
            return BatchInsertRequest(entityName: "JournalEntry") { [day] row in
                onMain.note(Thread.isMainThread)
                let index = calls.next()
                guard index < 3 else { return true }
                row["id"] = id + index
                row["date"] = day
                return false
            }
        }
        let synchronous = request(first: 0)
        synchronous.resultType = .count
        #expect(try executeSynchronously(synchronous, in: view).count == 3)
        let asynchronous = request(first: 10)
        asynchronous.resultType = .count
        #expect(try await view.execute(asynchronous).count == 3)
        #expect(onMain.values.count == 8)
        #expect(!onMain.values.contains(true))
        #expect(try count(view) == 6)
    }

    // MARK: 39: merge policies, later rows win, equal rows are not written

    /// The stored row (id 1: Reef, rating 3, no period) met by `{id 1, location North, period P}`.
    @Test(arguments: [
        (MergePolicy.mergeByPropertyObjectTrump, ["location": "North", "period": "P", "rating": "3"], 1, 0),
        (.mergeByPropertyStoreTrump, ["location": "Reef", "period": "P", "rating": "3"], 1, 0),
        (.overwrite, ["location": "North", "period": "P"], 1, 0),
        (.rollback, ["location": "Reef", "rating": "3"], 0, 1),
    ])
    func aStoredKeyIsResolvedByThePolicy(policy: MergePolicy, expected: [String: String], updated: Int, unchanged: Int) throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        let worker = container.newBackgroundContext()
        worker.mergePolicy = policy
        let request = BatchInsertRequest(entityName: "JournalEntry", objects: [
            ["id": 1, "date": day, "location": "North", "period": "P"],
            ["id": 2, "date": day],
        ])
        request.resultType = .changes
        let result = try worker.performAndWait { try worker.execute(request) }
        #expect((result.inserted, result.updated, result.unchanged) == (1, updated, unchanged))
        #expect(try storedEntries(container) == [1: expected, 2: [:]])
    }

    @Test func theErrorPolicyFailsTheWholeRequestNamingTheKey() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        let worker = container.newBackgroundContext()
        #expect {
            try worker.performAndWait {
                try worker.execute(BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 2, "date": day], ["id": 1, "date": day, "location": "X"]]))
            }
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .constraintConflict, error.entity == "JournalEntry" else { return false }
            return error.key == ["id": "1"]
        }
        #expect(try storedEntries(container) == [1: ["location": "Reef", "rating": "3"]])
    }

    @Test func theLaterRowForAKeyWinsAndAnEqualRowIsNotWritten() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        worker.mergePolicy = .mergeByPropertyObjectTrump
        let rows: [[String: Any]] = [["id": 1, "date": day, "location": "first"], ["id": 2, "date": day], ["id": 1, "date": day, "location": "second"]]
        let first = BatchInsertRequest(entityName: "JournalEntry", objects: rows)
        first.resultType = .changes
        let inserted = try worker.performAndWait { try worker.execute(first) }
        #expect((inserted.inserted, inserted.updated, inserted.unchanged) == (2, 0, 0))
        #expect(try storedEntries(container) == [1: ["location": "second"], 2: [:]])

        let again = BatchInsertRequest(entityName: "JournalEntry", objects: rows)
        again.resultType = .changes
        let repeated = try worker.performAndWait { try worker.execute(again) }
        #expect((repeated.inserted, repeated.updated, repeated.unchanged) == (0, 0, 2))
        #expect(repeated.count == 0)
        #expect(repeated.changes.values.allSatisfy { $0.isEmpty })
        #expect(repeated.unchangedObjectIDs.count == 2)
    }

    // MARK: 40: result types

    @Test func resultTypesReportWhatTheyAskFor() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        let worker = container.newBackgroundContext()
        worker.mergePolicy = .mergeByPropertyObjectTrump
        func run(_ type: BatchResultType, id: Int) throws -> BatchResult {
            let request = BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 1, "date": day, "rating": id], ["id": id, "date": day]])
            request.resultType = type
            return try worker.performAndWait { try worker.execute(request) }
        }
        let status = try run(.statusOnly, id: 10)
        #expect(status.count == nil && status.objectIDs == nil)
        let counted = try run(.count, id: 11)
        #expect(counted.count == 2 && counted.objectIDs == nil)
        let ids = try run(.objectIDs, id: 12)
        #expect(ids.count == nil)
        let reader = try makeRootContext(at: container.storeURL)
        let expected = try reader.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id IN %@", [1, 12])
            return try reader.fetch(request).map { $0.objectID.uriRepresentation() }
        }
        #expect(Set(ids.objectIDs?.map { $0.uriRepresentation() } ?? []) == Set(expected))
        let changes = try run(.changes, id: 13)
        #expect((changes.inserted, changes.updated, changes.count) == (1, 1, 2))
        #expect(changes.changes["inserted"]?.count == 1 && changes.changes["updated"]?.count == 1)
    }

    // MARK: 41: contexts learn of batch requests

    @MainActor
    @Test func theViewContextMergesABatchByItselfAndItsControllerReports() async throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        let view = container.viewContext
        var request = FetchRequest(entityName: "JournalEntry")
        request.sortDescriptors = [FetchSortDescriptor(key: "id")]
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        let entry = try #require(controller.fetchedObjects?.first)
        #expect(entry["rating"] as? Int == 3)

        let worker = container.newBackgroundContext()
        worker.mergePolicy = .mergeByPropertyObjectTrump
        let batch = BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 1, "date": day, "rating": 5], ["id": 2, "date": day]])
        try await worker.execute(batch)
        // The merge was queued on the main queue before `execute` returned: wait behind it.
        await view.perform(schedule: .enqueued) {}
        #expect(entry["rating"] as? Int == 5)
        #expect(controller.fetchedObjects?.count == 2)
        #expect(recorder.changes.contains { $0.type == .insert && $0.newIndexPath == IndexPath(item: 1, section: 0) })
        #expect(recorder.changes.contains { $0.type == .update && $0.indexPath == IndexPath(item: 0, section: 0) })
    }

    @Test func mergeChangesFromRemoteContextSaveRefreshesAndDeletes() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3), (2, "Bay", 1)])
        // A context of another stack on the same store, holding both objects.
        let other = try makeRootContext(at: container.storeURL)
        let (first, second) = try other.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            let objects = try other.fetch(request)
            return (objects[0], objects[1])
        }
        let writer = container.writerContext
        let update = BatchUpdateRequest(entityName: "JournalEntry")
        update.predicate = FetchPredicate(format: "id == 1")
        update.propertiesToUpdate = ["rating": 9]
        let updated = try writer.performAndWait { try writer.execute(update) }
        let delete = BatchDeleteRequest(objectIDs: [second.objectID])
        let deleted = try writer.performAndWait { try writer.execute(delete) }
        #expect(other.performAndWait { first["rating"] as? Int } == 3)

        ManagedObjectContext.mergeChanges(fromRemoteContextSave: updated.changes, into: [other])
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: deleted.changes, into: [other])
        #expect(other.performAndWait { first["rating"] as? Int } == 9)
        #expect(other.performAndWait { second.managedObjectContext == nil && other.registeredObjects.count == 1 })
    }

    @Test(arguments: [MergePolicy.error, .mergeByPropertyObjectTrump])
    func unsavedChangesMeetTheBatchAtTheirSave(policy: MergePolicy) throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        view.mergePolicy = policy
        container.writerContext.mergePolicy = policy
        view.performAndWait { _ = insertEntry(view, id: 1, location: "mine", date: day) }
        let worker = container.newBackgroundContext()
        _ = try worker.performAndWait {
            try worker.execute(BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 1, "date": day, "location": "batch", "rating": 2]]))
        }
        let saved = Result {
            try view.performAndWait { try view.save() }
            try container.writerContext.performAndWait { try container.writerContext.save() }
        }
        switch policy {
        case .error:
            #expect(throws: StoreError.self) { try saved.get() }
            #expect(try storedEntries(container) == [1: ["location": "batch", "rating": "2"]])
        default:
            try saved.get()
            #expect(try storedEntries(container) == [1: ["location": "mine", "rating": "2"]])
        }
    }

    // MARK: 42: batch update and delete

    @Test func aBatchUpdateSetsValuesAndExpressionsOnTheMatchedRowsOnly() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3), (2, "Bay", 5), (3, "Cove", 1), (4, nil, nil)])
        let request = BatchUpdateRequest(entityName: "JournalEntry")
        request.predicate = FetchPredicate(format: "rating >= %@", 3)
        request.propertiesToUpdate = ["rating": BatchExpression("rating * 2 - 1"), "wind": "calm"]
        request.resultType = .changes
        let writer = container.writerContext
        let result = try writer.performAndWait { try writer.execute(request) }
        #expect((result.updated, result.unchanged, result.count) == (2, 0, 2))
        #expect(try storedEntries(container) == [
            1: ["location": "Reef", "rating": "5", "wind": "calm"], 2: ["location": "Bay", "rating": "9", "wind": "calm"],
            3: ["location": "Cove", "rating": "1"], 4: [:],
        ])
        // Matched rows that already hold the new values are unchanged, not written.
        let again = BatchUpdateRequest(entityName: "JournalEntry")
        again.predicate = FetchPredicate(format: "wind == 'calm'")
        again.propertiesToUpdate = ["wind": "calm", "rating": BatchExpression("rating")]
        again.resultType = .changes
        let repeated = try writer.performAndWait { try writer.execute(again) }
        #expect((repeated.updated, repeated.unchanged) == (0, 2))
        // Nil arithmetic stays nil; nil into a required attribute fails, writing nothing.
        let nulls = BatchUpdateRequest(entityName: "JournalEntry")
        nulls.propertiesToUpdate = ["rating": BatchExpression("rating + 1"), "id": BatchExpression("id + rating")]
        #expect {
            try writer.performAndWait { try writer.execute(nulls) }
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.kind == .missingRequiredValue && error.attribute == "id"
        }
        #expect(try storedEntries(container)[1]?["rating"] == "5")
    }

    @Test(arguments: ["ratin + 1", "rating +", "location * 2", "(rating"])
    func aBatchExpressionThatDoesNotFitFailsNamingWhere(format: String) throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3)])
        let request = BatchUpdateRequest(entityName: "JournalEntry")
        request.propertiesToUpdate = ["rating": BatchExpression(format)]
        let writer = container.writerContext
        #expect {
            try writer.performAndWait { try writer.execute(request) }
        } throws: { error in
            guard case StoreError.Kind.invalidExpression = error else { return false }
            return "\(error)".contains("'\(format)'")
        }
    }

    @Test func aBatchDeleteAppliesCascadeNullifyAndDeny() throws {
        let container = PersistentContainer(name: "graph", managedObjectModel: relationshipModel, storeURL: directory.storeURL("graph"))
        try container.loadPersistentStores()
        let writer = container.writerContext
        try writer.performAndWait {
            let spot = writer.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Reef"
            for id in 1...3 {
                let entry = writer.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["spot"] = spot
            }
            let order = writer.insertNewObject(forEntityName: "Order")
            order["id"] = 1
            for sku in ["a", "b"] {
                let line = writer.insertNewObject(forEntityName: "Line")
                line["sku"] = sku
                line["order"] = order
            }
            let owner = writer.insertNewObject(forEntityName: "Owner")
            owner["name"] = "Ann"
            let pet = writer.insertNewObject(forEntityName: "Pet")
            pet["name"] = "Rex"
            pet["owner"] = owner
            try writer.save()
        }
        let reader = try makeRootContext(at: container.storeURL, model: relationshipModel)
        // Cascade: the order's lines go with it.
        let orders = BatchDeleteRequest(fetchRequest: FetchRequest(entityName: "Order"))
        orders.resultType = .changes
        let cascaded = try writer.performAndWait { try writer.execute(orders) }
        #expect(cascaded.deleted == 3 && cascaded.count == 3)
        #expect(try count(reader, "Line") == 0)
        // Nullify: the entries stay, without their spot.
        let spots = BatchDeleteRequest(fetchRequest: FetchRequest(entityName: "Spot"))
        let nullified = try writer.performAndWait { try writer.execute(spots) }
        #expect(nullified.deleted == 1)
        #expect(try count(reader, "Entry") == 3)
        #expect(try count(reader, "Entry", "spot == nil") == 3)
        // Deny: refused whole, naming the object and the relationship.
        let owners = BatchDeleteRequest(fetchRequest: FetchRequest(entityName: "Owner"))
        #expect {
            try writer.performAndWait { try writer.execute(owners) }
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .deleteDenied, error.attribute == "pets" else { return false }
            return error.entity == "Owner" && error.objects.count == 1 && error.description.contains("still has 1 object")
        }
        #expect(try count(reader, "Owner") == 1)
        #expect(try count(reader, "Pet") == 1)
    }

    @Test func aBatchDeleteByIDsSkipsIDsOfNoStoredObject() throws {
        let container = try makeContainer(directory)
        try seed(container, [(1, "Reef", 3), (2, "Bay", 5)])
        let writer = container.writerContext
        let ids = try writer.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            return try writer.fetch(request).map(\.objectID)
        }
        let first = BatchDeleteRequest(objectIDs: [ids[0]])
        first.resultType = .objectIDs
        #expect(try writer.performAndWait { try writer.execute(first) }.objectIDs == [ids[0]])
        let again = BatchDeleteRequest(objectIDs: ids)
        again.resultType = .count
        #expect(try writer.performAndWait { try writer.execute(again) }.count == 1)
        #expect(try storedRowCount(container.storeURL) == 0)
        #expect(writer.performAndWait { writer.registeredObjects.isEmpty })
    }
}

/// A counter a `@Sendable`-free handler can bump (the handler runs on the writer's queue).
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
}

/// The synchronous `execute` from async code (where the bare call picks the async one).
func executeSynchronously(_ request: any BatchRequest, in context: ManagedObjectContext) throws -> BatchResult {
    try context.execute(request)
}

/// Flags noted from any thread.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class LockedFlags: @unchecked Sendable {
    private let lock = NSLock()
    private var flags: [Bool] = []
    var values: [Bool] { lock.withLock { flags } }
    func note(_ flag: Bool) { lock.withLock { flags.append(flag) } }
}

/// Records a fetched results controller's reports (used on the main queue only).
@MainActor
/// `@unchecked Sendable`: the controller calls it on the main queue only, where the test reads it.
final class ChangeRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
    struct Change { var type: FetchedResultsChangeType; var indexPath: IndexPath?; var newIndexPath: IndexPath? }
    var changes: [Change] = []
    nonisolated func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                                for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        MainActor.assumeIsolated { changes.append(Change(type: type, indexPath: indexPath, newIndexPath: newIndexPath)) }
    }
}

/// A batch insert writes its new rows many to an INSERT; another writer of the file may
/// store one of their keys after the batch looked its keys up. The INSERT that meets it
/// writes none of its rows, they are written one by one, and the met key is merged by the
/// policy: nothing lost, nothing twice.
@Suite(.onEveryStore) struct BatchInsertRaceTests {
    let directory = TemporaryDirectory()
    let day = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(.sqliteStoreOnly) func aKeyStoredByAnotherWriterMeanwhileIsMergedByThePolicy() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        // The other writer: a second container on the same file, which stores key 150 while the
        // batch's look-up is open (after it ran, before the batch is written).
        let other = try makeContainer(directory)
        let armed = Atomic<Bool>(true)
        store.readObserver = {
            guard armed.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged else { return }
            let writer = other.writerContext
            writer.performAndWait {
                insertEntry(writer, id: 150, location: "Other", rating: 1, date: Date(timeIntervalSince1970: 0))
                try? writer.save()
            }
        }
        defer { store.readObserver = nil }
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date"), location = columns.strings("location")
        for value in 1...300 {
            columns.append(value, to: id)
            columns.append(day, to: date)
            columns.append("Reef \(value)", to: location)
        }
        let worker = container.newBackgroundContext()
        worker.mergePolicy = .mergeByPropertyObjectTrump
        let request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
        request.resultType = .changes
        let result = try worker.performAndWait { try worker.execute(request) }
        let stillArmed = armed.load(ordering: .relaxed)
        #expect(!stillArmed, "the other writer stored its row during the batch's look-up")
        #expect((result.inserted, result.updated, result.unchanged) == (299, 1, 0))
        let reader = try makeRootContext(at: container.storeURL)
        let stored = try reader.performAndWait { () throws -> [Int: String] in
            var rows: [Int: String] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "JournalEntry")) {
                rows[object["id"] as! Int] = object["location"] as? String
            }
            return rows
        }
        #expect(stored.count == 300)
        #expect(stored[150] == "Reef 150" && stored[1] == "Reef 1" && stored[300] == "Reef 300")
        #expect(try storedRowCount(container.storeURL) == 300)
    }
}
