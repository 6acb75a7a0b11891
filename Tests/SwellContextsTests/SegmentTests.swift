import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A child's save of new objects whose keys meet nothing moves its layer up whole
/// (a segment, no per-row work); anything else resolves row by row as before.
@Suite(.onEveryStore) struct SegmentTests {
    let directory = TemporaryDirectory()

    private func insert(_ ids: ClosedRange<Int>, rating: Int, into container: PersistentContainer) async throws {
        let worker = container.newBackgroundContext()
        try await worker.perform {
            for id in ids { _ = insertEntry(worker, id: id, rating: rating) }
            try worker.save()
        }
    }

    private func ratings(_ context: ManagedObjectContext) async throws -> [Int: Int] {
        try await context.perform { () throws -> [Int: Int] in
            var result: [Int: Int] = [:]
            for entry in try context.fetch(FetchRequest(entityName: "JournalEntry")) {
                result[entry["id"] as! Int] = entry["rating"] as? Int
            }
            return result
        }
    }

    @Test func newKeysMoveUpWholeAndMeetingKeysStillMerge() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        try await insert(1...100, rating: 1, into: container)
        try await insert(101...200, rating: 2, into: container)
        // Two whole layers, nothing folded.
        #expect(view.level.withLock { ($0.segments.count, $0.unsegmented.isEmpty) } == (2, true))
        #expect(try await ratings(view).count == 200)
        // Keys 51...150 meet both segments: resolved row by row (the level folds), later values win.
        try await insert(51...150, rating: 3, into: container)
        #expect(view.level.withLock { $0.segments.count } == 0)
        let seen = try await ratings(view)
        #expect(seen.count == 200)
        #expect(seen[50] == 1 && seen[51] == 3 && seen[150] == 3 && seen[151] == 2)
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 200)
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try await ratings(observer) == seen)
    }

    @Test func segmentsMoveToTheWriterWholeAndReachTheDisk() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        try await insert(1...50, rating: 1, into: container)
        try await insert(51...100, rating: 2, into: container)
        _ = try await view.perform { try view.saveIntoParentOffQueue() }
        #expect(container.writerContext.level.withLock { $0.segments.count } == 2)
        #expect(view.level.withLock { $0.isEmpty })
        // A key already in the writer's segments, saved from a worker: a merge, not a second row.
        try await insert(50...50, rating: 5, into: container)
        #expect(view.level.withLock { $0.segments.count } == 0)
        try await container.saveToDisk()
        let stored = try await ratings(try makeRootContext(at: container.storeURL))
        #expect(stored.count == 100)
        #expect(stored[50] == 5 && stored[49] == 1 && stored[51] == 2)
    }

    @Test func editingAnObjectThatArrivedInASegmentSavesTheEdit() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        try await insert(1...10, rating: 1, into: container)
        #expect(view.level.withLock { $0.segments.count } == 1)
        try await view.perform {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == 7")
            let entry = try #require(try view.fetch(request).first)
            #expect(entry.isInserted)
            entry["rating"] = 4
            #expect(view.hasChanges)
        }
        try await container.saveToDisk()
        let stored = try await ratings(try makeRootContext(at: container.storeURL))
        #expect(stored.count == 10)
        #expect(stored[7] == 4 && stored[6] == 1)
    }

    @Test func twoNewObjectsWithOneKeyInOneSaveAreResolvedNotMovedWhole() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        let worker = container.newBackgroundContext()
        let changes = try await worker.perform { () throws -> ContextDidSaveChanges in
            _ = insertEntry(worker, id: 1, rating: 1)
            _ = insertEntry(worker, id: 1, rating: 2)
            _ = insertEntry(worker, id: 2, rating: 2)
            return try worker.saveReturningChanges()
        }
        #expect(changes.inserted.count == 2)
        #expect(changes.merged.count == 1)
        #expect(view.level.withLock { $0.segments.count } == 0)
        #expect(try await ratings(view) == [1: 2, 2: 2])
    }

    @Test func aCheckedKeyTakenByAnotherRootMeanwhileIsMergedByThePolicy() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let writer = container.writerContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        writer.mergePolicy = .mergeByPropertyObjectTrump
        // Key 5 reaches the writer, checked against the store (absent there).
        try await insert(5...6, rating: 1, into: container)
        _ = try await view.perform { try view.saveIntoParentOffQueue() }
        // Another root on the same coordinator commits key 5 first.
        let other = ManagedObjectContext(concurrencyType: .privateQueue)
        other.persistentStoreCoordinator = container.persistentStoreCoordinator
        try await other.perform {
            _ = insertEntry(other, id: 5, location: "Pacifica", rating: 9)
            try other.save()
        }
        let changes = try await writer.perform { try writer.saveReturningChanges() }
        #expect(changes.merged.count == 1)
        #expect(changes.inserted.count == 1)
        let stored = try makeRootContext(at: container.storeURL)
        let rows = try await stored.perform { () throws -> [(Int, Int?, String?)] in
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            return try stored.fetch(request).map { ($0["id"] as! Int, $0["rating"] as? Int, $0["location"] as? String) }
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == 5 && rows[0].1 == 1 && rows[0].2 == "Pacifica")
        #expect(rows[1].0 == 6)
    }

    @Test func aSegmentWhoseKeyASiblingSavedAboveMeanwhileIsMergedThere() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        // Two children of the writer: the view, and a sibling.
        let view = container.viewContext
        view.mergePolicy = .mergeByPropertyObjectTrump
        let sibling = ManagedObjectContext(concurrencyType: .privateQueue)
        sibling.parent = writer
        // Key 8 reaches the view whole (it met nothing), then the sibling saves key 8 into the writer.
        try await insert(7...8, rating: 1, into: container)
        #expect(view.level.withLock { $0.segments.count } == 1)
        try await sibling.perform {
            _ = insertEntry(sibling, id: 8, rating: 9)
            try sibling.save()
        }
        // The view's segment meets key 8 at the writer: resolved there, one object for key 8.
        let changes = try await view.perform { try view.saveReturningChanges() }
        #expect(changes.merged.count == 1)
        let inWriter = try await writer.perform { () throws -> [Int: Int] in
            var result: [Int: Int] = [:]
            for entry in try writer.fetch(FetchRequest(entityName: "JournalEntry")) {
                result[entry["id"] as! Int] = entry["rating"] as? Int
            }
            return result
        }
        #expect(inWriter == [7: 1, 8: 1])
        try await writer.perform { try writer.save() }
        #expect(try storedRowCount(container.storeURL) == 2)
    }
}
