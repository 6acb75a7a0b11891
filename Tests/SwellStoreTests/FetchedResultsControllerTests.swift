import Foundation
import Testing
@testable import SwellStore

/// Statement 26: sections, index paths and change reports after saves that reach the context.
@Suite struct FetchedResultsControllerTests {
    let directory = TemporaryDirectory()

    /// Used on the main queue only (the view context's queue).
    final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController) { events.append("will") }
        func controller(_ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            func text(_ path: IndexPath?) -> String { path.map { "\($0.section).\($0.item)" } ?? "-" }
            events.append("\(type) \(object["id"]!) \(text(indexPath))->\(text(newIndexPath))")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController) { events.append("did") }
    }

    @Test @MainActor func sectionsGroupResultsAndChangesAreReportedBetweenWillAndDid() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            insertEntry(view, id: 1, location: "A", rating: 1)
            insertEntry(view, id: 2, location: "A", rating: 2)
            insertEntry(view, id: 3, location: "B", rating: 3)
            try view.save()
        }
        var request = FetchRequest(entityName: "JournalEntry")
        request.sortDescriptors = [FetchSortDescriptor(key: "location"), FetchSortDescriptor(key: "rating")]
        let recorder = Recorder()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view,
                                                  sectionNameKeyPath: "location", cacheName: nil)
        controller.delegate = recorder
        try controller.performFetch()
        do {
            #expect(controller.sections?.map(\.name) == ["A", "B"])
            #expect(controller.sections?.map(\.numberOfObjects) == [2, 1])
            #expect(controller.object(at: IndexPath(item: 1, section: 0))["id"] as? Int == 2)
            #expect(controller.fetchedObjects?.count == 3)
        }
        let ids = try await view.perform { () throws -> [Int: ObjectID] in
            Dictionary(uniqueKeysWithValues: try view.fetch(FetchRequest(entityName: "JournalEntry")).map { ($0["id"] as! Int, $0.objectID) })
        }
        // A child edits, inserts and deletes; its save reaches the view context.
        let child = container.newBackgroundContext()
        try await child.perform {
            insertEntry(child, id: 4, location: "B", rating: 0)
            child.delete(try child.existingObject(with: ids[1]!))
            try child.existingObject(with: ids[2]!)["rating"] = 9
            try child.save()
        }
        // The report is delivered on the view context's queue after the save; wait for it there.
        let events = await view.perform(schedule: .enqueued) { recorder.events }
        #expect(events.first == "will")
        #expect(events.last == "did")
        // Entry 2 (A, rating 2 → 9) stays last in section A, which loses entry 1: it moves from 0.1 to 0.0.
        #expect(Set(events.dropFirst().dropLast()) == ["delete 1 0.0->-", "insert 4 -->1.0", "move 2 0.1->0.0"])
        do {
            #expect(controller.sections?.map(\.numberOfObjects) == [1, 2])
            #expect(controller.object(at: IndexPath(item: 0, section: 1))["id"] as? Int == 4)
        }
    }

    @Test @MainActor func aMoveIsReportedWhenAnUpdatedObjectChangesPlace() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let ids = try await view.perform { () throws -> [ObjectID] in
            let entries = (1...3).map { insertEntry(view, id: $0, location: "A", rating: $0) }
            try view.save()
            return entries.map(\.objectID)
        }
        var request = FetchRequest(entityName: "JournalEntry")
        request.sortDescriptors = [FetchSortDescriptor(key: "rating")]
        let recorder = Recorder()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        controller.delegate = recorder
        try controller.performFetch()
        try await view.perform {
            try view.existingObject(with: ids[0])["rating"] = 10
            try view.save()
        }
        let events = await view.perform(schedule: .enqueued) { recorder.events }
        #expect(events == ["will", "move 1 0.0->0.2", "did"])
        _ = controller
    }
}
