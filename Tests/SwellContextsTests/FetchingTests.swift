import Dispatch
import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Synchronization
import SwellLocks
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 12–16: fetch requests, unsaved state, no waiting for the writer, counts, batches.
@Suite(.onEveryStore) struct FetchingTests {
    let directory = TemporaryDirectory()

    private func seed(_ container: PersistentContainer) async throws {
        let writer = container.writerContext
        try await writer.perform {
            let spots = ["Ocean Beach", "Pacifica", "Mavericks", "Bolinas beach", "Linda Mar", "Stinson BEACH"]
            for id in 1...30 {
                insertEntry(writer, id: id, location: spots[id % spots.count], rating: id % 5 == 0 ? nil : id % 5,
                            date: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) * 3600))
            }
            try writer.save()
        }
    }

    private func ids(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> [Int] {
        try context.performAndWait { try context.fetch(request).map { $0["id"] as! Int } }
    }

    @Test func aRequestFiltersSortsLimitsAndOffsets() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        var request = FetchRequest(entityName: "JournalEntry")
        request.predicate = FetchPredicate(format: "rating >= %@ AND location CONTAINS[c] %@", 3, "beach")
        request.sortDescriptors = [FetchSortDescriptor(key: "rating", ascending: false), FetchSortDescriptor(key: "id")]
        let all = try ids(container.viewContext, request)
        #expect(all == [9, 24, 29, 3, 18, 23])
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try ids(container.viewContext, request) == [24, 29])
    }

    @Test func aFetchSeesTheContextsAndEveryAncestorsUnsavedState() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        let view = container.viewContext
        // Unsaved in the view context: a new entry, a changed rating, a deletion.
        try await view.perform {
            insertEntry(view, id: 100, location: "New beach", rating: 5)
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id IN %@", [1, 2])
            let objects = try view.fetch(request)
            for object in objects where object["id"] as? Int == 1 { object["rating"] = 5 }
            for object in objects where object["id"] as? Int == 2 { view.delete(object) }
        }
        let worker = container.newBackgroundContext()
        var request = FetchRequest(entityName: "JournalEntry")
        request.predicate = FetchPredicate(format: "rating == 5")
        request.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: false)]
        #expect(try ids(worker, request) == [100, 1])
        var all = FetchRequest(entityName: "JournalEntry")
        all.sortDescriptors = [FetchSortDescriptor(key: "id")]
        let seen = try ids(worker, all)
        #expect(!seen.contains(2))
        #expect(seen.count == 30)
        // The worker's own unsaved changes on top, sorted on unsaved values.
        let sorted = try worker.performAndWait { () throws -> [Int] in
            var byRating = FetchRequest(entityName: "JournalEntry")
            byRating.predicate = FetchPredicate(format: "rating != NIL")
            byRating.sortDescriptors = [FetchSortDescriptor(key: "rating", ascending: false), FetchSortDescriptor(key: "id")]
            byRating.fetchLimit = 3
            let first = try worker.fetch(byRating)
            first[0]["rating"] = 0
            return try worker.fetch(byRating).map { $0["id"] as! Int }
        }
        #expect(sorted == [100, 4, 9])
    }

    @Test(.sqliteStoreOnly) func aFetchNeverWaitsForTheWritersSaveInProgress() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        let writer = container.writerContext
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let inTransaction = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Whether the writer's hold ended by the test's release (not by its bound: 120 s, as
        // under ThreadSanitizer on a loaded machine the reads below took more than 20).
        let released = LockedValue(false)
        store.commitObserverInterval = 1_000_000
        store.commitObserver = { written in
            guard written == 0 else { return }
            inTransaction.signal()
            let result = release.wait(timeout: .now() + 120)
            released.withLock { $0 = result == .success }
        }
        let view = container.viewContext
        try await view.perform {
            insertEntry(view, id: 200)
            try view.save()
        }
        let saveError = LockedValue<(any Error)?>(nil)
        enqueue(writer) {
            do { try writer.save() } catch { saveError.withLock { $0 = error } }
        }
        #expect(inTransaction.wait(timeout: .now() + 10) == .success)
        // The writer is inside its transaction and waits: readers go on, and see the in-flight change.
        let worker = container.newBackgroundContext()
        let seen = try await worker.perform { try worker.count(for: FetchRequest(entityName: "JournalEntry")) }
        let observer = try makeRootContext(at: container.storeURL)
        let onDisk = try count(observer)
        release.signal()
        store.commitObserver = nil
        #expect(seen == 31)
        #expect(onDisk == 30)
        _ = await writer.perform(schedule: .enqueued) { true }
        #expect(released.withLock { $0 })
        #expect(saveError.withLock { $0 } == nil)
        #expect(try count(observer) == 31)
    }

    /// Holds the next store read open (a disk that does not answer) until `release` is
    /// signalled; `inRead` is signalled once that read is inside its snapshot; `released`
    /// tells, once the read went on, whether the release ended the hold (not its 30 s bound).
    private func holdNextStoreRead(_ store: SQLiteStore) -> (inRead: DispatchSemaphore, release: DispatchSemaphore, released: LockedValue<Bool>) {
        let inRead = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = LockedValue(false)
        let armed = Atomic<Bool>(true)
        store.readObserver = {
            guard armed.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged else { return }
            inRead.signal()
            let result = release.wait(timeout: .now() + 30)
            released.withLock { $0 = result == .success }
        }
        return (inRead, release, released)
    }

    @Test(.sqliteStoreOnly) func aViewContextFetchReturnsWhileAWorkersSaveWaitsForTheStore() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let (inRead, release, released) = holdNextStoreRead(store)
        defer { store.readObserver = nil }
        let worker = container.newBackgroundContext()
        let saved = DispatchSemaphore(value: 0)
        let saveError = LockedValue<(any Error)?>(nil)
        enqueue(worker) {
            // Key 1 is stored, key 500 is new: the save must look both up in the store.
            _ = insertEntry(worker, id: 1, rating: 5)
            _ = insertEntry(worker, id: 500)
            do { try worker.save() } catch { saveError.withLock { $0 = error } }
            saved.signal()
        }
        #expect(inRead.wait(timeout: .now() + 10) == .success)
        // The worker's save is inside its store read: the view context (main queue) still fetches.
        let view = container.viewContext
        let fetched = DispatchSemaphore(value: 0)
        let seen = LockedValue<Int?>(nil)
        enqueue(view) {
            let count = try? view.count(for: FetchRequest(entityName: "JournalEntry"))
            seen.withLock { $0 = count }
            fetched.signal()
        }
        let fetchReturned = fetched.wait(timeout: .now() + 10)
        release.signal()
        #expect(fetchReturned == .success)
        #expect(seen.withLock { $0 } == 30)
        #expect(saved.wait(timeout: .now() + 10) == .success)
        #expect(released.withLock { $0 })
        #expect(saveError.withLock { $0 } == nil)
        let after = try await view.perform { () throws -> (count: Int, rating: Int?) in
            let request = FetchRequest(entityName: "JournalEntry")
            var first = request
            first.predicate = FetchPredicate(format: "id == 1")
            return (try view.count(for: request), try view.fetch(first).first?["rating"] as? Int)
        }
        #expect(after.count == 31)
        #expect(after.rating == 5)
    }

    @Test(.sqliteStoreOnly) func aChildSaveThatReadTheStoreBeforeACommitStillFindsTheCommittedKeys() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let view = container.viewContext
        let writer = container.writerContext
        // Key 7 reaches the writer (not yet the disk).
        let first = container.newBackgroundContext()
        try await first.perform {
            _ = insertEntry(first, id: 7, rating: 1)
            try first.save()
        }
        try await view.perform { try view.save() }
        let firstID = try await view.perform { () throws -> ObjectID? in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 7")
            return try view.fetch(request).first?.objectID
        }
        // A second worker's save reads the store (key 7 absent); while it is inside
        // that read, the writer commits key 7 and its in-flight level goes.
        let (inRead, release, released) = holdNextStoreRead(store)
        defer { store.readObserver = nil }
        let second = container.newBackgroundContext()
        let saved = DispatchSemaphore(value: 0)
        let outcome = LockedValue<(incoming: ObjectID, changes: ContextDidSaveChanges)?>(nil)
        enqueue(second) {
            let incoming = insertEntry(second, id: 7, rating: 2).objectID
            if let changes = try? second.saveReturningChanges() { outcome.withLock { $0 = (incoming, changes) } }
            saved.signal()
        }
        #expect(inRead.wait(timeout: .now() + 10) == .success)
        try await writer.perform { try writer.save() }
        #expect(try storedRowCount(container.storeURL) == 1)
        release.signal()
        #expect(saved.wait(timeout: .now() + 10) == .success)
        #expect(released.withLock { $0 })
        // The save saw the committed key 7 (read again after the commit): a merge, not an insert.
        let result = try #require(outcome.withLock { $0 })
        #expect(result.changes.merged[result.incoming] == firstID)
        #expect(!result.changes.inserted.contains(result.incoming))
        try await view.perform { try view.save() }
        try await writer.perform { try writer.save() }
        // One object with key 7, carrying the later value: not a second row, not a conflict.
        #expect(try storedRowCount(container.storeURL) == 1)
        let rating = try await view.perform { () throws -> Int? in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 7")
            return try view.fetch(request).first?["rating"] as? Int
        }
        #expect(rating == 2)
    }

    @Test func aKeyChangeToAStoredKeyIsFoundInTheStoreReadBeforeTheLock() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let worker = container.newBackgroundContext()
        let (moved, changes) = try await worker.perform { () throws -> (ObjectID, ContextDidSaveChanges) in
            // A new object (so the save looks keys up in the store) and a stored object whose key becomes 2, a stored key.
            _ = insertEntry(worker, id: 500)
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 3")
            let entry = try #require(try worker.fetch(request).first)
            entry["id"] = 2
            return (entry.objectID, try worker.saveReturningChanges())
        }
        // The object with key 2 survives; the one that took its key merges into it at this save.
        let survivor = try await container.viewContext.perform { () throws -> ObjectID? in
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 2")
            return try container.viewContext.fetch(request).first?.objectID
        }
        #expect(changes.merged[moved] == survivor)
        #expect(changes.deleted.contains(moved))
    }

    @Test func countEqualsTheNumberOfObjectsTheFetchReturns() async throws {
        let container = try makeContainer(directory)
        try await seed(container)
        let view = container.viewContext
        try await view.perform {
            insertEntry(view, id: 500, location: "Ocean Beach", rating: 4)
            let some = try view.fetch(FetchRequest(entityName: "JournalEntry")).prefix(3)
            view.delete(some.first!)
            some.last!["rating"] = 4
            for format in ["rating == 4", "location BEGINSWITH 'O'", "rating == NIL", "id > 10 AND id < 20"] {
                for (limit, offset) in [(0, 0), (2, 0), (0, 3), (4, 2), (100, 100)] {
                    var request = FetchRequest(entityName: "JournalEntry")
                    request.predicate = FetchPredicate(format: format)
                    request.fetchLimit = limit
                    request.fetchOffset = offset
                    #expect(try view.count(for: request) == view.fetch(request).count, "\(format) limit \(limit) offset \(offset)")
                }
            }
        }
    }

    @Test func aBatchedFetchHoldsAboutOneBatchOfValuesAtATime() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            for index in 0..<20_000 {
                let note = writer.insertNewObject(forEntityName: "Note")
                note["text"] = "note \(index)"
            }
            try writer.save()
        }
        let worker = container.newBackgroundContext()
        let (maxLoaded, total, texts) = try await worker.perform { () throws -> (Int, Int, Int) in
            var request = FetchRequest(entityName: "Note")
            request.fetchBatchSize = 500
            let notes = try worker.fetch(request)
            var maxLoaded = 0
            var texts = 0
            for (index, note) in notes.enumerated() {
                if note["text"] is String { texts += 1 }
                if index % 1_000 == 0 {
                    maxLoaded = max(maxLoaded, notes.filter { !$0.isFault }.count)
                }
            }
            return (maxLoaded, notes.count, texts)
        }
        #expect(total == 20_000)
        #expect(texts == 20_000)
        #expect(maxLoaded <= 1_000)
    }

    @Test func badRequestsThrowClearErrors() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            #expect(throws: StoreError.self) { try view.fetch(FetchRequest(entityName: "Nope")) }
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "ratng == 1")
            do {
                _ = try view.fetch(request)
                Issue.record("an unknown attribute must fail")
            } catch let error as StoreError where error.kind == .invalidPredicate {
                #expect(error.predicateError?.message.contains("ratng") == true)
            }
            var sorted = FetchRequest(entityName: "JournalEntry")
            sorted.sortDescriptors = [FetchSortDescriptor(key: "nope")]
            #expect(throws: StoreError.self) { try view.fetch(sorted) }
        }
    }
}
