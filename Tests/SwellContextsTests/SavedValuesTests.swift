import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Issue 20, A: after a context saves, its objects show the newest values its level has —
/// also those that came up from a child, whose objects the context never edited itself
/// (Store guarantees 5, 13, 21, 22). Each test failed before the fix: the view context reverted to
/// the values it had loaded before the child's save.
@Suite(.onEveryStore) struct SavedValuesTests {
    let directory = TemporaryDirectory()

    private func stack() async throws -> PersistentContainer {
        let container = try makeContainer(directory, name: "books", model: levelsModel)
        let writer = container.writerContext
        try await writer.perform {
            let book = writer.insertNewObject(forEntityName: "Book")
            book["isbn"] = 1
            book["title"] = "old"
            try writer.save()
        }
        return container
    }

    private static let bookOne: FetchRequest = {
        var request = FetchRequest(entityName: "Book")
        request.predicate = FetchPredicate(format: "isbn == %@", 1)
        return request
    }()

    /// A background task (a child of the view context) sets book 1's title to "new" and saves.
    private func retitleInAChild(_ container: PersistentContainer) async throws {
        try await container.performBackgroundTask { context in
            try context.fetch(Self.bookOne).first?["title"] = "new"
            try context.save()
        }
    }

    /// The view context's title for book 1 from a fresh fetch, and from the object it held.
    private func titles(_ view: ManagedObjectContext, held: HeldObject) async throws -> (fetched: String?, held: String?) {
        try await view.perform {
            (try view.fetch(Self.bookOne).first?["title"] as? String, held.object?["title"] as? String)
        }
    }

    @Test func aChildsChangeStaysInTheViewContextAfterItSaves() async throws {
        let container = try await stack()
        let view = container.viewContext
        let held = try await view.perform { HeldObject(try view.fetch(Self.bookOne).first) }
        try await retitleInAChild(container)
        #expect(try await titles(view, held: held) == ("new", "new"))
        try await view.perform { try view.save() }
        #expect(try await titles(view, held: held) == ("new", "new"))
        try await container.writerContext.perform { try container.writerContext.save() }
        #expect(try await titles(view, held: held) == ("new", "new"))
    }

    @Test func aChildsChangeStaysInTheViewContextAfterSaveToDisk() async throws {
        let container = try await stack()
        let view = container.viewContext
        let held = try await view.perform { HeldObject(try view.fetch(Self.bookOne).first) }
        try await retitleInAChild(container)
        try await container.saveToDisk()
        #expect(try await titles(view, held: held) == ("new", "new"))
        let stored = try makeRootContext(at: container.storeURL, model: levelsModel)
        #expect(try stored.performAndWait { try stored.fetch(Self.bookOne).first?["title"] as? String } == "new")
    }

    @Test func anObjectAChildInsertedKeepsItsValuesWhenTheViewContextSaves() async throws {
        let container = try await stack()
        let view = container.viewContext
        try await container.performBackgroundTask { context in
            let book = context.insertNewObject(forEntityName: "Book")
            book["isbn"] = 2
            book["title"] = "two"
            try context.save()
        }
        let two = {
            var request = FetchRequest(entityName: "Book")
            request.predicate = FetchPredicate(format: "isbn == %@", 2)
            return request
        }()
        let held = try await view.perform { HeldObject(try view.fetch(two).first) }
        try await container.saveToDisk()
        let (fetched, kept) = try await view.perform {
            (try view.fetch(two).first?["title"] as? String, held.object?["title"] as? String)
        }
        #expect(fetched == "two")
        #expect(kept == "two")
    }

    @Test func theWritersObjectsShowWhatItsChildSavedAfterTheWriterSaves() async throws {
        let container = try await stack()
        let writer = container.writerContext
        let held = try await writer.perform { HeldObject(try writer.fetch(Self.bookOne).first) }
        try await retitleInAChild(container)
        try await container.saveToDisk()
        let title = await writer.perform { held.object?["title"] as? String }
        #expect(title == "new")
    }

    @Test func aFetchedResultsControllerReportsTheNewValueAndKeepsIt() async throws {
        let container = try await stack()
        let view = container.viewContext
        let recorder = ChangeTitles()
        let controller = try await view.perform { () throws -> ControllerBox in
            var request = FetchRequest(entityName: "Book")
            request.sortDescriptors = [FetchSortDescriptor(key: "isbn")]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view,
                                                      sectionNameKeyPath: nil, cacheName: nil)
            controller.delegate = recorder
            try controller.performFetch()
            return ControllerBox(controller)
        }
        try await retitleInAChild(container)
        try await container.saveToDisk()
        let shown = await view.perform { controller.controller.fetchedObjects?.first?["title"] as? String }
        #expect(shown == "new")
        #expect(recorder.titles.allSatisfy { $0 == "new" })
        #expect(!recorder.titles.isEmpty)
    }
}

/// An object carried between a context's blocks (used only on that context's queue).
/// `@unchecked Sendable`: the object is used only on its context's queue; the box only carries it between that queue's blocks.
final class HeldObject: @unchecked Sendable {
    let object: ManagedObject?
    init(_ object: ManagedObject?) { self.object = object }
}

/// A fetched results controller carried between its context's blocks.
/// `@unchecked Sendable`: the controller is used only on its context's queue; the box only carries it between that queue's blocks.
final class ControllerBox: @unchecked Sendable {
    let controller: FetchedResultsController<ManagedObject>
    init(_ controller: FetchedResultsController<ManagedObject>) { self.controller = controller }
}

/// Records the title an updated object shows when the controller reports it.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class ChangeTitles: FetchedResultsControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String?] = []
    var titles: [String?] { lock.withLock { recorded } }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        let title = object["title"] as? String
        lock.withLock { recorded.append(title) }
    }
}
