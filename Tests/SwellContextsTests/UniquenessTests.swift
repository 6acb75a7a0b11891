import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 7 and 8: keys are honoured at every level, by the receiving level's merge policy.
@Suite(.onEveryStore) struct UniquenessTests {
    let directory = TemporaryDirectory()

    /// Saves an entry with `id` from a new child of the view context.
    private func saveFromChild(_ container: PersistentContainer, id: Int, location: String?, rating: Int?) async throws {
        let child = container.newBackgroundContext()
        try await child.perform {
            insertEntry(child, id: id, location: location, rating: rating)
            try child.save()
        }
    }

    private func entries(_ context: ManagedObjectContext) throws -> [(Int, String?, Int?)] {
        try context.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            return try context.fetch(request).map { ($0["id"] as! Int, $0["location"] as? String, $0["rating"] as? Int) }
        }
    }

    @Test func twoChildrenSavingOneKeyIntoAParentBecomeOneObject() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        try await saveFromChild(container, id: 1, location: "first", rating: 1)
        try await saveFromChild(container, id: 1, location: "second", rating: nil)
        let rows = try entries(container.viewContext)
        #expect(rows.count == 1)
        #expect(rows.first?.1 == "second")
        #expect(rows.first?.2 == 1)
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 1)
    }

    @Test func aKeyAlreadyInTheStoreIsHonouredAtAChildLevel() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        try await saveFromChild(container, id: 1, location: "stored", rating: 2)
        try await container.saveToDisk()
        try await saveFromChild(container, id: 1, location: "incoming", rating: nil)
        let view = container.viewContext
        let (rows, updated) = try await view.perform { () throws -> (Int, Int) in
            (try view.count(for: FetchRequest(entityName: "JournalEntry")), view.updatedObjects.count)
        }
        #expect(rows == 1)
        #expect(updated == 1)
        try await container.saveToDisk()
        #expect(try entries(container.viewContext).map(\.1) == ["incoming"])
    }

    @Test func aBatchOfUpsertsTellsInsertedUpdatedAndUnchangedApart() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let seed = container.newBackgroundContext()
        try await seed.perform {
            insertEntry(seed, id: 1, location: "same", rating: 1)
            insertEntry(seed, id: 2, location: "old", rating: 1)
            try seed.save()
        }
        try await container.saveToDisk()
        let child = container.newBackgroundContext()
        let recorder = SaveRecorder(child)
        try await child.perform {
            insertEntry(child, id: 1, location: "same", rating: 1)
            insertEntry(child, id: 2, location: "new", rating: 1)
            insertEntry(child, id: 3, location: "added", rating: 1)
            try child.save()
        }
        let changes = try #require(recorder.changes.first)
        #expect(changes.inserted.count == 1)
        #expect(changes.updated.count == 1)
        #expect(changes.updated.values.first == ["location"])
        #expect(changes.unchanged.count == 1)
        #expect(changes.merged.count == 2)
        try await container.saveToDisk()
        #expect(try entries(container.viewContext).map(\.1) == ["same", "new", "added"])
    }

    @Test func errorPolicyFailsTheSaveNamingTheObjectsAndTheKey() async throws {
        let container = try makeContainer(directory)
        try await saveFromChild(container, id: 9, location: "a", rating: nil)
        let child = container.newBackgroundContext()
        let (error, incoming) = await child.perform { () -> (StoreError?, ObjectID) in
            let entry = insertEntry(child, id: 9, location: "b")
            do { try child.save(); return (nil, entry.objectID) } catch { return (error as? StoreError, entry.objectID) }
        }
        guard let error, error.kind == .constraintConflict else {
            Issue.record("expected a constraint conflict, got \(String(describing: error))")
            return
        }
        #expect(error.entity == "JournalEntry")
        #expect(error.key == ["id": "9"])
        #expect(error.objects.contains(incoming))
        #expect(error.objects.count == 2)
        #expect(error.description.contains("id=9"))
        let stillPending = await child.perform { child.hasChanges }
        #expect(stillPending)
        #expect(try entries(container.viewContext).map(\.1) == ["a"])
    }

    @Test func objectTrumpLetsTheIncomingValuesWinPropertyByProperty() async throws {
        let rows = try await resolve(policy: .mergeByPropertyObjectTrump)
        #expect(rows.map(\.1) == ["incoming"])
        #expect(rows.map(\.2) == [2])
    }

    @Test func storeTrumpKeepsTheExistingValuesAndFillsMissingOnes() async throws {
        let rows = try await resolve(policy: .mergeByPropertyStoreTrump, existingRating: nil, incomingRating: 4)
        #expect(rows.map(\.1) == ["existing"])
        #expect(rows.map(\.2) == [4])
    }

    @Test func overwriteReplacesTheWholeObject() async throws {
        let rows = try await resolve(policy: .overwrite, existingRating: 2, incomingRating: nil)
        #expect(rows.map(\.1) == ["incoming"])
        #expect(rows.map(\.2) == [nil])
    }

    @Test func rollbackPolicyKeepsTheExistingObjectAsItWas() async throws {
        let rows = try await resolve(policy: .rollback, existingRating: 2, incomingRating: 5)
        #expect(rows.map(\.1) == ["existing"])
        #expect(rows.map(\.2) == [2])
    }

    @Test func policiesApplyAtTheStoreForARootContext() async throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump, .rollback] {
            let directory = TemporaryDirectory()
            let container = try makeContainer(directory)
            let writer = container.writerContext
            writer.mergePolicy = policy
            try await writer.perform {
                insertEntry(writer, id: 1, location: "existing", rating: nil)
                try writer.save()
                insertEntry(writer, id: 1, location: "incoming", rating: 3)
                try writer.save()
            }
            let observer = try makeRootContext(at: container.storeURL)
            let rows = try entries(observer)
            #expect(rows.count == 1)
            switch policy {
            case .mergeByPropertyObjectTrump, .overwrite: #expect(rows[0].1 == "incoming" && rows[0].2 == 3)
            case .mergeByPropertyStoreTrump: #expect(rows[0].1 == "existing" && rows[0].2 == 3)
            default: #expect(rows[0].1 == "existing" && rows[0].2 == nil)
            }
        }
    }

    @Test func objectsMergedIntoAnExistingOneTakeItsID() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        try await saveFromChild(container, id: 1, location: "first", rating: nil)
        let existing = try await container.viewContext.perform { () throws -> ObjectID in
            try container.viewContext.fetch(FetchRequest(entityName: "JournalEntry"))[0].objectID
        }
        let child = container.newBackgroundContext()
        let (before, after) = try await child.perform { () throws -> (ObjectID, ObjectID) in
            let entry = insertEntry(child, id: 1, location: "second")
            let before = entry.objectID
            try child.save()
            return (before, entry.objectID)
        }
        #expect(before != existing)
        #expect(after == existing)
    }

    /// An existing entry (saved, on disk) and an incoming one with the same key from a child, under `policy`.
    private func resolve(policy: MergePolicy, existingRating: Int? = 1, incomingRating: Int? = 2) async throws -> [(Int, String?, Int?)] {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        try await saveFromChild(container, id: 1, location: "existing", rating: existingRating)
        try await container.saveToDisk()
        container.viewContext.mergePolicy = policy
        try await saveFromChild(container, id: 1, location: "incoming", rating: incomingRating)
        let inView = try entries(container.viewContext)
        try await container.saveToDisk()
        let onDisk = try entries(try makeRootContext(at: container.storeURL))
        #expect(inView.map(\.1) == onDisk.map(\.1))
        #expect(inView.map(\.2) == onDisk.map(\.2))
        return onDisk
    }
}

/// Keys of every shape are found in the store when a save checks a batch of them at once.
@Suite(.onEveryStore) struct TextKeyTests {
    @Test func textKeysWithQuotesBackslashesAndControlCharactersAreMatched() async throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Tag", attributes: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "count", type: .integer, isOptional: true),
        ], uniquenessConstraint: ["name"])])
        let container = try makeContainer(directory, name: "tags", model: model)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        // PostgreSQL's text cannot hold NUL (its store refuses such a value: PostgresStoreTests).
        let names = ["plain", "with \"quotes\"", "back\\slash", "tab\there", "line\nbreak", "Ünïcødé 東京 😀"]
            + (TestStore.current == .postgres ? [] : ["null\u{0}byte"])
        for round in 1...2 {
            let child = container.newBackgroundContext()
            try await child.perform {
                for name in names {
                    let tag = child.insertNewObject(forEntityName: "Tag")
                    tag["name"] = name
                    tag["count"] = round
                }
                try child.save()
            }
            try await container.saveToDisk()
        }
        #expect(try storedRowCount(container.storeURL, entity: "Tag") == names.count)
        #expect(try count(container.viewContext, "Tag", "count == 2") == names.count)
    }
}
