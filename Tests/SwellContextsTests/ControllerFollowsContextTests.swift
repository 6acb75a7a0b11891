import Dispatch
import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 64: the controller reports its context's own unsaved changes at the end of the
/// event that made them, and what merges bring; a typed controller hands out its class.
@Suite(.onEveryStore) struct ControllerFollowsContextTests {
    let directory = TemporaryDirectory()

    /// Records calls as text: "will", "did", "insert 3 -->0.2", "section insert B 1", "difference 1+ 0-".
    /// `@unchecked Sendable`: the controller calls it on its context's queue, where (or after
    /// whose `performAndWait`) the test reads it.
    final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) { events.append("will") }
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange sectionInfo: FetchedResultsSectionInfo<ManagedObject>,
                        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
            events.append("section \(type) \(sectionInfo.name) \(sectionIndex)")
        }
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            func text(_ path: IndexPath?) -> String { path.map { "\($0.section).\($0.item)" } ?? "-" }
            // (A rolled-back insert has left its context and shows no values: "gone".)
            events.append("\(type) \((object["id"] as? Int).map(String.init) ?? "gone") \(text(indexPath))->\(text(newIndexPath))")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) { events.append("did") }

        /// The calls since the last time, emptied.
        func take() -> [String] {
            defer { events = [] }
            return events
        }
    }

    /// A controller over every entry by rating, on `context`'s queue.
    private func controller(on context: ManagedObjectContext, sectioned: Bool = false) throws
        -> (FetchedResultsController<ManagedObject>, Recorder) {
        var request = FetchRequest(entityName: "JournalEntry")
        request.sortDescriptors = sectioned ? [FetchSortDescriptor(key: "location"), FetchSortDescriptor(key: "rating")]
                                            : [FetchSortDescriptor(key: "rating")]
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                  sectionNameKeyPath: sectioned ? "location" : nil)
        let recorder = Recorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder)
    }

    /// The bug report: the view context fetches 3 entries, the controller showed 2 and said nothing.
    @Test @MainActor func anUnsavedInsertIsReportedAtTheEndOfThePerformBlock() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            insertEntry(view, id: 1, rating: 1)
            insertEntry(view, id: 2, rating: 2)
            try view.save()
        }
        let (controller, recorder) = try controller(on: view)
        await view.perform { _ = insertEntry(view, id: 3, rating: 3) }
        #expect(try view.count(for: FetchRequest(entityName: "JournalEntry")) == 3)
        #expect(controller.fetchedObjects?.map { $0["id"] as? Int } == [1, 2, 3])
        #expect(recorder.take() == ["will", "insert 3 -->0.2", "did"])
    }

    @Test func updatesAndDeletesAreReportedBeforePerformAndWaitReturns() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let (controller, recorder) = try context.performAndWait {
            for id in 1...3 { insertEntry(context, id: id, rating: id) }
            try context.save()
            return try self.controller(on: context)
        }
        try context.performAndWait {
            let entries = try context.fetch(FetchRequest(entityName: "JournalEntry")).sorted { ($0["id"] as! Int) < ($1["id"] as! Int) }
            entries[0]["rating"] = 9
            entries[1]["location"] = "Reef"
            context.delete(entries[2])
            // Nothing yet: the event has not ended.
            #expect(recorder.events.isEmpty)
        }
        // Entry 1 moves to the end, entry 2 (changed, a value no sort uses) to the front, entry 3 goes.
        #expect(recorder.take() == ["will", "move 1 0.0->0.1", "move 2 0.1->0.0", "delete 3 0.2->-", "did"])
        try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "JournalEntry")).first { $0["id"] as? Int == 2 }?["location"] = "Bay"
        }
        #expect(recorder.take() == ["will", "update 2 0.0->-", "did"])
        context.performAndWait {
            #expect(controller.fetchedObjects?.map { $0["id"] as? Int } == [2, 1])
            // Nothing changed since: a block that edits nothing reports nothing.
        }
        #expect(recorder.take().isEmpty)
    }

    @Test func processPendingChangesReportsAtOnce() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let (controller, recorder) = try context.performAndWait { try self.controller(on: context) }
        context.performAndWait {
            insertEntry(context, id: 1, rating: 1)
            context.processPendingChanges()
            #expect(recorder.take() == ["will", "insert 1 -->0.0", "did"])
            insertEntry(context, id: 2, rating: 0)
        }
        #expect(recorder.take() == ["will", "insert 2 -->0.0", "did"])
        context.performAndWait { #expect(controller.fetchedObjects?.count == 2) }
    }

    /// A main-queue context edited directly: the event ends when the main queue's turn does.
    @Test @MainActor func theEndOfAMainQueueTurnEndsTheEvent() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let (controller, recorder) = try controller(on: view)
        insertEntry(view, id: 1, rating: 1)
        insertEntry(view, id: 2, rating: 2)
        #expect(recorder.events.isEmpty, "reported in the turn that made the change")
        // The next turn of the main queue.
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(recorder.take() == ["will", "insert 1 -->0.0", "insert 2 -->0.1", "did"])
        #expect(controller.fetchedObjects?.count == 2)
    }

    @Test func sectionsAppearAndGo() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let (controller, recorder) = try context.performAndWait {
            insertEntry(context, id: 1, location: "A", rating: 1)
            insertEntry(context, id: 2, location: "B", rating: 2)
            try context.save()
            return try self.controller(on: context, sectioned: true)
        }
        try context.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = FetchPredicate(format: "id == %@", 2)
            try context.fetch(request).first?["location"] = "C"
        }
        #expect(recorder.take() == ["will", "section delete B 1", "section insert C 1", "move 2 1.0->1.0", "did"])
        context.performAndWait {
            #expect(controller.sections?.map(\.name) == ["A", "C"])
            insertEntry(context, id: 3, location: "A", rating: 0)
        }
        #expect(recorder.take() == ["will", "insert 3 -->0.0", "did"])
        context.performAndWait { context.rollback() }
        #expect(recorder.take() == ["will", "section delete C 1", "section insert B 1", "delete gone 0.0->-", "move 2 1.0->1.0", "did"])
    }

    @Test func aMergeFromAnotherRootIsReported() throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let (mine, other) = (ManagedObjectContext(concurrencyType: .privateQueue), ManagedObjectContext(concurrencyType: .privateQueue))
        mine.persistentStoreCoordinator = coordinator
        mine.automaticallyMergesChangesFromParent = true
        other.persistentStoreCoordinator = coordinator
        let id = try other.performAndWait {
            let entry = insertEntry(other, id: 1, rating: 1)
            try other.save()
            return entry.objectID
        }
        let (controller, recorder) = try mine.performAndWait { try self.controller(on: mine) }
        try other.performAndWait {
            try other.existingObject(with: id)["rating"] = 5
            insertEntry(other, id: 2, rating: 3)
            try other.save()
        }
        // The merge was queued on `mine` by the save: wait behind it.
        mine.performAndWait {}
        #expect(recorder.take() == ["will", "move 1 0.0->0.1", "insert 2 -->0.0", "did"])
        mine.performAndWait { #expect(controller.fetchedObjects?.map { $0["rating"] as? Int } == [3, 5]) }
    }

    @Test func aContextWithoutControllersDoesNotFollowEvents() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        func follows() -> Bool { context.followsEvents.load(ordering: .relaxed) }
        context.performAndWait { _ = insertEntry(context, id: 1) }
        #expect(!follows())
        try context.performAndWait {
            _ = try self.controller(on: context)
            #expect(follows())
        }
        // The controller went with the block; the next event notices and stops following.
        context.performAndWait { _ = insertEntry(context, id: 2) }
        #expect(!follows())
    }
}
