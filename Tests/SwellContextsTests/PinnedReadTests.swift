import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store guarantees 56: a context pinned to a query generation keeps answering from its snapshot
/// while other contexts, coordinators and processes commit, until it saves, is reset, merges or
/// is unpinned.
@Suite(.onEveryStore) struct PinnedReadTests {
    let directory = TemporaryDirectory()

    /// A root context of its own on `coordinator`.
    private func root(_ coordinator: PersistentStoreCoordinator, policy: MergePolicy = .error) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.mergePolicy = policy
        return context
    }

    /// Saves entries 1, 2 and 3 at "a", "b" and "c"; returns their IDs.
    private func seed(_ context: ManagedObjectContext) throws -> [ObjectID] {
        try context.performAndWait {
            let ids = [(1, "a"), (2, "b"), (3, "c")].map { insertEntry(context, id: $0.0, location: $0.1).objectID }
            try context.save()
            return ids
        }
    }

    /// Inserts entry `id` at `location` in `context` and saves it.
    private func saveEntry(_ id: Int, at location: String, in context: ManagedObjectContext) throws {
        try context.performAndWait {
            insertEntry(context, id: id, location: location)
            try context.save()
        }
    }

    private func pin(_ context: ManagedObjectContext, to token: QueryGenerationToken? = .current) throws {
        try context.performAndWait { try context.setQueryGenerationFrom(token) }
    }

    private func token(_ context: ManagedObjectContext) -> QueryGenerationToken? {
        context.performAndWait { context.queryGenerationToken }
    }

    /// Every entry the context fetches, id → location (two entries of one id: both locations, joined by "+").
    private func locations(_ context: ManagedObjectContext) throws -> [Int: String] {
        try context.performAndWait {
            let entries = try context.fetch(FetchRequest(entityName: "JournalEntry"))
            return Dictionary(entries.map { ($0["id"] as? Int ?? -1, $0["location"] as? String ?? "") }, uniquingKeysWith: { "\($0)+\($1)" })
        }
    }

    /// Checks that `pinned`, pinned before `changeSeededEntries` (entry 4 at "d" inserted, 2
    /// moved to "B", 3 deleted) ran elsewhere, reads the seeded state through every path —
    /// objects by ID not yet loaded, faults of a batched fetch, counts, predicates, object IDs
    /// and dictionaries — then the new state once unpinned.
    private func expectSnapshot(in pinned: ManagedObjectContext, seeded ids: [ObjectID]) throws {
        try pinned.performAndWait {
            // Not registered yet: loaded now, from the snapshot.
            #expect(pinned.object(with: ids[1])["location"] as? String == "b")
            #expect(try pinned.existingObject(with: ids[2])["location"] as? String == "c")
            var batched = FetchRequest(entityName: "JournalEntry")
            batched.sortDescriptors = [FetchSortDescriptor(key: "id")]
            batched.fetchBatchSize = 2
            let faults = try pinned.fetch(batched)
            #expect(faults.count == 3)
            #expect(faults.first?.isFault == true, "entry 1 was never loaded: a fault until read")
            #expect(faults.map { $0["location"] as? String } == ["a", "b", "c"])
            #expect(try pinned.count(for: FetchRequest(entityName: "JournalEntry")) == 3)
            var moved = FetchRequest(entityName: "JournalEntry")
            moved.predicate = FetchPredicate(format: "location == %@", "B")
            #expect(try pinned.count(for: moved) == 0)
            #expect(try pinned.fetch(moved).isEmpty)
            #expect(Set(try pinned.fetchObjectIDs(FetchRequest(entityName: "JournalEntry"))) == Set(ids))
            var locations = FetchRequest(entityName: "JournalEntry")
            locations.propertiesToFetch = ["location"]
            #expect(Set(try pinned.fetchDictionaries(locations).compactMap { $0["location"] as? String }) == ["a", "b", "c"])
        }
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c"])
        try pin(pinned, to: nil)
        #expect(token(pinned) == nil)
        #expect(try locations(pinned) == [1: "a", 2: "B", 4: "d"])
        #expect(try count(pinned) == 3)
    }

    @Test func aPinnedContextReadsItsSnapshotWhileAnotherRootOfTheCoordinatorCommits() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        let ids = try seed(writer)
        let pinned = root(coordinator)
        try pin(pinned)
        #expect(token(pinned) != nil)
        try writer.performAndWait { try changeSeededEntries(writer) }
        try expectSnapshot(in: pinned, seeded: ids)
    }

    /// A read that fails part way (here a row-by-row read its caller stops by throwing, which
    /// cancels PostgreSQL's COPY) fails alone: the snapshot still answers after it (PostgreSQL
    /// aborts a transaction at its first error unless the read ran in a savepoint).
    @Test func aReadStoppedPartWayLeavesTheSnapshotUsable() async throws {
        struct Stop: Error {}
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.execute(BatchInsertRequest(entityName: "JournalEntry", objects: (1...20_000).map {
            ["id": $0, "date": Date(timeIntervalSince1970: 1_700_000_000), "location": String(repeating: "x", count: 40)]
        }))
        let pinned = root(container.persistentStoreCoordinator)
        try pin(pinned)
        try pinned.performAndWait {
            #expect(throws: Stop.self) {
                try pinned.enumerateRowCursors(FetchRequest(entityName: "JournalEntry")) { _ in throw Stop() }
            }
            let count = try pinned.count(for: FetchRequest(entityName: "JournalEntry"))
            #expect(count == 20_000)
        }
    }

    @Test func aPinnedContextReadsItsSnapshotWhileAnotherCoordinatorCommits() throws {
        let url = directory.storeURL("shared")
        let writer = try makeRootContext(at: url)
        let ids = try seed(writer)
        let pinned = try makeRootContext(at: url)
        try pin(pinned)
        try writer.performAndWait { try changeSeededEntries(writer) }
        try expectSnapshot(in: pinned, seeded: ids)
    }

    @Test(.onStores(except: .memory, "an in-memory store lives in one process"))
    func aPinnedContextReadsItsSnapshotWhileAnotherProcessCommits() async throws {
        let url = directory.storeURL("processes")
        let ids = try seed(try makeRootContext(at: url))
        let pinned = try makeRootContext(at: url)
        try pin(pinned)
        await #expect(processExitsWith: .success) { [url = url.absoluteString as String] in
            let writer = try makeRootContext(at: URL(string: url)!)
            try writer.performAndWait { try changeSeededEntries(writer) }
        }
        try expectSnapshot(in: pinned, seeded: ids)
    }

    @Test func relationshipsOfAPinnedContextAreReadFromItsSnapshot() throws {
        let container = try makeContainer(directory, name: "spots", model: relationshipModel)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        try writer.performAndWait {
            let ocean = writer.insertNewObject(forEntityName: "Spot")
            ocean["name"] = "Ocean"
            let reef = writer.insertNewObject(forEntityName: "Spot")
            reef["name"] = "Reef"
            for id in 1...2 {
                let entry = writer.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = "e\(id)"
                entry.setValue(ocean, forKey: "spot")
            }
            try writer.save()
        }
        let pinned = root(coordinator)
        try pin(pinned)
        // Entry 1 moves to Reef, entry 3 joins Ocean.
        try writer.performAndWait {
            let spots = Dictionary(uniqueKeysWithValues: try writer.fetch(FetchRequest(entityName: "Spot")).map { ($0["name"] as! String, $0) })
            var first = FetchRequest(entityName: "Entry")
            first.predicate = FetchPredicate(format: "id == 1")
            try #require(try writer.fetch(first).first).setValue(spots["Reef"], forKey: "spot")
            let third = writer.insertNewObject(forEntityName: "Entry")
            third["id"] = 3
            third["title"] = "e3"
            third.setValue(spots["Ocean"], forKey: "spot")
            try writer.save()
        }
        /// The titles of Ocean's entries, read through the to-many (prefetched or not) and a key-path predicate.
        func oceanTitles(prefetching: Bool) throws -> (members: Set<String>, matching: Int) {
            try pinned.performAndWait {
                var request = FetchRequest(entityName: "Spot")
                request.predicate = FetchPredicate(format: "name == %@", "Ocean")
                if prefetching { request.relationshipKeyPathsForPrefetching = ["entries"] }
                let ocean = try #require(try pinned.fetch(request).first)
                let members = Set(((ocean.value(forKey: "entries") as? Set<ManagedObject>) ?? []).compactMap { $0["title"] as? String })
                var atOcean = FetchRequest(entityName: "Entry")
                atOcean.predicate = FetchPredicate(format: "spot.name == %@", "Ocean")
                return (members, try pinned.count(for: atOcean))
            }
        }
        #expect(try oceanTitles(prefetching: false) == (["e1", "e2"], 2))
        #expect(try oceanTitles(prefetching: true) == (["e1", "e2"], 2))
        let held = try pinned.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.predicate = FetchPredicate(format: "name == %@", "Ocean")
            request.relationshipKeyPathsForPrefetching = ["entries"]
            return try #require(try pinned.fetch(request).first)
        }
        func heldTitles() -> Set<String> {
            pinned.performAndWait { Set(((held.value(forKey: "entries") as? Set<ManagedObject>) ?? []).compactMap { $0["title"] as? String }) }
        }
        #expect(heldTitles() == ["e1", "e2"])
        try pin(pinned, to: nil)
        // Members prefetched from the snapshot are not taken for the newest state's.
        #expect(heldTitles() == ["e2", "e3"])
        #expect(try oceanTitles(prefetching: false) == (["e2", "e3"], 2))
        #expect(try oceanTitles(prefetching: true) == (["e2", "e3"], 2))
    }

    @Test func aSaveMergesByThePolicyAgainstTheNewestStateAndMovesTheContextThere() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        _ = try seed(writer)
        let pinned = root(coordinator, policy: .objectTrump)
        try pin(pinned)
        let before = token(pinned)
        try writer.performAndWait {
            insertEntry(writer, id: 10, location: "theirs", rating: 4)
            try writer.save()
        }
        #expect(try count(pinned) == 3, "the snapshot has no entry 10")
        // Entry 10 is not in the snapshot, but the policy meets the one the writer stored.
        try saveEntry(10, at: "mine", in: pinned)
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c", 10: "mine"])
        #expect(try count(pinned, "JournalEntry", "id == 10 AND rating == 4") == 1, "merged into the writer's row")
        #expect(token(pinned) != nil && token(pinned) != before, "moved to a new generation, still pinned")
        try saveEntry(11, at: "later", in: writer)
        #expect(try count(pinned) == 4, "a commit after the save is not seen")
    }

    @Test func aSaveUnderTheErrorPolicyMeetsAKeyCommittedAfterTheSnapshot() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        _ = try seed(writer)
        let pinned = root(coordinator, policy: .error)
        try pin(pinned)
        try saveEntry(10, at: "theirs", in: writer)
        #expect(try count(pinned, "JournalEntry", "id == 10") == 0)
        let error = try pinned.performAndWait { () throws -> StoreError? in
            insertEntry(pinned, id: 10, location: "mine")
            do {
                try pinned.save()
                return nil
            } catch let error as StoreError {
                return error
            }
        }
        #expect(error?.kind == .constraintConflict)
        #expect(try count(pinned, "JournalEntry", "id == 10") == 1, "its own unsaved entry over the snapshot, which is kept after a failed save")
        #expect(try locations(pinned)[10] == "mine")
    }

    @Test func aResetMovesThePinnedContextToTheNewestState() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        _ = try seed(writer)
        let pinned = root(coordinator)
        try pin(pinned)
        try writer.performAndWait { try changeSeededEntries(writer) }
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c"])
        pinned.performAndWait { pinned.reset() }
        #expect(try locations(pinned) == [1: "a", 2: "B", 4: "d"])
        #expect(token(pinned) != nil)
        try saveEntry(5, at: "e", in: writer)
        #expect(try count(pinned) == 3, "still pinned after the reset")
    }

    @Test func mergingChangesMovesThePinnedContextToTheNewestState() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        let ids = try seed(writer)
        let pinned = root(coordinator)
        try pin(pinned)
        let held = try pinned.performAndWait { try pinned.existingObject(with: ids[1]) }
        let recorder = SaveRecorder(writer)
        try writer.performAndWait { try changeSeededEntries(writer) }
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c"])
        let changes = try #require(recorder.changes.first)
        pinned.performAndWait { pinned.mergeChanges(changes) }
        #expect(pinned.performAndWait { held["location"] as? String } == "B", "the held object re-read from the new generation")
        #expect(try count(pinned) == 3)
        #expect(try locations(pinned) == [1: "a", 2: "B", 4: "d"])
        #expect(token(pinned) != nil)
    }

    @Test func anAutomaticMergeMovesThePinnedContextToTheNewestState() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        _ = try seed(writer)
        let pinned = root(coordinator)
        try pin(pinned)
        try writer.performAndWait { try changeSeededEntries(writer) }
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c"])
        pinned.automaticallyMergesChangesFromParent = true
        try saveEntry(5, at: "e", in: writer)
        // The merge was queued on the pinned context's queue by the save: it runs before this.
        #expect(try locations(pinned) == [1: "a", 2: "B", 4: "d", 5: "e"])
        #expect(token(pinned) != nil)
        pinned.automaticallyMergesChangesFromParent = false
        try saveEntry(6, at: "f", in: writer)
        #expect(try count(pinned) == 4, "still pinned after the merge")
    }

    @Test func aTokenPinsAnotherContextToTheSameSnapshotWhileAnyContextHoldsIt() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        _ = try seed(writer)
        let first = root(coordinator)
        try pin(first)
        let shared = try #require(token(first))
        try writer.performAndWait { try changeSeededEntries(writer) }
        let second = try makeRootContext(at: container.storeURL)
        if TestStore.current == .memory {
            // Coordinators of one memory:// URL share its store, and so its generations.
            try pin(second, to: shared)
            try pin(second, to: nil)
        } else {
            #expect(try storeErrorKind { try pin(second, to: shared) } == .invalidQueryGeneration, "a token of another store")
        }
        let third = root(coordinator)
        try pin(third, to: shared)
        #expect(token(third) == shared)
        #expect(try locations(third) == [1: "a", 2: "b", 3: "c"])
        try pin(first, to: nil)
        #expect(try locations(third) == [1: "a", 2: "b", 3: "c"], "the third context still holds the snapshot")
        try pin(third, to: nil)
        // No context holds the generation any more: it ended.
        #expect(try storeErrorKind { try pin(first, to: shared) } == .invalidQueryGeneration)
        #expect(token(first) == nil)
        #expect(try locations(first) == [1: "a", 2: "B", 4: "d"])
    }

    @Test func aChildReadsThroughItsParentsPinUnderItsParentsUnsavedChanges() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let writer = root(coordinator)
        let ids = try seed(writer)
        let pinned = root(coordinator)
        try pin(pinned)
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = pinned
        try writer.performAndWait { try changeSeededEntries(writer) }
        pinned.performAndWait { _ = insertEntry(pinned, id: 7, location: "unsaved") }
        #expect(try locations(child) == [1: "a", 2: "b", 3: "c", 7: "unsaved"])
        #expect(child.performAndWait { child.object(with: ids[2])["location"] as? String } == "c")
        #expect(token(child) == nil, "pinned through its parent, not itself")
        // A child may pin itself: then its own snapshot, not its parent's.
        try pin(child)
        try pin(pinned, to: nil)
        try saveEntry(8, at: "h", in: writer)
        #expect(try locations(child) == [1: "a", 2: "B", 4: "d", 7: "unsaved"])
        #expect(try locations(pinned) == [1: "a", 2: "B", 4: "d", 7: "unsaved", 8: "h"])
    }

    /// The container's view context is a child of its writer: pinned, it keeps seeing what it
    /// saved once the writer committed it (it then moves with the writer's commit).
    @Test func thePinnedViewContextKeepsWhatItSavedWhenTheWriterCommits() async throws {
        let container = try makeContainer(directory)
        let ids = try seed(container.writerContext)
        let view = container.viewContext
        try pin(view)
        let other = try makeRootContext(at: container.storeURL)
        try saveEntry(9, at: "other", in: other)
        #expect(try locations(view) == [1: "a", 2: "b", 3: "c"])
        try view.performAndWait {
            try view.existingObject(with: ids[0])["location"] = "A"
            try view.save()
        }
        #expect(try locations(view) == [1: "A", 2: "b", 3: "c", 9: "other"], "its save moved it, under the writer's unsaved changes")
        try saveEntry(12, at: "later", in: other)
        #expect(try locations(view) == [1: "A", 2: "b", 3: "c", 9: "other"])
        try await container.saveToDisk()
        // Its change left the writer's levels for the store: the view moved with that commit.
        #expect(try locations(view) == [1: "A", 2: "b", 3: "c", 9: "other", 12: "later"])
        #expect(token(view) != nil)
    }

    @Test func closingTheCoordinatorEndsThePinnedReads() throws {
        let container = try makeContainer(directory)
        _ = try seed(container.writerContext)
        let pinned = root(container.persistentStoreCoordinator)
        try pin(pinned)
        try container.writerContext.performAndWait { try changeSeededEntries(container.writerContext) }
        #expect(try locations(pinned) == [1: "a", 2: "b", 3: "c"])
        try container.persistentStoreCoordinator.close()
        #expect(try storeErrorKind { _ = try count(pinned) } == .noPersistentStore)
        if TestStore.current == .sqlite {
            #expect(!FileManager.default.fileExists(atPath: container.storeURL.path + "-wal"), "the pinned connection closed before the writer's")
        }
    }

    /// Commits journal entries `ids` with a 3,000-byte location each (about a page apiece), in
    /// one batch insert.
    private func commitLargeEntries(_ container: PersistentContainer, ids: Range<Int64>) throws {
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date"), location = columns.strings("location")
        let text = String(repeating: "x", count: 3_000)
        for key in ids {
            columns.append(key, to: id)
            columns.append(Date(timeIntervalSince1970: 0), to: date)
            columns.append(text, to: location)
        }
        let worker = container.newBackgroundContext()
        _ = try worker.performAndWait { try worker.execute(BatchInsertRequest(entityName: "JournalEntry", columns: columns)) }
    }

    private func walSize(_ container: PersistentContainer) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: container.storeURL.path + "-wal"))?[.size] as? Int64) ?? 0
    }

    @Test(.sqliteStoreOnly) func theWALGrowsWhilePinnedAndIsCutBackAfterThePinEnds() throws {
        let container = try makeContainer(directory)
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let pinned = root(container.persistentStoreCoordinator)
        try pin(pinned)
        // About 24,000 pages in 8 commits: no checkpoint gets past the pinned snapshot.
        for batch in 0..<8 { try commitLargeEntries(container, ids: Int64(batch * 3_000)..<Int64((batch + 1) * 3_000)) }
        store.checkpointer.waitUntilIdle()
        let grown = walSize(container)
        #expect(grown > SQLiteCheckpointer.sizeLimit, "the WAL holds every commit since the pin: \(grown) bytes")
        #expect(try count(pinned) == 0)
        try pin(pinned, to: nil)
        #expect(try count(pinned) == 24_000)
        // The pin's end scheduled a checkpoint; once one copied everything, the next commit
        // starts the WAL over and cuts the file back to the limit. A checkpoint that met a
        // reader mid-way (a loaded machine) leaves it to the next round: at most three.
        var cut = grown
        for round in 0..<3 where cut > SQLiteCheckpointer.sizeLimit {
            if round > 0 { store.checkpointer.schedule() }
            store.checkpointer.waitUntilIdle()
            try commitLargeEntries(container, ids: Int64(100_000 + round)..<Int64(100_001 + round))
            cut = walSize(container)
        }
        #expect(cut <= SQLiteCheckpointer.sizeLimit, "cut back from \(grown) to \(cut) bytes")
    }

    /// The figures in BENCHMARKS.md ("Pinned reads and the WAL"):
    /// `SWELL_MEASURE_PINNED_WAL=1 swift test --filter PinnedReadTests/measureTheWAL`.
    @Test(.sqliteStoreOnly, .enabled(if: ProcessInfo.processInfo.environment["SWELL_MEASURE_PINNED_WAL"] != nil))
    func measureTheWALWhilePinned() throws {
        /// The WAL after `commits` (run with a pin held when `pinned`), and after the pin ended
        /// and one more commit followed the checkpoint its end scheduled.
        func measure(pinned: Bool, _ commits: (PersistentContainer) throws -> Void) throws -> (during: Int64, after: Int64) {
            let local = TemporaryDirectory()
            let container = try makeContainer(local)
            defer { try? container.persistentStoreCoordinator.close() }
            let store = try #require(container.persistentStoreCoordinator.sqliteStore)
            let reader = root(container.persistentStoreCoordinator)
            if pinned { try pin(reader) }
            try commits(container)
            store.checkpointer.waitUntilIdle()
            let during = walSize(container)
            try pin(reader, to: nil)
            store.checkpointer.waitUntilIdle()
            try commitLargeEntries(container, ids: 1_000_000..<1_000_001)
            return (during, walSize(container))
        }
        func mebibytes(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        print("| committed | WAL, no pin | WAL while pinned | WAL after the pin ends and one more commit |")
        print("| --- | --- | --- | --- |")
        for rows in [1_000, 10_000, 50_000] {
            let commits = { (container: PersistentContainer) throws in
                for start in stride(from: 0, to: rows, by: 1_000) {
                    try commitLargeEntries(container, ids: Int64(start)..<Int64(min(rows, start + 1_000)))
                }
            }
            let free = try measure(pinned: false, commits), held = try measure(pinned: true, commits)
            print("| \(rows) rows of 3,000 bytes, in batch inserts of 1,000 | \(mebibytes(free.during)) | \(mebibytes(held.during)) | \(mebibytes(held.after)) |")
        }
        for saves in [100, 1_000] {
            let commits = { (container: PersistentContainer) throws in
                let writer = root(container.persistentStoreCoordinator)
                try writer.performAndWait {
                    for id in 0..<saves {
                        insertEntry(writer, id: id, location: "entry \(id)")
                        try writer.save()
                    }
                }
            }
            let free = try measure(pinned: false, commits), held = try measure(pinned: true, commits)
            print("| \(saves) saves of one small entry | \(mebibytes(free.during)) | \(mebibytes(held.during)) | \(mebibytes(held.after)) |")
        }
    }
}

/// The kind of the store error `body` throws; nil when it throws none (another error is rethrown).
private func storeErrorKind(_ body: () throws -> Void) throws -> StoreError.Kind? {
    do {
        try body()
        return nil
    } catch let error as StoreError {
        return error.kind
    }
}

/// What the other writer commits in the snapshot tests: entry 4 at "d" inserted, entry 2 moved
/// to "B", entry 3 deleted. Runs on `context`'s queue (also in an exit test's child process).
private func changeSeededEntries(_ context: ManagedObjectContext) throws {
    insertEntry(context, id: 4, location: "d")
    var request = FetchRequest(entityName: "JournalEntry")
    request.predicate = FetchPredicate(format: "id IN %@", [2, 3])
    for entry in try context.fetch(request) {
        if entry["id"] as? Int == 2 { entry["location"] = "B" } else { context.delete(entry) }
    }
    try context.save()
}
