import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

@Suite("Relationships: delete rules (Store guarantees 31)", .onEveryStore)
struct DeleteRuleTests {
    @Test("cascade deletes owned children when the delete is saved, at the child level and on disk")
    func cascade() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let order = context.insertNewObject(forEntityName: "Order")
            order["id"] = 1
            for sku in ["a", "b"] {
                let line = context.insertNewObject(forEntityName: "Line")
                line["sku"] = sku
                line.setValue(order, forKey: "order")
            }
            try context.save()
        }
        try await container.saveToDisk()
        try context.performAndWait {
            let order = try objects(context, "Order").first!
            context.delete(order)
            #expect(try objects(context, "Line").count == 2)  // applied when the delete is saved
            try context.save()
            #expect(try objects(context, "Line").isEmpty)
        }
        try await container.saveToDisk()
        #expect(try storedRowCount(directory.storeURL("graph"), entity: "Line") == 0)
    }

    @Test("nullify removes the deleted object from its destinations' inverse, also for objects only the store has")
    func nullify() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Trestles"
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry.setValue(spot, forKey: "spot")
            let tag = context.insertNewObject(forEntityName: "Tag")
            tag["label"] = "left"
            tag.setValue(spot, forKey: "spot")
            try context.save()
        }
        try await container.saveToDisk()
        let stack = try makeGraph(directory)
        let worker = stack.newBackgroundContext()
        try worker.performAndWait {
            worker.delete(try objects(worker, "Spot").first!)
            try worker.save()
        }
        try await stack.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "SELECT spot FROM Entry") == [[.null]])
            // A to-one without an inverse is cleared too: no row names a row that is gone.
            #expect(try query(url, "SELECT spot FROM Tag") == [[.null]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("deny fails the save naming the object and the relationship while a destination remains")
    func deny() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = context.insertNewObject(forEntityName: "Owner")
            owner["name"] = "Kim"
            let pet = context.insertNewObject(forEntityName: "Pet")
            pet["name"] = "Rex"
            pet.setValue(owner, forKey: "owner")
            try context.save()
            context.delete(owner)
            try expectStoreError(StoreError.deleteDenied(object: owner.objectID, relationship: "pets", destinations: 1)) {
                try context.save()
            }
            // Once the destination is gone the delete saves; the pet's noAction rule leaves nothing to do.
            context.delete(pet)
            try context.save()
            #expect(try objects(context, "Owner").isEmpty)
        }
    }

    @Test("noAction leaves the other side as it is")
    func noAction() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = context.insertNewObject(forEntityName: "Owner")
            owner["name"] = "Lee"
            let pet = context.insertNewObject(forEntityName: "Pet")
            pet["name"] = "Tom"
            pet.setValue(owner, forKey: "owner")
            try context.save()
            context.delete(pet)
            try context.save()
            #expect(owner.hasChanges == false)
            #expect(try objects(context, "Owner").count == 1)
        }
    }

    @Test("a required relationship left empty fails the save naming the object and the relationship")
    func requiredToOne() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ticket = context.insertNewObject(forEntityName: "Ticket")
            ticket["seat"] = "A1"
            try expectStoreError(StoreError.missingRequiredRelationship(object: ticket.objectID, relationship: "event")) {
                try context.save()
            }
            let event = context.insertNewObject(forEntityName: "Event")
            event["name"] = "Final"
            ticket.setValue(event, forKey: "event")
            try context.save()
        }
    }
}

@Suite("Relationships: uniqueness merges carry relationships (Store guarantees 32)", .onEveryStore)
struct RelationshipMergeTests {
    @Test("two new spots with one key from two workers become one; every entry points at the survivor")
    func mergeRedirects() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        await MainActor.run { container.viewContext.mergePolicy = .mergeByPropertyObjectTrump }
        for (worker, ids) in [(0, [1, 2]), (1, [3])] {
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let spot = context.insertNewObject(forEntityName: "Spot")
                spot["name"] = "Mavericks"
                for id in ids {
                    let entry = context.insertNewObject(forEntityName: "Entry")
                    entry["id"] = id
                    entry["title"] = "w\(worker)-\(id)"
                    entry.setValue(spot, forKey: "spot")
                }
                try context.save()
            }
        }
        let view = container.viewContext
        let seen = try await MainActor.run { () throws -> (Int, Set<String>) in
            let spots = try objects(view, "Spot")
            return (spots.count, members(spots[0], "entries"))
        }
        #expect(seen.0 == 1)
        #expect(seen.1 == ["w0-1", "w0-2", "w1-3"])
        try await container.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "SELECT count(DISTINCT spot), count(*) FROM Entry") == [[.integer(1), .integer(3)]])
            #expect(try query(url, "SELECT count(*) FROM Entry e JOIN Spot s ON e.spot = s._pk") == [[.integer(3)]])
        }
    }

    /// A root save's new object whose key is already on disk merges in the store (the root
    /// context looks nothing up first): rows written before it in the same commit, here a
    /// `Check` changed first and its join-table links, must name the survivor.
    @Test("a key met at the store's commit: a to-one and a to-many written before the merge follow the survivor")
    func storeLevelMergeRedirects() async throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Check", attributes: [AttributeDescription(name: "id", type: .integer)], relationships: [
                RelationshipDescription(name: "beach", destination: "Beach"),
                RelationshipDescription(name: "nearby", destination: "Beach", toMany: true),
            ], uniquenessConstraint: ["id"]),
            EntityDescription(name: "Beach", attributes: [AttributeDescription(name: "name", type: .string)], uniquenessConstraint: ["name"]),
        ])
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "checks", model: model)
        let writer = container.writerContext
        writer.mergePolicy = .mergeByPropertyObjectTrump
        let survivor = try writer.performAndWait { () throws -> ObjectID in
            let beach = writer.insertNewObject(forEntityName: "Beach")
            beach["name"] = "Mavericks"
            try writer.save()
            writer.reset()
            return beach.objectID
        }
        try writer.performAndWait {
            let check = writer.insertNewObject(forEntityName: "Check")
            check["id"] = 1
            let mavericks = writer.insertNewObject(forEntityName: "Beach")
            mavericks["name"] = "Mavericks"
            #expect(mavericks.objectID != survivor)
            let pillar = writer.insertNewObject(forEntityName: "Beach")
            pillar["name"] = "Pillar Point"
            check.setValue(mavericks, forKey: "beach")
            check.setValue(Set([mavericks, pillar]), forKey: "nearby")
            try writer.save()
        }
        let fresh = try makeRootContext(at: directory.storeURL("checks"), model: model)
        try fresh.performAndWait {
            let beaches = try objects(fresh, "Beach", where: "name == %@", "Mavericks")
            #expect(beaches.map(\.objectID) == [survivor])
            let check = try #require(try objects(fresh, "Check").first)
            #expect((check.value(forKey: "beach") as? ManagedObject)?.objectID == survivor)
            #expect(members(check, "nearby") == ["Mavericks", "Pillar Point"])
            let nearby = (check.value(forKey: "nearby") as? Set<ManagedObject>) ?? []
            #expect(nearby.map(\.objectID).contains(survivor))
        }
    }
}

@Suite("Relationships: on disk (Store guarantees 35)", .onEveryStore)
struct RelationshipStorageTests {
    @Test("a to-one is an indexed column REFERENCES the destination's primary key; foreign_key_check is empty", .sqliteStoreOnly)
    func shape() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Huntington"
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 5
            entry.setValue(spot, forKey: "spot")
            try context.save()
        }
        try await container.saveToDisk()
        let url = directory.file("graph.sqlite")
        let keys = try query(url, "SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list('Entry')")
        #expect(keys == [[.text("Spot"), .text("spot"), .text("_pk")]])
        let indexed = try query(url, "SELECT count(*) FROM pragma_index_list('Entry') l JOIN pragma_index_info(l.name) i WHERE i.name = 'spot'")
        #expect(indexed == [[.integer(1)]])
        #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        #expect(try query(url, "SELECT Entry.id, Spot.name FROM Entry JOIN Spot ON Entry.spot = Spot._pk")
            == [[.integer(5), .text("Huntington")]])
    }

    @Test("adding a relationship to an existing store is a lightweight migration; rows and IDs stay")
    func addedRelationshipMigrates() async throws {
        let directory = TemporaryDirectory()
        let before = ManagedObjectModel(entities: [
            EntityDescription(name: "Spot", attributes: [AttributeDescription(name: "name", type: .string)], uniquenessConstraint: ["name"]),
            EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "id", type: .integer)], uniquenessConstraint: ["id"]),
        ])
        let old = try makeContainer(directory, name: "graph", model: before)
        let writer = old.newBackgroundContext()
        let saved = try writer.performAndWait { () throws -> [ObjectID] in
            let spot = writer.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Lido"
            let entry = writer.insertNewObject(forEntityName: "Entry")
            entry["id"] = 9
            try writer.save()
            return [spot.objectID, entry.objectID]
        }
        try await old.saveToDisk()
        let after = ManagedObjectModel(entities: [
            EntityDescription(name: "Spot", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "spot")],
                              uniquenessConstraint: ["name"]),
            EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "id", type: .integer)],
                              relationships: [RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries")],
                              uniquenessConstraint: ["id"]),
        ])
        let new = try makeContainer(directory, name: "graph", model: after)
        let context = new.newBackgroundContext()
        try context.performAndWait {
            let spot = try context.existingObject(with: saved[0])
            let entry = try context.existingObject(with: saved[1])
            entry.setValue(spot, forKey: "spot")
            try context.save()
            #expect((spot.value(forKey: "entries") as? Set<ManagedObject>) == [entry])
        }
        try await new.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
            #expect(try query(url, "SELECT \"table\" FROM pragma_foreign_key_list('Entry')") == [[.text("Spot")]])
        }
    }
}

@Suite("Relationships: did-save notices (Store guarantees 36)", .onEveryStore)
struct RelationshipNoticeTests {
    @Test("an object whose relationship changed is among the updated ones, with the relationship among its changed keys")
    func didSaveNamesRelationship() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        let (entryID, spotID) = try context.performAndWait { () throws -> (ObjectID, ObjectID) in
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Waimea"
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            try context.save()
            return (entry.objectID, spot.objectID)
        }
        let recorder = SaveRecorder(context)
        try context.performAndWait {
            let entry = context.object(with: entryID)
            entry.setValue(context.object(with: spotID), forKey: "spot")
            try context.save()
        }
        let changes = try #require(recorder.changes.last)
        #expect(changes.updated[entryID] == ["spot"])
        #expect(changes.updated[spotID] == ["entries"])
    }
}
