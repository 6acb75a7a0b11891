import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

@Suite("Relationships: the fetched results controller (Store guarantees 36)", .onEveryStore)
struct RelationshipControllerTests {
    /// Used on the main queue only.
    /// `@unchecked Sendable`: the controller calls it on the main queue only, where the test reads it.
    final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) {}
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            events.append("\(type) \(object["name"] ?? "?")")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {}
    }

    @Test("a spot whose entries changed in a child's save is reported as an update")
    @MainActor func reportsRelationshipUpdates() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let view = container.viewContext
        let spotID = try await view.perform { () throws -> ObjectID in
            let spot = view.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Ocean Beach"
            try view.save()
            return spot.objectID
        }
        var request = FetchRequest(entityName: "Spot")
        request.sortDescriptors = [FetchSortDescriptor(key: "name")]
        let recorder = Recorder()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        controller.delegate = recorder
        try controller.performFetch()
        let child = container.newBackgroundContext()
        try await child.perform {
            let entry = child.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry.setValue(child.object(with: spotID), forKey: "spot")
            try child.save()
        }
        let events = await view.perform(schedule: .enqueued) { recorder.events }
        #expect(events == ["update Ocean Beach"])
    }
}

@Suite("Relationships: migration of a rowid-keyed table that becomes a destination (Store guarantees 24, 35)", .onEveryStore)
struct RelationshipMigrationTests {
    @Test("an integer-keyed table a new to-one points at is rebuilt with _pk as its rowid; IDs and rows stay", .sqliteStoreOnly)
    func rowidTableBecomesDestination() async throws {
        let directory = TemporaryDirectory()
        let entry = EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "id", type: .integer)],
                                      uniquenessConstraint: ["id"])
        let old = try makeContainer(directory, name: "graph", model: ManagedObjectModel(entities: [entry]))
        let writer = old.newBackgroundContext()
        let ids = try writer.performAndWait { () throws -> [ObjectID] in
            let objects = (1...3).map { id -> ManagedObject in
                let object = writer.insertNewObject(forEntityName: "Entry")
                object["id"] = id * 10
                return object
            }
            try writer.save()
            return objects.map(\.objectID)
        }
        try await old.saveToDisk()
        let url = directory.file("graph.sqlite")
        #expect(try query(url, "SELECT name FROM pragma_table_info('Entry') WHERE pk > 0") == [[.text("id")]])
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)],
                                     relationships: [RelationshipDescription(name: "entry", destination: "Entry")])
        let new = try makeContainer(directory, name: "graph", model: ManagedObjectModel(entities: [entry, note]))
        #expect(try query(url, "SELECT name FROM pragma_table_info('Entry') WHERE pk > 0") == [[.text("_pk")]])
        let context = new.newBackgroundContext()
        try context.performAndWait {
            let second = try context.existingObject(with: ids[1])
            #expect(second["id"] as? Int == 20)
            let text = context.insertNewObject(forEntityName: "Note")
            text["text"] = "hi"
            text.setValue(second, forKey: "entry")
            try context.save()
        }
        try await new.saveToDisk()
        #expect(try query(url, "SELECT e.id FROM Note n JOIN Entry e ON n.entry = e._pk") == [[.integer(20)]])
        #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
    }
}

/// Counts the store's reads (one per `read`, whatever it queries).
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
private final class ReadCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

@Suite("Relationships: prefetching (Store guarantees 34)", .onEveryStore)
struct PrefetchingTests {
    /// 50 entries over 10 spots, saved to disk; a fresh stack to read them.
    private func seeded(_ directory: TemporaryDirectory) async throws -> PersistentContainer {
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let spots = (0..<10).map { index -> ManagedObject in
                let spot = context.insertNewObject(forEntityName: "Spot")
                spot["name"] = "spot \(index)"
                return spot
            }
            for id in 1...50 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry.setValue(spots[id % 10], forKey: "spot")
            }
            try context.save()
        }
        try await container.saveToDisk()
        return try makeGraph(directory)
    }

    @Test("a fetch of 50 entries prefetching 'spot' reads the store a constant number of times, not 50", .sqliteStoreOnly)
    func toOnePrefetch() async throws {
        let directory = TemporaryDirectory()
        let stack = try await seeded(directory)
        let store = try #require(stack.persistentStoreCoordinator.sqliteStore)
        let reads = ReadCounter()
        store.readObserver = { reads.increment() }
        defer { store.readObserver = nil }
        let context = stack.newBackgroundContext()
        let (withPrefetch, names) = try context.performAndWait { () throws -> (Int, Set<String>) in
            var request = FetchRequest(entityName: "Entry")
            request.relationshipKeyPathsForPrefetching = ["spot"]
            let entries = try context.fetch(request)
            let names = Set(entries.compactMap { ($0.value(forKey: "spot") as? ManagedObject)?["name"] as? String })
            return (reads.count, names)
        }
        #expect(names.count == 10)
        #expect(withPrefetch <= 2)
        // Without prefetching each spot loads on first access: a read per entry.
        let other = stack.newBackgroundContext()
        let before = reads.count
        try other.performAndWait {
            for entry in try other.fetch(FetchRequest(entityName: "Entry")) { _ = entry.value(forKey: "spot") }
        }
        #expect(reads.count - before >= 50)
    }

    @Test("prefetching a to-many ('entries') answers every spot's set from one query, and a change is seen", .sqliteStoreOnly)
    func toManyPrefetch() async throws {
        let directory = TemporaryDirectory()
        let stack = try await seeded(directory)
        let store = try #require(stack.persistentStoreCoordinator.sqliteStore)
        let reads = ReadCounter()
        store.readObserver = { reads.increment() }
        defer { store.readObserver = nil }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.relationshipKeyPathsForPrefetching = ["entries"]
            let spots = try context.fetch(request)
            let sizes = spots.map { ($0.value(forKey: "entries") as? Set<ManagedObject>)?.count ?? -1 }
            #expect(sizes == Array(repeating: 5, count: 10))
            #expect(reads.count <= 2)
            // A change in the context makes the prefetched sets stale: they are read again.
            let moved = (spots[0].value(forKey: "entries") as? Set<ManagedObject>)!.first!
            moved.setValue(spots[1], forKey: "spot")
            #expect((spots[0].value(forKey: "entries") as? Set<ManagedObject>)?.count == 4)
            #expect((spots[1].value(forKey: "entries") as? Set<ManagedObject>)?.count == 6)
        }
    }
}
