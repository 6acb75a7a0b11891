import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

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

// The model and helpers the relationship suites share (RelationshipTests*.swift).

/// Runs `checks` on the store's SQLite file (its tables, keys and join tables); a run of the
/// suite against the in-memory store checks the same behaviour through the API only.
func onSQLiteFile(_ directory: TemporaryDirectory, _ name: String, _ checks: (URL) throws -> Void) throws {
    guard directory.store == .sqlite else { return }
    try checks(directory.file("\(name).sqlite"))
}

func makeGraph(_ directory: TemporaryDirectory) throws -> PersistentContainer {
    try makeContainer(directory, name: "graph", model: relationshipModel)
}

/// Objects of an entity in a context, by a string attribute.
func objects(_ context: ManagedObjectContext, _ entity: String, where format: String? = nil,
                     _ arguments: Any?...) throws -> [ManagedObject] {
    var request = FetchRequest(entityName: entity)
    if let format { request.predicate = FetchPredicate(format: format, argumentArray: arguments) }
    return try context.fetch(request)
}

func members(_ object: ManagedObject, _ key: String) -> Set<String> {
    Set(((object.value(forKey: key) as? Set<ManagedObject>) ?? []).compactMap { ($0["title"] ?? $0["sku"] ?? $0["name"]) as? String })
}

/// Expects `body` to throw exactly `expected` (compared by its message: `StoreError` is not `Equatable`).
func expectStoreError(_ expected: StoreError, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws -> Void) throws {
    let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.description == expected.description, sourceLocation: sourceLocation)
}

/// Runs SQL on the store file through its own connection.
func query(_ url: URL, _ sql: String) throws -> [[StoreValue]] {
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
