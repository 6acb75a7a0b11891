import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store guarantees 62: an object whose row another context deleted and saved (or that a reset
/// parent never had) is never handed out as live, and a save carrying an edit to it fails.
@Suite(.onEveryStore) struct GhostObjectTests {
    let directory = TemporaryDirectory()

    /// Entry 1 saved, then deleted by another root: returns the stale root and the entry's ID.
    private func deletedElsewhere(readFirst: Bool) throws -> (context: ManagedObjectContext, id: ObjectID, url: URL) {
        let url = directory.storeURL("ghosts")
        let deleter = try makeRootContext(at: url)
        let id = try deleter.performAndWait {
            let entry = insertEntry(deleter, id: 1, location: "Pipeline")
            try deleter.save()
            return entry.objectID
        }
        let stale = try makeRootContext(at: url)
        stale.retainsRegisteredObjects = true
        if readFirst { try stale.performAndWait { _ = try stale.existingObject(with: id)["location"] } }
        try deleter.performAndWait {
            deleter.delete(try deleter.existingObject(with: id))
            try deleter.save()
        }
        return (stale, id, url)
    }

    /// Whether `hasChanges` agrees with the three sets.
    private func expectChangesAgree(_ context: ManagedObjectContext, _ comment: Comment) {
        context.performAndWait {
            let sets = context.insertedObjects.count + context.updatedObjects.count + context.deletedObjects.count
            #expect(context.hasChanges == (sets > 0), comment)
        }
    }

    @Test func objectWithAnIDThatIsGoneIsADeletedObjectAndAnEditToItFailsTheSave() throws {
        let (context, id, url) = try deletedElsewhere(readFirst: false)
        context.performAndWait {
            expectKind(.objectNotFound) { try context.existingObject(with: id) }
            let ghost = context.object(with: id)
            #expect(ghost.isDeleted)
            #expect(ghost["location"] == nil)
            #expect(ghost["date"] == nil, "a required date reads nil, not 1970")
            ghost["location"] = "edited"
            #expect(context.hasChanges)
        }
        expectChangesAgree(context, "after editing a gone object")
        let error = try #require(throws: StoreError.self) { try context.performAndWait { try context.save() } }
        #expect(error.kind == .mergeConflict)
        #expect(error.objects == [id])
        #expect(try storedRowCount(url) == 0, "the edit brought the row back")
    }

    @Test func aRegisteredObjectIsMarkedDeletedWhenRefreshed() throws {
        let (context, id, _) = try deletedElsewhere(readFirst: true)
        try context.performAndWait {
            let entry = try #require(context.registeredObject(for: id))
            #expect(!entry.isDeleted)
            context.refresh(entry, mergeChanges: true)
            #expect(entry.isDeleted)
            #expect(entry["location"] == nil)
            entry["location"] = "edited"
        }
        expectChangesAgree(context, "after editing a refreshed gone object")
        expectKind(.mergeConflict) { try context.performAndWait { try context.save() } }
    }

    @Test func aStaleRegisteredObjectsEditFailsTheSaveNamingIt() throws {
        let (context, id, url) = try deletedElsewhere(readFirst: true)
        context.mergePolicy = .mergeByPropertyObjectTrump
        let error = try #require(throws: StoreError.self) {
            try context.performAndWait {
                try #require(context.registeredObject(for: id))["location"] = "edited"
                try context.save()
            }
        }
        #expect(error.kind == .mergeConflict)
        #expect(error.conflicts.map(\.objectID) == [id])
        #expect(try storedRowCount(url) == 0)
    }

    @Test func anEditTheRollbackPolicyGaveUpLeavesTheObjectDeletedNotLive() throws {
        let (context, id, url) = try deletedElsewhere(readFirst: true)
        context.mergePolicy = .rollback
        try context.performAndWait {
            let entry = try #require(context.registeredObject(for: id))
            entry["location"] = "edited"
            try context.save()
            #expect(entry.isDeleted, "the row is gone: the object must not read as live")
            #expect(entry["location"] == nil, "neither the values it read nor its dropped edit")
            #expect(!context.hasChanges)
        }
        #expect(try storedRowCount(url) == 0)
    }

    @Test func aBatchedFaultWhoseRowWentIsADeletedObject() throws {
        let url = directory.storeURL("faults")
        let writer = try makeRootContext(at: url)
        try writer.performAndWait {
            for id in 1...30 { insertEntry(writer, id: id) }
            try writer.save()
        }
        let reader = try makeRootContext(at: url)
        let entries = try reader.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            request.fetchBatchSize = 10
            return try reader.fetch(request)
        }
        try writer.performAndWait {
            for entry in try writer.fetch(FetchRequest(entityName: "JournalEntry")) where (entry["id"] as? Int ?? 0) > 20 {
                writer.delete(entry)
            }
            try writer.save()
        }
        reader.performAndWait {
            #expect(entries[0]["id"] as? Int == 1)
            let gone = entries[25]
            #expect(gone["id"] == nil)
            #expect(gone.isDeleted)
            #expect(!entries[15].isDeleted)
        }
    }

    @Test func aChildsObjectWhoseInsertTheResetParentDroppedCannotBeSaved() throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = view.performAndWait { insertEntry(view, id: 1, location: "unsaved").objectID }
        let child = container.newBackgroundContext()
        child.retainsRegisteredObjects = true
        let seen = try child.performAndWait { try child.existingObject(with: id)["location"] as? String }
        #expect(seen == "unsaved")
        view.performAndWait { view.reset() }
        try child.performAndWait {
            expectKind(.objectNotFound) { try child.existingObject(with: id) }
            let entry = try #require(child.registeredObject(for: id))
            entry["location"] = "edited"
            let error = try #require(throws: StoreError.self) { try child.save() }
            #expect(error.kind == .mergeConflict)
            #expect(error.objects == [id])
            #expect(child.hasChanges, "a failed save keeps the child's changes")
        }
        view.performAndWait {
            #expect(!view.hasChanges)
            #expect(view.insertedObjects.isEmpty && view.updatedObjects.isEmpty)
        }
    }

    @Test func withoutDeletingInaccessibleFaultsAGoneObjectReadsNilButIsNotDeleted() throws {
        let (context, id, _) = try deletedElsewhere(readFirst: false)
        context.shouldDeleteInaccessibleFaults = false
        context.performAndWait {
            let ghost = context.object(with: id)
            #expect(!ghost.isDeleted)
            #expect(ghost["location"] == nil)
        }
    }
}
