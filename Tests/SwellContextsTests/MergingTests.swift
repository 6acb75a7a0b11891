import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 19–21: did-save notices, merging, refreshing.
@Suite(.onEveryStore) struct MergingTests {
    let directory = TemporaryDirectory()

    @Test func everySavePostsItsInsertedUpdatedAndDeletedIDsToThatContextsObservers() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let worker = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        let workerRecorder = SaveRecorder(worker)
        let otherRecorder = SaveRecorder(other)
        let (kept, removed) = try await worker.perform { () throws -> (ObjectID, ObjectID) in
            let a = insertEntry(worker, id: 1, rating: 1)
            let b = insertEntry(worker, id: 2)
            try worker.save()
            a["rating"] = 3
            worker.delete(b)
            let c = insertEntry(worker, id: 3)
            try worker.save()
            _ = c
            return (a.objectID, b.objectID)
        }
        let changes = workerRecorder.changes
        #expect(changes.count == 2)
        #expect(changes[0].inserted.count == 2)
        #expect(changes[1].updated[kept] == ["rating"])
        #expect(changes[1].deleted == [removed])
        #expect(changes[1].inserted.count == 1)
        #expect(otherRecorder.changes.isEmpty)
        _ = view
    }

    @Test func theNotificationCarriesTheDocumentedUserInfoKeys() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let box = NotificationBox()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: worker, queue: nil) { note in
            box.set(note.userInfo?["inserted"] as? Set<ObjectID>)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let id = try await worker.perform { () throws -> ObjectID in
            let entry = insertEntry(worker, id: 1)
            try worker.save()
            return entry.objectID
        }
        #expect(box.value == [id])
    }

    @Test func mergeChangesBringsAnotherRootsSaveIntoAContext() async throws {
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let first = ManagedObjectContext(concurrencyType: .privateQueue)
        first.persistentStoreCoordinator = coordinator
        let second = ManagedObjectContext(concurrencyType: .privateQueue)
        second.persistentStoreCoordinator = coordinator
        second.retainsRegisteredObjects = true
        let id = try await first.perform { () throws -> ObjectID in
            let entry = insertEntry(first, id: 1, rating: 1)
            try first.save()
            return entry.objectID
        }
        let seenBefore = try await second.perform { () throws -> Int? in try second.existingObject(with: id)["rating"] as? Int }
        #expect(seenBefore == 1)
        let box = NotificationBox()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: first, queue: nil) { note in
            box.setNote(note)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try await first.perform {
            try first.existingObject(with: id)["rating"] = 4
            try first.save()
        }
        let stale = await second.perform { second.registeredObject(for: id)?["rating"] as? Int }
        #expect(stale == 1)
        let note = try #require(box.note)
        let merged = second.performAndWait { () -> Int? in
            second.mergeChanges(fromContextDidSave: note)
            return second.registeredObject(for: id)?["rating"] as? Int
        }
        #expect(merged == 4)
    }

    @Test func automaticallyMergesChangesFromParentFollowsSiblingSaves() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1, rating: 1)
            try view.save()
            return entry.objectID
        }
        let follower = container.newBackgroundContext()
        follower.automaticallyMergesChangesFromParent = true
        follower.retainsRegisteredObjects = true
        let bystander = container.newBackgroundContext()
        bystander.retainsRegisteredObjects = true
        _ = try await follower.perform { try follower.existingObject(with: id)["rating"] as? Int }
        _ = try await bystander.perform { try bystander.existingObject(with: id)["rating"] as? Int }
        let editor = container.newBackgroundContext()
        try await editor.perform {
            try editor.existingObject(with: id)["rating"] = 5
            try editor.save()
        }
        // The merge is enqueued on the follower's queue by the save; a block enqueued after it sees its effect.
        let followed = await follower.perform(schedule: .enqueued) { follower.registeredObject(for: id)?["rating"] as? Int }
        let unchanged = await bystander.perform(schedule: .enqueued) { bystander.registeredObject(for: id)?["rating"] as? Int }
        #expect(followed == 5)
        #expect(unchanged == 1)
    }

    @Test func refreshKeepsOrDropsUnsavedChanges() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1, location: "A", rating: 1)
            try view.save()
            return entry.objectID
        }
        let child = container.newBackgroundContext()
        try await child.perform {
            let entry = try child.existingObject(with: id)
            entry["location"] = "child edit"
            // Meanwhile the parent changes the rating.
            try view.performAndWait {
                try view.existingObject(with: id)["rating"] = 9
            }
            #expect(entry["rating"] as? Int == 1)
            child.refresh(entry, mergeChanges: true)
            #expect(entry["rating"] as? Int == 9)
            #expect(entry["location"] as? String == "child edit")
            child.refresh(entry, mergeChanges: false)
            #expect(entry["location"] as? String == "A")
            #expect(!child.hasChanges)
            try view.performAndWait { try view.existingObject(with: id)["rating"] = 2 }
            child.refreshAllObjects()
            #expect(entry["rating"] as? Int == 2)
        }
    }
}
