import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 17 and 18: IDs are permanent values; look-ups by ID.
@Suite(.onEveryStore) struct ObjectIDTests {
    let directory = TemporaryDirectory()

    @Test func idsAreSendableHashableCodableValues() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = await view.perform { insertEntry(view, id: 1).objectID }
        let encoded = try JSONEncoder().encode([id])
        let decoded = try JSONDecoder().decode([ObjectID].self, from: encoded)
        #expect(decoded == [id])
        #expect(Set([id, decoded[0]]).count == 1)
        #expect(id.uriRepresentation().scheme == "swell")
        #expect(ObjectID(uriRepresentation: id.uriRepresentation()) == id)
        #expect(String(decoding: encoded, as: UTF8.self).contains("JournalEntry"))
    }

    @Test func idsArePermanentFromInsertAcrossEverySave() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let (before, afterChildSave) = try await worker.perform { () throws -> (ObjectID, ObjectID) in
            let entry = insertEntry(worker, id: 1, location: "Rockaway")
            let before = entry.objectID
            try worker.save()
            return (before, entry.objectID)
        }
        #expect(before == afterChildSave)
        let inView = try await container.viewContext.perform { try container.viewContext.existingObject(with: before)["location"] as? String }
        #expect(inView == "Rockaway")
        try await container.saveToDisk()
        let observer = try makeRootContext(at: container.storeURL)
        let onDisk = try observer.performAndWait { try observer.existingObject(with: before)["location"] as? String }
        #expect(onDisk == "Rockaway")
        let viaWorker = try await worker.perform { try worker.existingObject(with: before)["location"] as? String }
        #expect(viaWorker == "Rockaway")
    }

    @Test func objectWithReturnsTheReceivingContextsViewOfTheValues() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1, rating: 1)
            try view.save()
            return entry.objectID
        }
        let child = container.newBackgroundContext()
        let (childRating, viewRating) = try await child.perform { () throws -> (Int?, Int?) in
            let object = child.object(with: id)
            object["rating"] = 4
            let again = child.object(with: id)
            #expect(again === object)
            let viewRating = view.performAndWait { view.object(with: id)["rating"] as? Int }
            return (object["rating"] as? Int, viewRating)
        }
        #expect(childRating == 4)
        #expect(viewRating == 1)
    }

    @Test func existingObjectThrowsWhenThereIsNone() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let missing = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1)
            try view.save()
            let id = entry.objectID
            view.delete(entry)
            try view.save()
            return id
        }
        let found = await view.perform { (try? view.existingObject(with: missing)) != nil }
        #expect(!found)
    }
}
