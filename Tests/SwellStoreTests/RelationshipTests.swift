import Foundation
import Testing
@testable import SwellStore

/// A model with every relationship shape the store keeps: one-to-many with a
/// to-one inverse (Spot ↔ Entry, nullify), owned children (Order → Line,
/// cascade), a deny rule (Owner → Pet), a one-to-one (Person ↔ Passport), a
/// required to-one (Ticket.event) and a to-one without an inverse (Tag.spot).
let relationshipModel = ManagedObjectModel(entities: [
    EntityDescription(name: "Spot", attributes: [
        AttributeDescription(name: "name", type: .string),
    ], relationships: [
        RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "spot"),
    ], uniquenessConstraint: ["name"]),
    EntityDescription(name: "Entry", attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "title", type: .string, isOptional: true),
    ], relationships: [
        RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries"),
    ], uniquenessConstraint: ["id"]),
    EntityDescription(name: "Order", attributes: [
        AttributeDescription(name: "id", type: .integer),
    ], relationships: [
        RelationshipDescription(name: "lines", destination: "Line", toMany: true, inverse: "order", deleteRule: .cascade),
    ], uniquenessConstraint: ["id"]),
    EntityDescription(name: "Line", attributes: [
        AttributeDescription(name: "sku", type: .string),
    ], relationships: [
        RelationshipDescription(name: "order", destination: "Order", inverse: "lines"),
    ]),
    EntityDescription(name: "Owner", attributes: [
        AttributeDescription(name: "name", type: .string),
    ], relationships: [
        RelationshipDescription(name: "pets", destination: "Pet", toMany: true, inverse: "owner", deleteRule: .deny),
    ]),
    EntityDescription(name: "Pet", attributes: [
        AttributeDescription(name: "name", type: .string),
    ], relationships: [
        RelationshipDescription(name: "owner", destination: "Owner", inverse: "pets", deleteRule: .noAction),
    ]),
    EntityDescription(name: "Person", attributes: [
        AttributeDescription(name: "name", type: .string),
    ], relationships: [
        RelationshipDescription(name: "passport", destination: "Passport", inverse: "holder"),
    ]),
    EntityDescription(name: "Passport", attributes: [
        AttributeDescription(name: "number", type: .string),
    ], relationships: [
        RelationshipDescription(name: "holder", destination: "Person", inverse: "passport"),
    ]),
    EntityDescription(name: "Event", attributes: [
        AttributeDescription(name: "name", type: .string),
    ]),
    EntityDescription(name: "Ticket", attributes: [
        AttributeDescription(name: "seat", type: .string),
    ], relationships: [
        RelationshipDescription(name: "event", destination: "Event", isOptional: false),
    ]),
    EntityDescription(name: "Tag", attributes: [
        AttributeDescription(name: "label", type: .string),
    ], relationships: [
        RelationshipDescription(name: "spot", destination: "Spot"),
    ]),
])

/// Runs `checks` on the store's SQLite file (its tables, keys and join tables); a run of the
/// suite against the in-memory store checks the same behaviour through the API only.
private func onSQLiteFile(_ directory: TemporaryDirectory, _ name: String, _ checks: (URL) throws -> Void) throws {
    guard directory.store == .sqlite else { return }
    try checks(directory.file("\(name).sqlite"))
}

private func makeGraph(_ directory: TemporaryDirectory) throws -> PersistentContainer {
    try makeContainer(directory, name: "graph", model: relationshipModel)
}

/// Objects of an entity in a context, by a string attribute.
private func objects(_ context: ManagedObjectContext, _ entity: String, where format: String? = nil,
                     _ arguments: Any?...) throws -> [ManagedObject] {
    var request = FetchRequest(entityName: entity)
    if let format { request.predicate = FetchPredicate(format: format, argumentArray: arguments) }
    return try context.fetch(request)
}

private func members(_ object: ManagedObject, _ key: String) -> Set<String> {
    Set(((object.value(forKey: key) as? Set<ManagedObject>) ?? []).compactMap { ($0["title"] ?? $0["sku"] ?? $0["name"]) as? String })
}

/// Expects `body` to throw exactly `expected` (compared by its message: `StoreError` is not `Equatable`).
private func expectStoreError(_ expected: StoreError, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws -> Void) throws {
    let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.description == expected.description, sourceLocation: sourceLocation)
}

/// Runs SQL on the store file through its own connection.
private func query(_ url: URL, _ sql: String) throws -> [[StoreValue]] {
    let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
    return try connection.query(sql)
}

@Suite("Relationships: the model (Store guarantees 28)", .onEveryStore)
struct RelationshipModelTests {
    @Test("a relationship whose destination is not an entity is refused, naming it")
    func unknownDestination() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .integer)],
                              relationships: [RelationshipDescription(name: "b", destination: "B")]),
        ])
        #expect(throws: ModelError.invalidRelationship("A.b", "its destination 'B' is not an entity of the model")) {
            try model.validate()
        }
    }

    @Test("an inverse that does not name the relationship back is refused")
    func inverseMustNameBack() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .integer)],
                              relationships: [RelationshipDescription(name: "b", destination: "B", inverse: "a")]),
            EntityDescription(name: "B", attributes: [AttributeDescription(name: "y", type: .integer)],
                              relationships: [RelationshipDescription(name: "a", destination: "A")]),
        ])
        #expect(throws: ModelError.invalidRelationship("A.b", "its inverse B.a does not name A.b back")) {
            try model.validate()
        }
    }

    @Test("a relationship may not share a name with an attribute")
    func nameClash() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", attributes: [AttributeDescription(name: "b", type: .integer)],
                              relationships: [RelationshipDescription(name: "b", destination: "A")]),
        ])
        #expect(throws: ModelError.duplicateAttribute(entity: "A", attribute: "b")) { try model.validate() }
    }

    @Test("the relationship descriptions keep what they were given, with Core Data's defaults")
    func descriptionDefaults() {
        let relationship = RelationshipDescription(name: "spot", destination: "Spot")
        #expect(!relationship.isToMany && !relationship.isOrdered && relationship.isOptional)
        #expect(relationship.inverse == nil && relationship.deleteRule == .nullify)
        let entity = relationshipModel.entitiesByName["Spot"]!
        #expect(entity.relationship(named: "entries")?.isToMany == true)
        #expect(entity.attributes.map(\.name) == ["name"])
    }
}

@Suite("Relationships: inverses in step (Store guarantees 29)", .onEveryStore)
struct RelationshipInverseTests {
    @Test("setting a to-one adds the object to the inverse to-many at once, and clearing it removes it")
    func toOneUpdatesInverse() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let beach = context.insertNewObject(forEntityName: "Spot")
            beach["name"] = "Ocean Beach"
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry["title"] = "dawn"
            entry.setValue(beach, forKey: "spot")
            #expect(entry.value(forKey: "spot") as? ManagedObject === beach)
            #expect(members(beach, "entries") == ["dawn"])
            entry.setValue(nil, forKey: "spot")
            #expect(entry.value(forKey: "spot") == nil)
            #expect(members(beach, "entries").isEmpty)
            try context.save()
        }
    }

    @Test("mutableSetValue(forKey:) changes the members' inverse; assigning a collection replaces the set")
    func mutableSetAndAssignment() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        context.performAndWait {
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Rockaway"
            let other = context.insertNewObject(forEntityName: "Spot")
            other["name"] = "Montauk"
            let entries = (1...3).map { id -> ManagedObject in
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = "e\(id)"
                return entry
            }
            let set = spot.mutableSetValue(forKey: "entries")
            set.add(entries[0])
            set.insert(entries[1])
            #expect(set.count == 2)
            #expect(entries[0].value(forKey: "spot") as? ManagedObject === spot)
            set.remove(entries[0])
            #expect(entries[0].value(forKey: "spot") == nil)
            #expect(members(spot, "entries") == ["e2"])
            // Moving an entry to another spot takes it out of the first one's set.
            entries[1].setValue(other, forKey: "spot")
            #expect(members(spot, "entries").isEmpty)
            #expect(members(other, "entries") == ["e2"])
            spot.setValue(Set([entries[0], entries[2]]), forKey: "entries")
            #expect(members(spot, "entries") == ["e1", "e3"])
            other.setValue([ManagedObject](), forKey: "entries")
            #expect(entries[1].value(forKey: "spot") == nil)
        }
    }

    @Test("a one-to-one keeps both sides: the new partner's old partner lets go")
    func oneToOne() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        context.performAndWait {
            let ann = context.insertNewObject(forEntityName: "Person")
            ann["name"] = "Ann"
            let bob = context.insertNewObject(forEntityName: "Person")
            bob["name"] = "Bob"
            let passport = context.insertNewObject(forEntityName: "Passport")
            passport["number"] = "X1"
            ann.setValue(passport, forKey: "passport")
            #expect(passport.value(forKey: "holder") as? ManagedObject === ann)
            passport.setValue(bob, forKey: "holder")
            #expect(bob.value(forKey: "passport") as? ManagedObject === passport)
            #expect(ann.value(forKey: "passport") == nil)
        }
    }

    @Test("a wrong value for a relationship makes the save throw, naming it")
    func wrongValue() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            let order = context.insertNewObject(forEntityName: "Order")
            order["id"] = 1
            entry.setValue(order, forKey: "spot")
            #expect(entry.value(forKey: "spot") == nil)
            try expectStoreError(StoreError.invalidRelationshipValue(entity: "Entry", relationship: "spot",
                                                                reason: "expected a Spot object, got a Order")) {
                try context.save()
            }
        }
    }
}

@Suite("Relationships: changes move up the levels (Store guarantees 30)", .onEveryStore)
struct RelationshipLevelTests {
    @Test("a worker's link reaches the view context, the writer and the disk; a fresh stack reads it back")
    func movesUp() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            let spot = worker.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Ocean Beach"
            for id in 1...2 {
                let entry = worker.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = "e\(id)"
                entry.setValue(spot, forKey: "spot")
            }
            try worker.save()
        }
        let view = container.viewContext
        let seen = try await MainActor.run {
            let spot = try objects(view, "Spot").first!
            return members(spot, "entries")
        }
        #expect(seen == ["e1", "e2"])
        try await container.saveToDisk()
        let reopened = try makeGraph(directory)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let entry = try objects(reader, "Entry", where: "id == 2").first!
            #expect((entry.value(forKey: "spot") as? ManagedObject)?["name"] as? String == "Ocean Beach")
            let spot = try objects(reader, "Spot").first!
            #expect(members(spot, "entries") == ["e1", "e2"])
        }
    }

    @Test("a new object pointing at one only the store has resolves; a discarded child leaves no link; rollback restores it")
    func acrossLevelsDiscardAndRollback() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let seed = container.newBackgroundContext()
        try seed.performAndWait {
            let spot = seed.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Pipeline"
            try seed.save()
        }
        try await container.saveToDisk()
        // A fresh stack: the spot is only in the store.
        let stack = try makeGraph(directory)
        let worker = stack.newBackgroundContext()
        try worker.performAndWait {
            let spot = try objects(worker, "Spot").first!
            let entry = worker.insertNewObject(forEntityName: "Entry")
            entry["id"] = 7
            entry["title"] = "barrel"
            entry.setValue(spot, forKey: "spot")
            try worker.save()
        }
        let discarded = stack.newBackgroundContext()
        try discarded.performAndWait {
            let spot = try objects(discarded, "Spot").first!
            let entry = discarded.insertNewObject(forEntityName: "Entry")
            entry["id"] = 8
            entry["title"] = "closeout"
            entry.setValue(spot, forKey: "spot")
            #expect(members(spot, "entries") == ["barrel", "closeout"])
        }
        try await stack.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "SELECT e.id, s.name FROM Entry e JOIN Spot s ON e.spot = s._pk")
                == [[.integer(7), .text("Pipeline")]])
        }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let entry = try objects(context, "Entry").first!
            entry.setValue(nil, forKey: "spot")
            #expect(entry.value(forKey: "spot") == nil)
            context.rollback()
            #expect((entry.value(forKey: "spot") as? ManagedObject)?["name"] as? String == "Pipeline")
        }
    }

    @Test("fetches see unsaved links: a predicate on a to-one with an object or nil")
    func fetchesSeeUnsavedLinks() throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Malibu"
            for id in 1...3 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                if id < 3 { entry.setValue(spot, forKey: "spot") }
            }
            #expect(try objects(context, "Entry", where: "spot == %@", spot).count == 2)
            #expect(try objects(context, "Entry", where: "spot == nil").count == 1)
            try context.save()
            #expect(try objects(context, "Entry", where: "spot == %@", spot.objectID).count == 2)
        }
    }
}

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

/// Many-to-many (Issue.labels ↔ Label.issues), an ordered to-many without an inverse
/// (Playlist.songs) and owned children through a join table (Post.comments, cascade).
let joinModel = ManagedObjectModel(entities: [
    EntityDescription(name: "Issue", attributes: [AttributeDescription(name: "id", type: .integer)],
                      relationships: [RelationshipDescription(name: "labels", destination: "Label", toMany: true, inverse: "issues")],
                      uniquenessConstraint: ["id"]),
    EntityDescription(name: "Label", attributes: [AttributeDescription(name: "name", type: .string)],
                      relationships: [RelationshipDescription(name: "issues", destination: "Issue", toMany: true, inverse: "labels")],
                      uniquenessConstraint: ["name"]),
    EntityDescription(name: "Playlist", attributes: [AttributeDescription(name: "title", type: .string)],
                      relationships: [RelationshipDescription(name: "songs", destination: "Song", toMany: true, isOrdered: true)]),
    EntityDescription(name: "Song", attributes: [AttributeDescription(name: "name", type: .string)]),
    EntityDescription(name: "Post", attributes: [AttributeDescription(name: "id", type: .integer)],
                      relationships: [RelationshipDescription(name: "comments", destination: "Comment", toMany: true, isOrdered: true,
                                                              deleteRule: .cascade)],
                      uniquenessConstraint: ["id"]),
    EntityDescription(name: "Comment", attributes: [AttributeDescription(name: "body", type: .string)]),
])

private func names(_ value: Any?) -> [String] {
    if let array = value as? [ManagedObject] { return array.compactMap { ($0["name"] ?? $0["body"]) as? String } }
    if let set = value as? Set<ManagedObject> { return set.compactMap { $0["name"] as? String }.sorted() }
    return []
}

@Suite("Relationships: join tables (Store guarantees 28, 29, 31, 32, 35)", .onEveryStore)
struct JoinTableTests {
    @Test("a many-to-many is kept in step on both sides and stored as <Entity>_<relationship> with a column per side")
    func manyToMany() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let bug = context.insertNewObject(forEntityName: "Label")
            bug["name"] = "bug"
            let ui = context.insertNewObject(forEntityName: "Label")
            ui["name"] = "ui"
            let first = context.insertNewObject(forEntityName: "Issue")
            first["id"] = 1
            let second = context.insertNewObject(forEntityName: "Issue")
            second["id"] = 2
            first.setValue(Set([bug, ui]), forKey: "labels")
            bug.mutableSetValue(forKey: "issues").add(second)
            #expect(names(first.value(forKey: "labels")) == ["bug", "ui"])
            #expect(names(second.value(forKey: "labels")) == ["bug"])
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>) == [first, second])
            first.mutableSetValue(forKey: "labels").remove(bug)
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>) == [second])
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT i.id, l.name FROM Issue_labels j JOIN Issue i ON j.Issue = i._pk JOIN Label l ON j.labels = l._pk ORDER BY i.id, l.name")
                == [[.integer(1), .text("ui")], [.integer(2), .text("bug")]])
            #expect(try query(url, "SELECT \"from\", \"table\" FROM pragma_foreign_key_list('Issue_labels') ORDER BY \"from\"")
                == [[.text("Issue"), .text("Issue")], [.text("labels"), .text("Label")]])
            #expect(try query(url, "SELECT count(*) FROM sqlite_master WHERE name = 'Label_issues'") == [[.integer(0)]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
        // A fresh stack reads both sides back from the join table.
        let reopened = try makeContainer(directory, name: "join", model: joinModel)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let bug = try objects(reader, "Label", where: "name == 'bug'").first!
            #expect((bug.value(forKey: "issues") as? Set<ManagedObject>)?.map { $0["id"] as? Int } == [2])
        }
    }

    @Test("an ordered to-many without an inverse keeps its order in _order, through saves and reopening")
    func orderedWithoutInverse() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let playlist = context.insertNewObject(forEntityName: "Playlist")
            playlist["title"] = "mix"
            let songs = ["c", "a", "b"].map { name -> ManagedObject in
                let song = context.insertNewObject(forEntityName: "Song")
                song["name"] = name
                return song
            }
            let ordered = playlist.mutableOrderedSetValue(forKey: "songs")
            for song in songs { ordered.append(song) }
            let d = context.insertNewObject(forEntityName: "Song")
            d["name"] = "d"
            ordered.insert(d, at: 1)
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "a", "b"])
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT s.name FROM Playlist_songs j JOIN Song s ON j.songs = s._pk ORDER BY j._order")
                == [[.text("c")], [.text("d")], [.text("a")], [.text("b")]])
        }
        let reopened = try makeContainer(directory, name: "join", model: joinModel)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let playlist = try objects(reader, "Playlist").first!
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "a", "b"])
            // Deleting a song with no inverse unlinks it: no link names a row that is gone.
            reader.delete(try objects(reader, "Song", where: "name == 'a'").first!)
            try reader.save()
            #expect(names(playlist.value(forKey: "songs")) == ["c", "d", "b"])
        }
        try await reopened.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("delete rules through join tables: nullify unlinks a deleted label, cascade deletes owned comments")
    func deleteRules() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = "bug"
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = 1
            issue.mutableSetValue(forKey: "labels").add(label)
            let post = context.insertNewObject(forEntityName: "Post")
            post["id"] = 1
            for body in ["x", "y"] {
                let comment = context.insertNewObject(forEntityName: "Comment")
                comment["body"] = body
                post.mutableOrderedSetValue(forKey: "comments").append(comment)
            }
            try context.save()
            context.delete(label)
            context.delete(post)
            try context.save()
            #expect((issue.value(forKey: "labels") as? Set<ManagedObject>)?.isEmpty == true)
            #expect(try objects(context, "Comment").isEmpty)
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT (SELECT count(*) FROM Issue_labels), (SELECT count(*) FROM Post_comments), (SELECT count(*) FROM Comment)")
                == [[.integer(0), .integer(0), .integer(0)]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("two new issues with one key from two workers become one that keeps the union of their labels")
    func mergeKeepsUnion() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        await MainActor.run { container.viewContext.mergePolicy = .mergeByPropertyObjectTrump }
        for labels in [["bug"], ["ui", "bug"]] {
            let worker = container.newBackgroundContext()
            try worker.performAndWait {
                let issue = worker.insertNewObject(forEntityName: "Issue")
                issue["id"] = 42
                for name in labels {
                    let existing = try objects(worker, "Label", where: "name == %@", name).first
                    let label = existing ?? worker.insertNewObject(forEntityName: "Label")
                    label["name"] = name
                    issue.mutableSetValue(forKey: "labels").add(label)
                }
                try worker.save()
            }
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "join") { (url: URL) throws in
            #expect(try query(url, "SELECT count(*) FROM Issue") == [[.integer(1)]])
            #expect(try query(url, "SELECT l.name FROM Issue_labels j JOIN Label l ON j.labels = l._pk ORDER BY l.name")
                == [[.text("bug")], [.text("ui")]])
            #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
        }
    }

    @Test("the did-save notice lists the issue with 'labels' and the labels that joined with 'issues'")
    func didSave() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "join", model: joinModel)
        let context = container.newBackgroundContext()
        let recorder = SaveRecorder(context)
        let (issueID, labelID) = try context.performAndWait { () throws -> (ObjectID, ObjectID) in
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = "bug"
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = 1
            try context.save()
            issue.mutableSetValue(forKey: "labels").add(label)
            try context.save()
            return (issue.objectID, label.objectID)
        }
        let changes = try #require(recorder.changes.last)
        #expect(changes.updated[issueID] == ["labels"])
        #expect(changes.updated[labelID] == ["issues"])
    }
}

@Suite("Relationships: the fetched results controller (Store guarantees 36)", .onEveryStore)
struct RelationshipControllerTests {
    /// Used on the main queue only.
    final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController) {}
        func controller(_ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            events.append("\(type) \(object["name"] ?? "?")")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController) {}
    }

    @Test("a spot whose entries changed in a child's save is reported as an update")
    @MainActor func reportsRelationshipUpdates() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let view = container.viewContext
        let spotID = try await view.perform { () throws -> ObjectID in
            let spot = view.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Ocean Beach"
            try view.save()
            return spot.objectID
        }
        var request = FetchRequest(entityName: "Spot")
        request.sortDescriptors = [FetchSortDescriptor(key: "name")]
        let recorder = Recorder()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        controller.delegate = recorder
        try controller.performFetch()
        let child = container.newBackgroundContext()
        try await child.perform {
            let entry = child.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry.setValue(child.object(with: spotID), forKey: "spot")
            try child.save()
        }
        let events = await view.perform(schedule: .enqueued) { recorder.events }
        #expect(events == ["update Ocean Beach"])
    }
}

@Suite("Relationships: migration of a rowid-keyed table that becomes a destination (Store guarantees 24, 35)", .onEveryStore)
struct RelationshipMigrationTests {
    @Test("an integer-keyed table a new to-one points at is rebuilt with _pk as its rowid; IDs and rows stay", .sqliteStoreOnly)
    func rowidTableBecomesDestination() async throws {
        let directory = TemporaryDirectory()
        let entry = EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "id", type: .integer)],
                                      uniquenessConstraint: ["id"])
        let old = try makeContainer(directory, name: "graph", model: ManagedObjectModel(entities: [entry]))
        let writer = old.newBackgroundContext()
        let ids = try writer.performAndWait { () throws -> [ObjectID] in
            let objects = (1...3).map { id -> ManagedObject in
                let object = writer.insertNewObject(forEntityName: "Entry")
                object["id"] = id * 10
                return object
            }
            try writer.save()
            return objects.map(\.objectID)
        }
        try await old.saveToDisk()
        let url = directory.file("graph.sqlite")
        #expect(try query(url, "SELECT name FROM pragma_table_info('Entry') WHERE pk > 0") == [[.text("id")]])
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)],
                                     relationships: [RelationshipDescription(name: "entry", destination: "Entry")])
        let new = try makeContainer(directory, name: "graph", model: ManagedObjectModel(entities: [entry, note]))
        #expect(try query(url, "SELECT name FROM pragma_table_info('Entry') WHERE pk > 0") == [[.text("_pk")]])
        let context = new.newBackgroundContext()
        try context.performAndWait {
            let second = try context.existingObject(with: ids[1])
            #expect(second["id"] as? Int == 20)
            let text = context.insertNewObject(forEntityName: "Note")
            text["text"] = "hi"
            text.setValue(second, forKey: "entry")
            try context.save()
        }
        try await new.saveToDisk()
        #expect(try query(url, "SELECT e.id FROM Note n JOIN Entry e ON n.entry = e._pk") == [[.integer(20)]])
        #expect(try query(url, "PRAGMA foreign_key_check").isEmpty)
    }
}

/// Counts the store's reads (one per `read`, whatever it queries).
private final class ReadCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

@Suite("Relationships: prefetching (Store guarantees 34)", .onEveryStore)
struct PrefetchingTests {
    /// 50 entries over 10 spots, saved to disk; a fresh stack to read them.
    private func seeded(_ directory: TemporaryDirectory) async throws -> PersistentContainer {
        let container = try makeGraph(directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let spots = (0..<10).map { index -> ManagedObject in
                let spot = context.insertNewObject(forEntityName: "Spot")
                spot["name"] = "spot \(index)"
                return spot
            }
            for id in 1...50 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry.setValue(spots[id % 10], forKey: "spot")
            }
            try context.save()
        }
        try await container.saveToDisk()
        return try makeGraph(directory)
    }

    @Test("a fetch of 50 entries prefetching 'spot' reads the store a constant number of times, not 50", .sqliteStoreOnly)
    func toOnePrefetch() async throws {
        let directory = TemporaryDirectory()
        let stack = try await seeded(directory)
        let store = try #require(stack.persistentStoreCoordinator.sqliteStore)
        let reads = ReadCounter()
        store.readObserver = { reads.increment() }
        defer { store.readObserver = nil }
        let context = stack.newBackgroundContext()
        let (withPrefetch, names) = try context.performAndWait { () throws -> (Int, Set<String>) in
            var request = FetchRequest(entityName: "Entry")
            request.relationshipKeyPathsForPrefetching = ["spot"]
            let entries = try context.fetch(request)
            let names = Set(entries.compactMap { ($0.value(forKey: "spot") as? ManagedObject)?["name"] as? String })
            return (reads.count, names)
        }
        #expect(names.count == 10)
        #expect(withPrefetch <= 2)
        // Without prefetching each spot loads on first access: a read per entry.
        let other = stack.newBackgroundContext()
        let before = reads.count
        try other.performAndWait {
            for entry in try other.fetch(FetchRequest(entityName: "Entry")) { _ = entry.value(forKey: "spot") }
        }
        #expect(reads.count - before >= 50)
    }

    @Test("prefetching a to-many ('entries') answers every spot's set from one query, and a change is seen", .sqliteStoreOnly)
    func toManyPrefetch() async throws {
        let directory = TemporaryDirectory()
        let stack = try await seeded(directory)
        let store = try #require(stack.persistentStoreCoordinator.sqliteStore)
        let reads = ReadCounter()
        store.readObserver = { reads.increment() }
        defer { store.readObserver = nil }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.relationshipKeyPathsForPrefetching = ["entries"]
            let spots = try context.fetch(request)
            let sizes = spots.map { ($0.value(forKey: "entries") as? Set<ManagedObject>)?.count ?? -1 }
            #expect(sizes == Array(repeating: 5, count: 10))
            #expect(reads.count <= 2)
            // A change in the context makes the prefetched sets stale: they are read again.
            let moved = (spots[0].value(forKey: "entries") as? Set<ManagedObject>)!.first!
            moved.setValue(spots[1], forKey: "spot")
            #expect((spots[0].value(forKey: "entries") as? Set<ManagedObject>)?.count == 4)
            #expect((spots[1].value(forKey: "entries") as? Set<ManagedObject>)?.count == 6)
        }
    }
}

@Suite("Relationships: key-path predicates in SQL and in memory (Store guarantees 33)", .onEveryStore)
struct KeyPathPredicateTests {
    /// A model with both kinds of to-many: Spot ↔ Entry (inverse to-one), Issue ↔ Label (join table).
    static let model = ManagedObjectModel(entities: relationshipModel.entities.filter { ["Spot", "Entry"].contains($0.name) }
        + joinModel.entities.filter { ["Issue", "Label"].contains($0.name) })

    /// A deterministic graph: 6 spots, 30 entries (some without a spot), 12 issues with 0–3 of 4 labels.
    static func build(_ context: ManagedObjectContext) {
        let names = ["Ocean Beach", "Malibu", "Mavericks", "old pier", "Rincon", "Trestles"]
        let spots = names.map { name -> ManagedObject in
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = name
            return spot
        }
        for id in 1...30 {
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = id
            entry["title"] = ["dawn", "dusk", "x-large", "glassy"][id % 4]
            if id % 7 != 0 { entry.setValue(spots[id % 5], forKey: "spot") }
        }
        let labels = ["bug", "ui", "docs", "perf"].map { name -> ManagedObject in
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = name
            return label
        }
        for id in 1...12 {
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = id
            issue.setValue(Set((0..<4).filter { (id >> $0) & 1 == 1 && $0 < 3 || id % 5 == $0 }.map { labels[$0] }), forKey: "labels")
        }
    }

    static let cases: [(entity: String, format: String, key: String)] = [
        ("Entry", "spot.name == 'Ocean Beach'", "id"),
        ("Entry", "spot.name BEGINSWITH[c] 'o'", "id"),
        ("Entry", "spot == nil", "id"),
        ("Entry", "NOT (spot.name == 'Malibu') AND id > 10", "id"),
        ("Spot", "ANY entries.title == 'dawn'", "name"),
        ("Spot", "ALL entries.id > 2", "name"),
        ("Spot", "NONE entries.title CONTAINS 'x'", "name"),
        ("Spot", "entries.@count > 1", "name"),
        ("Spot", "entries.@count == 0", "name"),
        ("Issue", "ANY labels.name == 'bug'", "id"),
        ("Issue", "labels.@count >= 2", "id"),
        ("Issue", "ALL labels.name IN {'bug', 'ui'}", "id"),
        ("Label", "ANY issues.id < 4", "name"),
        ("Label", "SOME issues.id == 12", "name"),
    ]

    private static func keys(_ context: ManagedObjectContext, _ entity: String, _ format: String, _ key: String) throws -> [String] {
        var request = FetchRequest(entityName: entity)
        request.predicate = FetchPredicate(format: format)
        return try context.fetch(request).map { "\($0[key] ?? "nil")" }.sorted()
    }

    @Test("each key-path predicate gives the same objects from saved rows (SQL) and from unsaved ones (memory)")
    func sqlAndMemoryAgree() async throws {
        let saved = TemporaryDirectory()
        let stored = try makeContainer(saved, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let reader = try makeContainer(saved, name: "paths", model: Self.model).newBackgroundContext()
        let unsavedDirectory = TemporaryDirectory()
        let unsaved = try makeContainer(unsavedDirectory, name: "paths", model: Self.model).newBackgroundContext()
        unsaved.performAndWait { Self.build(unsaved) }
        var nonEmpty = 0
        for (entity, format, key) in Self.cases {
            let fromSQL = try reader.performAndWait { try Self.keys(reader, entity, format, key) }
            let fromMemory = try unsaved.performAndWait { try Self.keys(unsaved, entity, format, key) }
            #expect(fromSQL == fromMemory, "\(entity) where \(format)")
            if !fromSQL.isEmpty { nonEmpty += 1 }
        }
        // The cases are not vacuous: most select something.
        #expect(nonEmpty >= 11)
        // One exact answer: the spots none of whose entries has an 'x' title.
        let none = try reader.performAndWait { try Self.keys(reader, "Spot", "NONE entries.title CONTAINS 'x'", "name") }
        // Spot 4 (Rincon) lost its only 'x-large' entry (14) to the multiples of 7; Trestles has no entries.
        #expect(none == ["Rincon", "Trestles"])
    }

    @Test("sorting by a to-one key path gives one order from saved rows (SQL) and unsaved ones (memory); nil first",
          .onStores(except: .memory, "the in-memory store reads no key paths in its queries"))
    func sortByKeyPath() async throws {
        let saved = TemporaryDirectory()
        let stored = try makeContainer(saved, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let reader = try makeContainer(saved, name: "paths", model: Self.model).newBackgroundContext()
        let unsavedDirectory = TemporaryDirectory()
        let unsaved = try makeContainer(unsavedDirectory, name: "paths", model: Self.model).newBackgroundContext()
        unsaved.performAndWait { Self.build(unsaved) }
        func order(_ context: ManagedObjectContext) throws -> [String] {
            var request = FetchRequest(entityName: "Entry")
            request.sortDescriptors = [FetchSortDescriptor(key: "spot.name", ascending: true), FetchSortDescriptor(key: "id", ascending: false)]
            return try context.fetch(request).map { "\(($0.value(forKey: "spot") as? ManagedObject)?["name"] ?? "-")/\($0["id"]!)" }
        }
        let fromSQL = try reader.performAndWait { try order(reader) }
        let fromMemory = try unsaved.performAndWait { try order(unsaved) }
        #expect(fromSQL == fromMemory)
        #expect(fromSQL.prefix(4) == ["-/28", "-/21", "-/14", "-/7"])
        #expect(fromSQL[4] == "Malibu/26")
        // A to-many path is not a sort key.
        reader.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.sortDescriptors = [FetchSortDescriptor(key: "entries.title")]
            #expect(throws: StoreError.self) { try reader.fetch(request) }
        }
    }

    @Test("sorting by a to-one key path sees the destinations' unsaved values, with and without a limit",
          .onStores(except: .memory, "the in-memory store reads no key paths in its queries"))
    func sortByKeyPathSeesUnsavedDestinations() async throws {
        let directory = TemporaryDirectory()
        let stored = try makeContainer(directory, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let context = stored.newBackgroundContext()
        func order(limit: Int) throws -> [String] {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = FetchPredicate(format: "spot != nil")
            request.sortDescriptors = [FetchSortDescriptor(key: "spot.name", ascending: true), FetchSortDescriptor(key: "id", ascending: true)]
            request.fetchLimit = limit
            return try context.fetch(request).map { "\(($0.value(forKey: "spot") as? ManagedObject)?["name"] ?? "-")/\($0["id"]!)" }
        }
        try context.performAndWait {
            // Only a spot changes, unsaved: no Entry does.
            var request = FetchRequest(entityName: "Spot")
            request.predicate = FetchPredicate(format: "name == 'Trestles' OR name == 'Rincon'")
            for spot in try context.fetch(request) where spot["name"] as? String == "Rincon" { spot["name"] = "Aaa Rincon" }
            let all = try order(limit: 0)
            #expect(all.first?.hasPrefix("Aaa Rincon/") == true, "\(all.prefix(3))")
            #expect(try order(limit: 2) == Array(all.prefix(2)))
        }
    }

    @Test("an unknown relationship in a key path, or ANY without a to-many, is a predicate error with its column")
    func errors() throws {
        let directory = TemporaryDirectory()
        let context = try makeContainer(directory, name: "paths", model: Self.model).newBackgroundContext()
        context.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = FetchPredicate(format: "id > 1 AND place.name == 'x'")
            let error = #expect(throws: StoreError.self) { try context.fetch(request) }
            #expect(error?.description.contains("'place' in key path 'place.name' is not a relationship of Entry at column 12") == true)
            request.predicate = FetchPredicate(format: "ANY spot.name == 'x'")
            let quantified = #expect(throws: StoreError.self) { try context.fetch(request) }
            #expect(quantified?.description.contains("ANY, ALL and NONE need a key path through a to-many relationship") == true)
        }
    }
}

@Suite("Relationships: an ordered to-many with a to-one inverse (Store guarantees 28, 29, 35)", .onEveryStore)
struct OrderedInverseTests {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Album", attributes: [AttributeDescription(name: "title", type: .string)],
                          relationships: [RelationshipDescription(name: "tracks", destination: "Track", toMany: true, isOrdered: true,
                                                                  inverse: "album", deleteRule: .cascade)]),
        EntityDescription(name: "Track", attributes: [AttributeDescription(name: "name", type: .string)],
                          relationships: [RelationshipDescription(name: "album", destination: "Album", inverse: "tracks")]),
    ])

    private func names(_ value: Any?) -> [String] {
        ((value as? [ManagedObject]) ?? []).compactMap { $0["name"] as? String }
    }

    @Test("the order is kept beside the to-one, through inserts at a position, moves, saves and reopening")
    func order() async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "albums", model: Self.model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let album = context.insertNewObject(forEntityName: "Album")
            album["title"] = "Blue"
            let tracks = ["c", "a", "b"].map { name -> ManagedObject in
                let track = context.insertNewObject(forEntityName: "Track")
                track["name"] = name
                return track
            }
            let ordered = album.mutableOrderedSetValue(forKey: "tracks")
            ordered.append(tracks[0])
            ordered.append(tracks[1])
            tracks[2].setValue(album, forKey: "album")   // from the to-one side: joins at the end
            #expect(names(album.value(forKey: "tracks")) == ["c", "a", "b"])
            ordered.insert(tracks[2], at: 0)
            #expect(names(album.value(forKey: "tracks")) == ["b", "c", "a"])
            album.setValue([tracks[1], tracks[2]], forKey: "tracks")
            #expect(names(album.value(forKey: "tracks")) == ["a", "b"])
            #expect(tracks[0].value(forKey: "album") == nil)
            try context.save()
        }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "albums") { (url: URL) throws in
            #expect(try query(url, "SELECT name FROM Track WHERE album IS NOT NULL ORDER BY _album_order") == [[.text("a")], [.text("b")]])
            #expect(try query(url, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'Album_%' AND type = 'table'") == [[.integer(0)]])
        }
        let reader = try makeContainer(directory, name: "albums", model: Self.model).newBackgroundContext()
        try reader.performAndWait {
            let album = try reader.fetch(FetchRequest(entityName: "Album")).first!
            #expect(names(album.value(forKey: "tracks")) == ["a", "b"])
            reader.delete(album)
            try reader.save()
            #expect(try reader.count(for: FetchRequest(entityName: "Track")) == 1)   // cascade took a and b; c was unlinked before
        }
    }
}

@Suite("Relationships: a link to an object only the parent has (Store guarantees 30)", .onEveryStore)
struct ParentOnlyLinkTests {
    @Test("a worker's new entry points at a spot only the view context has; the link resolves at every level and on disk")
    @MainActor func linkToParentOnlyObject() async throws {
        let directory = TemporaryDirectory()
        let container = try makeGraph(directory)
        let view = container.viewContext
        let spotID = try await view.perform { () throws -> ObjectID in
            let spot = view.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Steamer Lane"
            return spot.objectID   // unsaved: only the view context has it
        }
        let worker = container.newBackgroundContext()
        try await worker.perform {
            let spot = try worker.existingObject(with: spotID)
            let entry = worker.insertNewObject(forEntityName: "Entry")
            entry["id"] = 3
            entry.setValue(spot, forKey: "spot")
            try worker.save()
        }
        let names = await view.perform(schedule: .enqueued) { () -> [String] in
            let spot = view.object(with: spotID)
            return ((spot.value(forKey: "entries") as? Set<ManagedObject>) ?? []).map { "\($0["id"] ?? "")" }
        }
        #expect(names == ["3"])
        try await view.perform { try view.save() }
        try await container.saveToDisk()
        try onSQLiteFile(directory, "graph") { (url: URL) throws in
            #expect(try query(url, "SELECT e.id, s.name FROM Entry e JOIN Spot s ON e.spot = s._pk")
                == [[.integer(3), .text("Steamer Lane")]])
        }
    }

    @Test("the ordered-set API: remove(at:), index(of:), first and last follow the order")
    func orderedSetAPI() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "albums", model: OrderedInverseTests.model)
        let context = container.newBackgroundContext()
        context.performAndWait {
            let album = context.insertNewObject(forEntityName: "Album")
            album["title"] = "Green"
            let tracks = (1...4).map { number -> ManagedObject in
                let track = context.insertNewObject(forEntityName: "Track")
                track["name"] = "t\(number)"
                album.mutableOrderedSetValue(forKey: "tracks").add(track)
                return track
            }
            let ordered = album.mutableOrderedSetValue(forKey: "tracks")
            #expect(ordered.index(of: tracks[2]) == 2)
            ordered.remove(at: 0)
            #expect(ordered.first === tracks[1])
            #expect(ordered.last === tracks[3])
            #expect(ordered.count == 3)
            #expect(tracks[0].value(forKey: "album") == nil)
        }
    }
}
