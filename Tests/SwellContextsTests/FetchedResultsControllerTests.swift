import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 26: sections, index paths and change reports after saves that reach the context.
@Suite(.onEveryStore) struct FetchedResultsControllerTests {
    let directory = TemporaryDirectory()

    /// Used on the main queue only (the view context's queue).
    /// `@unchecked Sendable`: the controller calls it on the main queue only, where the test reads it.
    final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) { events.append("will") }
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            func text(_ path: IndexPath?) -> String { path.map { "\($0.section).\($0.item)" } ?? "-" }
            events.append("\(type) \(object["id"]!) \(text(indexPath))->\(text(newIndexPath))")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) { events.append("did") }
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

    /// Issue 20, 3: sections by a to-one key path (Store guarantees 26, 33): before, the controller read
    /// `value(forKey: "spot.name")`, which is no attribute, and put everything in one section "".
    @Test @MainActor func sectionsByAToOneKeyPath() async throws {
        let container = try makeContainer(directory, name: "sections", model: relationshipModel)
        let view = container.viewContext
        try await view.perform {
            let ocean = view.insertNewObject(forEntityName: "Spot")
            ocean["name"] = "Ocean Beach"
            let pacifica = view.insertNewObject(forEntityName: "Spot")
            pacifica["name"] = "Pacifica"
            for (id, spot) in [(1, pacifica), (2, ocean), (3, nil), (4, pacifica)] as [(Int, ManagedObject?)] {
                let entry = view.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["spot"] = spot
            }
            try view.save()
        }
        var request = FetchRequest(entityName: "Entry")
        request.sortDescriptors = [FetchSortDescriptor(key: "spot.name"), FetchSortDescriptor(key: "id")]
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view,
                                                  sectionNameKeyPath: "spot.name", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["", "Ocean Beach", "Pacifica"])
        #expect(controller.sections?.map { $0.objects.map { $0["id"] as? Int } } == [[3], [2], [1, 4]])
        // The key path is read as the context sees it, also after a child moves an entry.
        let child = container.newBackgroundContext()
        try await child.perform {
            var one = FetchRequest(entityName: "Entry")
            one.predicate = FetchPredicate(format: "id == %@", 3)
            var spot = FetchRequest(entityName: "Spot")
            spot.predicate = FetchPredicate(format: "name == %@", "Ocean Beach")
            try child.fetch(one).first?["spot"] = try child.fetch(spot).first
            try child.save()
        }
        _ = await view.perform(schedule: .enqueued) { true }
        #expect(controller.sections?.map(\.name) == ["Ocean Beach", "Pacifica"])
        #expect(controller.sections?.map { $0.objects.map { $0["id"] as? Int } } == [[2, 3], [1, 4]])
    }

    /// `value(forKeyPath:)` follows to-ones, maps over to-manys, and counts them.
    @Test @MainActor func valueForKeyPathFollowsRelationships() async throws {
        let container = try makeContainer(directory, name: "paths", model: relationshipModel)
        let view = container.viewContext
        let spot = view.insertNewObject(forEntityName: "Spot")
        spot["name"] = "Ocean Beach"
        for id in 1...2 {
            let entry = view.insertNewObject(forEntityName: "Entry")
            entry["id"] = id
            entry["title"] = "t\(id)"
            entry["spot"] = spot
        }
        let lonely = view.insertNewObject(forEntityName: "Entry")
        lonely["id"] = 3
        #expect(lonely.value(forKeyPath: "spot.name") == nil)
        let first = try view.fetch(FetchRequest(entityName: "Entry")).first { $0["id"] as? Int == 1 }
        #expect(first?.value(forKeyPath: "spot.name") as? String == "Ocean Beach")
        #expect(first?.value(forKeyPath: "title") as? String == "t1")
        #expect(spot.value(forKeyPath: "entries.title") as? Set<AnyHashable> == ["t1", "t2"])
        #expect(spot.value(forKeyPath: "entries.@count") as? Int == 2)
        #expect(first?.value(forKeyPath: "spot.entries.@count") as? Int == 2)
        #expect(first?.value(forKeyPath: "nothing.here") == nil)
    }
}
