import Foundation
import Logging
import SwellStore
import SwellTestSupport
import Testing
import SwellStoreTestSupport

/// What cannot be thrown is reported, not dropped (issue 13, item 5): reading a fault's
/// values and a fetched results controller's refetch after a save have no caller to throw
/// to; their failures reach the context's `logger` (and the controller's delegate).
@Suite(.onEveryStore) struct UnthrowableFailureTests {
    let directory = TemporaryDirectory()

    /// Used on the main queue only (the view context's queue).
    /// `@unchecked Sendable`: the controller calls it on the main queue only, where the test reads it.
    final class FailureRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var failures: [any Error] = []
        var changes = 0
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) { changes += 1 }
        func controller(_ controller: FetchedResultsController<ManagedObject>, didFailToUpdateWith error: any Error) { failures.append(error) }
    }

    @Test func aBatchOfFaultsThatCannotBeReadIsLoggedAndStaysFaults() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            for id in 1...6 { insertEntry(worker, id: id, location: "beach \(id)") }
            try worker.save()
        }
        try await container.saveToDisk()
        let log = CapturedLog()
        // Set once on the writer: the view context and its children use it too.
        container.writerContext.logger = log.logger
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            request.fetchBatchSize = 2
            let entries = try reader.fetch(request)
            #expect(entries.count == 6)
            #expect(entries[0]["location"] as? String == "beach 1")
            try container.close()
            // The batch holding entries 5 and 6 cannot be read any more: nil, still a fault, and said.
            #expect(entries[4]["location"] == nil)
            #expect(entries[4].isFault)
            #expect(entries[5]["location"] == nil)   // the same batch: tried again, not logged again
            #expect(entries[4].isFault && entries[5].isFault)
        }
        let entries = log.entries.withLock { $0 }
        #expect(entries.count == 1)
        #expect(entries.first?.level == .error)
        #expect(entries.first?.message == "cannot read a batch of faults")
        #expect(entries.first?.metadata["entity"] == "JournalEntry")
        #expect(entries.first?.metadata["objects"] == "2")
        #expect(entries.first?.metadata["error"] == StoreError.noPersistentStore.description)
    }

    @Test @MainActor func aRefetchThatFailsReachesTheDelegateAndTheLog() async throws {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Note", attributes: [
            AttributeDescription(name: "text", type: .string),
        ], uniquenessConstraint: [])])
        let container = try makeContainer(directory, name: "notes", model: model)
        let view = container.viewContext
        try await view.perform {
            view.insertNewObject(forEntityName: "Note")["text"] = "first"
            try view.save()
        }
        let log = CapturedLog()
        view.logger = log.logger
        let recorder = FailureRecorder()
        let controller = FetchedResultsController(fetchRequest: FetchRequest(entityName: "Note"), managedObjectContext: view,
                                                  sectionNameKeyPath: nil, cacheName: nil)
        controller.delegate = recorder
        try controller.performFetch()
        #expect(controller.fetchedObjects?.count == 1)
        try container.close()
        // Another save's changes are merged into the view context (as from a second root on the
        // coordinator); fetching the results again needs the closed store.
        var changes = ContextDidSaveChanges()
        changes.updated = [try #require(controller.fetchedObjects?.first).objectID: ["text"]]
        view.mergeChanges(changes)
        #expect(recorder.changes == 0)
        #expect(recorder.failures.count == 1)
        if case .noPersistentStore? = recorder.failures.first as? StoreError {} else {
            Issue.record("expected noPersistentStore, got \(recorder.failures)")
        }
        #expect(controller.fetchedObjects?.count == 1)
        let entries = log.entries.withLock { $0 }
        #expect(entries.map(\.message) == ["a fetched results controller could not fetch its results again"])
        #expect(entries.first?.metadata["entity"] == "Note")
    }

    /// A merge that says an object was deleted checks the parent first; when the parent (the
    /// store) cannot be read, the object and its unsaved change stay, and the log says why.
    @Test func aMergeThatCannotReadTheParentKeepsTheObjectAndItsChanges() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            insertEntry(worker, id: 1, location: "saved")
            try worker.save()
        }
        try await container.saveToDisk()
        let log = CapturedLog()
        let writer = container.writerContext
        writer.logger = log.logger
        try writer.performAndWait {
            let entry = try writer.fetch(FetchRequest(entityName: "JournalEntry"))[0]
            entry["location"] = "edited, not saved"
            try container.close()
            var changes = ContextDidSaveChanges()
            changes.deleted = [entry.objectID]
            writer.mergeChanges(changes)
            #expect(entry.managedObjectContext === writer)
            #expect(entry["location"] as? String == "edited, not saved")
            #expect(writer.hasChanges)
        }
        let entries = log.entries.withLock { $0 }
        #expect(entries.map(\.message) == ["cannot read an object's saved values"])
        #expect(entries.first?.metadata["while"] == "merging a save")
    }
}
