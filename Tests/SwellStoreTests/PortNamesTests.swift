import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Core Data names a port reaches for: a typed controller (statement 64), `Entity.fetchRequest()`,
/// `count(for:)` of a descriptor, `registeredObject(for:)`, `changedValuesForCurrentEvent()`,
/// `loadPersistentStores(completionHandler:)`, `shouldDeleteInaccessibleFaults`.
@Suite(.onEveryStore) struct PortNamesTests {
    let directory = TemporaryDirectory()
    let day = Date(timeIntervalSince1970: 1_700_000_000)

    /// Records what a typed controller hands its delegate.
    /// `@unchecked Sendable`: the controller calls it on its context's queue, where the test reads it.
    final class TypedRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var rows: [(JournalEntry, FetchedResultsChangeType)] = []
        var differences: [CollectionDifference<ObjectID>] = []
        func controller(_ controller: FetchedResultsController<JournalEntry>, didChange object: JournalEntry, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            rows.append((object, type))
        }
        func controller(_ controller: FetchedResultsController<JournalEntry>, didChangeContentWith difference: CollectionDifference<ObjectID>) {
            differences.append(difference)
        }
    }

    @Test func aTypedControllerHandsOutTheTypedClass() throws {
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for id in 1...3 { context.insert(JournalEntry(id: id, date: day, height: id == 1 ? "0ft" : id == 2 ? "2ft" : "1ft", rating: id)) }
            try context.save()
            let controller = FetchedResultsController<JournalEntry>(
                fetchDescriptor: FetchDescriptor(predicate: #Predicate { $0.rating ?? 0 >= 2 }, sortBy: [SortDescriptor(\.id)]),
                context: context, sectionNameKeyPath: "height")
            let recorder = TypedRecorder()
            controller.delegate = recorder
            try controller.performFetch()
            let first: JournalEntry = controller.object(at: IndexPath(item: 0, section: 0))
            #expect(first.id == 2)
            #expect(controller.fetchedObjects?.map(\.id) == [2, 3])
            #expect(controller.sections?.map { $0.objects.map(\.id) } == [[2], [3]])
            #expect(controller.indexPath(forObject: first) == IndexPath(item: 0, section: 0))
            let entries = try context.fetch(FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.id)]))
            #expect(first === entries[1], "the controller's objects are the context's typed objects")
            entries[0].rating = 5
            context.processPendingChanges()
            #expect(recorder.rows.map { $0.0.id } == [1])
            #expect(recorder.rows.first?.0 === entries[0])
            #expect(recorder.rows.first?.1 == .insert)
            #expect(recorder.differences.count == 1)
            #expect(recorder.differences.first?.insertions.count == 1 && recorder.differences.first?.removals.isEmpty == true)
        }
    }

    @Test func aTypedDescriptorThatCannotBeCompiledIsThrownByPerformFetch() throws {
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController<JournalEntry>(
            fetchDescriptor: FetchDescriptor(predicate: #Predicate { $0.rating ?? 0 > $0.id }), context: context)
        let error = #expect(throws: StoreError.self) { try context.performAndWait { try controller.performFetch() } }
        #expect(error?.kind == .invalidPredicate)
        #expect(controller.fetchedObjects == nil)
    }

    @Test func anEntityClassMakesItsFetchRequestAndContextsCountIt() throws {
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for id in 1...4 { context.insert(JournalEntry(id: id, date: day, rating: id)) }
            try context.save()
            context.insert(JournalEntry(id: 5, date: day, rating: 5))
            var request = JournalEntry.fetchRequest()
            #expect(try context.count(for: request) == 5, "unsaved inserts are counted")
            request.predicate = #Predicate { $0.rating ?? 0 >= 3 }
            request.sortBy = [SortDescriptor(\.id, order: .reverse)]
            #expect(try context.fetch(request).map(\.id) == [5, 4, 3])
            #expect(try context.count(for: request) == context.fetch(request).count)
            #expect(try context.count(for: request) == context.fetchCount(request))
        }
    }

    @Test func registeredObjectNeverLoadsAnObject() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let id = try context.performAndWait {
            let id = insertEntry(context, id: 1).objectID
            try context.save()
            context.reset()
            return id
        }
        try context.performAndWait {
            #expect(context.registeredObject(for: id) == nil, "a reset context has no object for the ID")
            let fetched = try context.existingObject(with: id)
            #expect(context.registeredObject(for: id) === fetched)
            #expect(context.registeredObject(for: id)?.objectID == id)
        }
    }

    @Test func changedValuesForCurrentEventHoldTheEventsChangesWithTheirOldValues() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let entry = try context.performAndWait {
            let entry = insertEntry(context, id: 1, location: "Reef", rating: 1)
            try context.save()
            return UncheckedBox(entry)
        }.value
        context.performAndWait {
            // The first call, before anything is kept: measured from the saved values.
            entry["rating"] = 2
            #expect(entry.changedValuesForCurrentEvent() as? [String: Int] == ["rating": 1])
        }
        context.performAndWait {
            #expect(entry.changedValuesForCurrentEvent().isEmpty, "a new event has changed nothing yet")
            entry["location"] = "Bay"
            entry["location"] = "Point"
            #expect(entry.changedValuesForCurrentEvent() as? [String: String] == ["location": "Reef"])
            #expect(Set(entry.changedValues().keys) == ["rating", "location"], "changedValues() has every unsaved change")
            context.processPendingChanges()
            #expect(entry.changedValuesForCurrentEvent().isEmpty)
            entry["rating"] = nil
            #expect(entry.changedValuesForCurrentEvent() as? [String: Int] == ["rating": 2])
        }
        context.performAndWait {
            let new = insertEntry(context, id: 2)
            #expect(Set(new.changedValuesForCurrentEvent().keys) == ["id", "date"])
            #expect(new.changedValuesForCurrentEvent()["id"] is NSNull, "a new object's values were nil")
        }
    }

    @Test func loadPersistentStoresCallsItsHandlerOnceWithTheStoreOrTheError() throws {
        let container = PersistentContainer(name: "journal", managedObjectModel: journalModel, storeURL: directory.storeURL("journal"))
        var calls: [(PersistentStoreDescription, (any Error)?)] = []
        container.loadPersistentStores { description, error in calls.append((description, error)) }
        #expect(calls.count == 1)
        #expect(calls.first?.0.url == directory.storeURL("journal"))
        #expect(calls.first?.1 == nil)
        #expect(container.persistentStoreDescriptions.map(\.url) == [directory.storeURL("journal")])
        // A store file inside a regular file: it cannot be made.
        let blocker = directory.file("blocker")
        try Data("not a folder".utf8).write(to: blocker)
        let nowhere = blocker.appendingPathComponent("journal.sqlite")
        let broken = PersistentContainer(name: "journal", managedObjectModel: journalModel, storeURL: nowhere)
        var failure: (any Error)?
        var called = 0
        broken.loadPersistentStores { description, error in
            called += 1
            #expect(description.url == nowhere)
            failure = error
        }
        #expect(called == 1)
        #expect(failure != nil)
    }

    @Test func shouldDeleteInaccessibleFaultsIsOnByDefault() {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        #expect(context.shouldDeleteInaccessibleFaults)
        context.shouldDeleteInaccessibleFaults = false
        #expect(!context.shouldDeleteInaccessibleFaults)
    }
}
