import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellTestSupport
import SwellStoreTestSupport

/// `@Entity` classes over contexts (store guarantees 50–51): typed values round-trip
/// through every level, one typed object per managed object, relationships both ways,
/// lookups by ID, models mixing typed and described entities.
@Suite(.onEveryStore) struct TypedEntityTests {
    @Test func valuesAndRelationshipsRoundTripThroughTheStack() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let worker = container.newBackgroundContext()
        let ids = try worker.performAndWait {
            let spot = Spot(name: "Ocean Beach", latitude: 37.76)
            let entry = JournalEntry(id: 1, date: Date(timeIntervalSince1970: 1_700_000_000.5), height: "2-3 ft", rating: 4)
            entry.spot = spot
            entry.isFavourite = true
            entry.conditions = JSONText(#"{"wind":"light"}"#)
            entry.tags = [Tag(label: "glassy"), Tag(label: "crowded")]
            entry.scratch = 9
            // Nothing is in a context yet: the values wait on the typed objects.
            #expect(entry.managedObject == nil && entry.rating == 4 && entry.spot === spot)
            worker.insert(entry)
            // Inserting the entry inserted what it points to, and the inverses are in step.
            #expect(spot.managedObject?.isInserted == true)
            #expect(spot.entries == [entry])
            #expect(entry.tags.map(\.label).sorted() == ["crowded", "glassy"])
            #expect(entry.managedObject?.value(forKey: "rating") as? Int == 4)
            try worker.save()
            return (entry.objectID, spot.objectID)
        }
        try await container.saveToDisk()
        #expect(JournalEntry.entityDescription.attribute(named: "scratch") == nil, "@Transient is not stored")

        let reader = try makeRootContext(at: directory.storeURL("typed"), model: typedModel)
        try reader.performAndWait {
            let entries = try reader.fetch(FetchDescriptor<JournalEntry>())
            let entry = try #require(entries.first)
            #expect(entries.count == 1)
            #expect(entry.objectID == ids.0)
            #expect(entry.date == Date(timeIntervalSince1970: 1_700_000_000.5))
            #expect(entry.height == "2-3 ft" && entry.rating == 4 && entry.isFavourite)
            #expect(entry.conditions == JSONText(#"{"wind":"light"}"#))
            #expect(entry.scratch == 0, "a @Transient property starts afresh on a fetched object")
            let spot = try #require(entry.spot)
            #expect(spot.objectID == ids.1 && spot.name == "Ocean Beach" && spot.latitude == 37.76)
            #expect(spot.entries.first === entry)
            #expect(Set(entry.tags.map(\.label)) == ["glassy", "crowded"])
            #expect(entry.tags.allSatisfy { $0.entries == [entry] })
        }
    }

    @Test func aContextHandsOutOneTypedObjectPerObject() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.insert(JournalEntry(id: 1, date: Date(timeIntervalSince1970: 0)))
            try context.save()
            let first = try context.fetch(FetchDescriptor<JournalEntry>())
            let second = try context.fetch(FetchDescriptor<JournalEntry>())
            #expect(first[0] === second[0])
            let byID: JournalEntry = context.object(with: first[0].objectID)
            #expect(byID === first[0])
            #expect(try context.existingObject(with: first[0].objectID, as: JournalEntry.self) === first[0])
            #expect(first[0].managedObject?.model(as: JournalEntry.self) === first[0])
            #expect(first[0].managedObject?.model(as: Spot.self) == nil)
            let error = #expect(throws: StoreError.self) { try context.existingObject(with: first[0].objectID, as: Spot.self) }
            #expect(error?.kind == .objectNotFound)
        }
    }

    @Test func typedSettersAreChangesLikeAnyOther() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entry = JournalEntry(context: context)
            // Never set: a non-optional reads its zero, an optional nil.
            #expect(entry.id == 0 && entry.rating == nil && entry.date == Date(timeIntervalSince1970: 0))
            #expect(entry.isFavourite == false && entry.managedObject?.value(forKey: "isFavourite") as? Bool == false,
                    "an initial value is the new object's value")
            #expect(entry.managedObject?.isInserted == true && context.hasChanges)
            entry.id = 7
            entry.date = Date(timeIntervalSince1970: 10)
            try context.save()
            entry.rating = 5
            #expect(entry.managedObject?.isUpdated == true)
            #expect(entry.managedObject?.changedValues()["rating"] as? Int == 5)
            context.rollback()
            #expect(entry.rating == nil, "rollback reverts what a typed setter set")
            context.delete(entry)
            #expect(entry.managedObject?.isDeleted == true)
        }
    }

    @Test func aMissingRequiredValueOfATypedObjectFailsTheSave() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        context.performAndWait {
            _ = Spot(context: context)  // name never set
            let error = #expect(throws: StoreError.self) { try context.save() }
            #expect(error?.kind == .missingRequiredValue && error?.attribute == "name")
        }
    }

    @Test func savesReachTheViewContextsTypedObjects() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let view = container.viewContext
        let entry = try view.performAndWait {
            let entry = JournalEntry(id: 1, date: Date(timeIntervalSince1970: 0), rating: 2)
            view.insert(entry)
            try view.save()
            return UncheckedBox(entry)
        }
        let id = view.performAndWait { entry.value.objectID }
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            let mine: JournalEntry = worker.object(with: id)
            #expect(mine !== entry.value)
            #expect(mine.rating == 2, "the worker sees what its parent saved")
            mine.rating = 5
            try worker.save()
        }
        view.performAndWait {
            #expect(entry.value.rating == 5, "the view context's typed object reads the merged value")
        }
        try await container.saveToDisk()
        let reader = try makeRootContext(at: directory.storeURL("typed"), model: typedModel)
        try reader.performAndWait {
            let ratings = try reader.fetch(FetchDescriptor<JournalEntry>()).map(\.rating)
            #expect(ratings == [5])
        }
    }

    @Test func aModelMixesTypedAndDescribedEntities() throws {
        #expect(typedModel.entities.map(\.name) == ["JournalEntry", "Spot", "Tag", "Album", "Photo", "Region", "Note"])
        let entities = typedModel.entitiesByName
        // One side named the inverse, or neither did: the model completes both.
        #expect(entities["Spot"]?.relationship(named: "entries")?.inverse == "spot")
        #expect(entities["Tag"]?.relationship(named: "entries")?.inverse == "tags")
        #expect(entities["Spot"]?.relationship(named: "region")?.inverse == "spots")
        #expect(entities["Region"]?.relationship(named: "spots")?.inverse == "region")
        #expect(Spot.entityDescription.relationship(named: "entries")?.inverse == nil, "the class's own description names none")
        #expect(JournalEntry.entityDescription.uniquenessConstraint == ["id"])
        #expect(Tag.entityDescription.uniquenessConstraint == ["label"])
        let spot = try #require(JournalEntry.entityDescription.relationship(named: "spot"))
        #expect(spot.destination == "Spot" && spot.inverse == "entries" && !spot.isToMany && spot.deleteRule == .nullify)
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.insertNewObject(forEntityName: "Note")["text"] = "described"
            let region = Region(name: "Bay Area"), spot = Spot(name: "Montara")
            spot.region = region
            context.insert(spot)
            #expect(region.spots == [spot], "the paired inverse follows")
            context.insert(Spot(name: "Pacifica"))
            try context.save()
            #expect(try context.count(for: FetchRequest(entityName: "Note")) == 1)
            let names = try context.fetch(FetchRequest(entityName: "Spot")).compactMap { $0.model(as: Spot.self)?.name }
            #expect(Set(names) == ["Pacifica", "Montara"])
        }
    }

    @Test func uniquenessHoldsForTypedObjects() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        context.performAndWait {
            context.insert(Tag(label: "glassy"))
            context.insert(Tag(label: "glassy"))
            let error = #expect(throws: StoreError.self) { try context.save() }
            #expect(error?.kind == .constraintConflict && error?.entity == "Tag")
        }
    }
}

extension TypedEntityTests {
    @Test func theContractsOwnExampleWorksAsWritten() async throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(entities: [ContractEntry.self, ContractSpot.self])
        let container = try makeContainer(directory, name: "contract", model: model)
        try await container.performBackgroundTask { context in
            let entry = ContractEntry(context: context)
            entry.id = 1
            entry.date = Date(timeIntervalSince1970: 60)
            entry.rating = 4
            let spot = ContractSpot(context: context)
            spot.name = "Ocean Beach"
            entry.spot = spot
            #expect(spot.entries == [entry])
            try context.save()
        }
        try await container.saveToDisk()
        let reader = try makeRootContext(at: directory.storeURL("contract"), model: model)
        try reader.performAndWait {
            let good = try reader.fetch(FetchDescriptor<ContractEntry>(predicate: #Predicate { $0.rating ?? 0 >= 3 },
                                                                       sortBy: [SortDescriptor(\.date, order: .reverse)]))
            #expect(good.map(\.id) == [1] && good.first?.spot?.name == "Ocean Beach")
            let id = try #require(good.first?.objectID)
            let same: ContractEntry = reader.object(with: id)
            #expect(same === good.first)
        }
    }

    @Test func insertingAGraphKeepsEveryLinkWhateverThePropertiesAreCalled() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let album = Album(title: "Winter"), photo = Photo(caption: "Mavericks"), other = Photo(caption: "Pacifica")
            photo.album = album
            album.cover = photo
            album.photos = [other]
            context.insert(album)
            // Inserting the cover linked it into photos (its album is this one); photos' own
            // value then added to that rather than replacing it.
            #expect(photo.album === album && album.cover === photo && photo.coverOf === album)
            #expect(Set(album.photos.map(\.caption)) == ["Mavericks", "Pacifica"] && other.album === album)
            try context.save()
            context.reset()
            let saved = try #require(try context.fetch(FetchDescriptor<Album>()).first)
            #expect(saved.cover?.caption == "Mavericks" && Set(saved.photos.map(\.caption)) == ["Mavericks", "Pacifica"])
        }
    }

    @Test func faultsNoticesAndTheControllerWorkOnTypedObjects() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        let box = NotificationBox()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: context,
                                                           queue: nil) { note in
            box.set(note.userInfo?["inserted"] as? Set<ObjectID>)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try context.performAndWait {
            var inserted: Set<ObjectID> = []
            for id in 0..<50 {
                let entry = JournalEntry(id: id, date: Date(timeIntervalSince1970: Double(id)), rating: id % 5)
                context.insert(entry)
                inserted.insert(entry.objectID)
            }
            try context.save()
            #expect(box.value == inserted, "the did-save notice names the typed objects' IDs")
            context.reset()
            var batched = FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.id)])
            batched.fetchBatchSize = 10
            let entries = try context.fetch(batched)
            #expect(entries.last?.managedObject?.isFault == true, "a batched fetch's later objects are faults")
            #expect(entries.map(\.rating) == (0..<50).map { $0 % 5 }, "reading a typed property fires the fault")
            let controller = try FetchedResultsController(
                fetchDescriptor: FetchDescriptor<JournalEntry>(predicate: #Predicate { $0.rating == 4 }, sortBy: [SortDescriptor(\.id)]),
                managedObjectContext: context)
            try controller.performFetch()
            let fetched = controller.fetchedObjects
            #expect(fetched?.map(\.id) == [4, 9, 14, 19, 24, 29, 34, 39, 44, 49])
            #expect(fetched?.first === entries[4], "the controller's objects are the context's typed objects")
        }
    }
}

/// Hands a non-Sendable test value across a `performAndWait` boundary it never leaves
/// the queue of.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
