import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 57: renames, removed attributes, optional ↔ required with a default, widened types;
/// what cannot be inferred fails naming entity and attribute and leaves the store as it was.
@Suite(.onEveryStore) struct LightweightMigrationTests {
    let directory = TemporaryDirectory()

    static let item = EntityDescription(name: "Item", attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "title", type: .string, isOptional: true),
        AttributeDescription(name: "count", type: .integer, isOptional: true),
        AttributeDescription(name: "price", type: .double, isOptional: true),
        AttributeDescription(name: "flag", type: .boolean, isOptional: true),
    ], uniquenessConstraint: ["id"])

    static func model(_ change: (inout EntityDescription) -> Void = { _ in }) -> ManagedObjectModel {
        var entity = item
        change(&entity)
        return ManagedObjectModel(entities: [entity])
    }

    /// A store with three items: (1, "one", 1, 1.0, true), (2, nil, 20, 2.5, false), (3, "three", nil, nil, nil).
    private func seeded() throws -> StoreOpener {
        let opener = StoreOpener(url: directory.storeURL("items"))
        let context = try opener.open(Self.model())
        try context.performAndWait {
            for (id, title, count, price, flag) in [(1, "one", 1, 1.0, true), (2, nil, 20, 2.5, false), (3, "three", nil, nil, nil)] as [(Int, String?, Int?, Double?, Bool?)] {
                let item = context.insertNewObject(forEntityName: "Item")
                item["id"] = id
                item["title"] = title
                item["count"] = count
                item["price"] = price
                item["flag"] = flag
            }
            try context.save()
        }
        return opener
    }

    @Test func aRenamedAttributeKeepsItsValues() throws {
        let opener = try seeded()
        let renamed = Self.model { $0.attributes[1] = AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "title") }
        let rows = try values(try opener.open(renamed), ["name", "count"])
        #expect(rows[1] == ["name": "s:one", "count": "i:1"])
        #expect(rows[2] == ["name": "nil", "count": "i:20"])
        #expect(rows[3]?["name"] == "s:three")
        // Opened again with the same model: nothing more to do, the values are still there.
        #expect(try values(try opener.open(renamed), ["name"])[1] == ["name": "s:one"])
    }

    @Test func aRenamedEntityKeepsItsRowsAndObjectIDs() throws {
        let opener = try seeded()
        let before = try ids(try opener.open(Self.model()), "Item")
        let renamed = Self.model { $0.name = "Product"; $0.renamingIdentifier = "Item" }
        let context = try opener.open(renamed)
        #expect(try ids(context, "Product").mapValues(\.primaryKey) == before.mapValues(\.primaryKey))
        #expect(try values(context, ["title"], entity: "Product")[3] == ["title": "s:three"])
        // Saving into the renamed table works (its key index follows it).
        try context.performAndWait {
            let product = context.insertNewObject(forEntityName: "Product")
            product["id"] = 4
            try context.save()
        }
        #expect(try count(try opener.open(renamed), "Product") == 4)
    }

    @Test func aRemovedAttributeIsDropped() throws {
        let opener = try seeded()
        _ = try opener.open(Self.model { $0.attributes.remove(at: 1) })
        // Back in a later model under the same name, it is a new, empty attribute: the old values went.
        #expect(try values(try opener.open(Self.model()), ["title", "count"])[1] == ["title": "nil", "count": "i:1"])
    }

    @Test func anAttributeMadeRequiredWithADefaultFillsItsNils() throws {
        let opener = try seeded()
        let required = Self.model { $0.attributes[1] = AttributeDescription(name: "title", type: .string, defaultValue: "untitled") }
        let rows = try values(try opener.open(required), ["title"])
        #expect(rows.mapValues { $0["title"] } == [1: "s:one", 2: "s:untitled", 3: "s:three"])
    }

    @Test func anAttributeMadeRequiredWithoutADefaultOverNilsFailsAndLeavesTheStore() throws {
        let opener = try seeded()
        let required = Self.model { $0.attributes[2].isOptional = false }
        let error = opener.migrationError(required)
        #expect(error?.entity == "Item")
        #expect(error?.attribute == "count")
        #expect(error?.reason?.contains("1 stored row(s)") == true)
        #expect(try values(try opener.open(Self.model()), ["count"])[2] == ["count": "i:20"])
    }

    @Test func aNewRequiredAttributeWithADefaultIsAddedToEveryRow() throws {
        let opener = try seeded()
        let grown = Self.model { $0.attributes.append(AttributeDescription(name: "stock", type: .integer, defaultValue: 5)) }
        let context = try opener.open(grown)
        #expect(try values(context, ["stock"]).mapValues { $0["stock"] } == [1: "i:5", 2: "i:5", 3: "i:5"])
        // A new object starts with the default too.
        try context.performAndWait {
            let item = context.insertNewObject(forEntityName: "Item")
            item["id"] = 9
            #expect(item["stock"] as? Int == 5)
            try context.save()
        }
        #expect(try values(try opener.open(grown), ["stock"])[9] == ["stock": "i:5"])
    }

    @Test func aWidenedTypeKeepsEachValuesMeaning() throws {
        let opener = try seeded()
        let doubled = Self.model { $0.attributes[2].type = .double }
        #expect(try values(try opener.open(doubled), ["count"]).mapValues { $0["count"] } == [1: "d:1.0", 2: "d:20.0", 3: "nil"])
        let text = Self.model {
            $0.attributes[2].type = .string
            $0.attributes[3].type = .string
            $0.attributes[4].type = .string
        }
        let rows = try values(try opener.open(text), ["count", "price", "flag"])
        #expect(rows[1] == ["count": "s:1", "price": "s:1", "flag": "s:true"])
        #expect(rows[2] == ["count": "s:20", "price": "s:2.5", "flag": "s:false"])
        #expect(rows[3] == ["count": "nil", "price": "nil", "flag": "nil"])
    }

    @Test func aNarrowedTypeFailsNamingTheAttributeAndLeavesTheStore() throws {
        let opener = try seeded()
        // A rename that would work, with a narrowing that cannot: nothing of it is applied.
        let changed = Self.model {
            $0.attributes[1] = AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "title")
            $0.attributes[3].type = .integer
        }
        let error = opener.migrationError(changed)
        #expect(error?.entity == "Item")
        #expect(error?.attribute == "price")
        #expect(error?.reason?.contains("double to integer") == true)
        #expect(try values(try opener.open(Self.model()), ["title", "price"])[2] == ["title": "nil", "price": "d:2.5"])
    }

    @Test func renamedRelationshipsKeepTheirLinks() throws {
        func model(renamed: Bool) -> ManagedObjectModel {
            let owner = renamed ? "holder" : "owner", tags = renamed ? "labels" : "tags"
            var item = Self.item
            item.relationships = [
                RelationshipDescription(name: owner, destination: "Person", isOptional: true, inverse: "items",
                                        renamingIdentifier: renamed ? "owner" : nil),
                RelationshipDescription(name: tags, destination: "Tag", toMany: true, inverse: "items",
                                        renamingIdentifier: renamed ? "tags" : nil),
            ]
            let person = EntityDescription(name: renamed ? "Owner" : "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                                           relationships: [RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: owner)],
                                           renamingIdentifier: renamed ? "Person" : nil)
            item.relationships[0].destination = person.name
            let tag = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
                                        relationships: [RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: tags)])
            return ManagedObjectModel(entities: [item, person, tag])
        }
        let opener = StoreOpener(url: directory.storeURL("graph"))
        let context = try opener.open(model(renamed: false))
        try context.performAndWait {
            let person = context.insertNewObject(forEntityName: "Person")
            person["name"] = "Ada"
            for id in 1...2 {
                let item = context.insertNewObject(forEntityName: "Item")
                item["id"] = id
                item["owner"] = person
                for label in ["a", "b"].prefix(id) {
                    let tag = context.insertNewObject(forEntityName: "Tag")
                    tag["label"] = "\(label)\(id)"
                    item.mutableSetValue(forKey: "tags").insert(tag)
                }
            }
            try context.save()
        }
        let renamed = try opener.open(model(renamed: true))
        try renamed.performAndWait {
            var request = FetchRequest(entityName: "Item")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            let items = try renamed.fetch(request)
            #expect(items.count == 2)
            #expect(items.map { ($0["holder"] as? ManagedObject)?["name"] as? String } == ["Ada", "Ada"])
            #expect(items.map { Set($0.mutableSetValue(forKey: "labels").allObjects.compactMap { $0["label"] as? String }) } == [["a1"], ["a2", "b2"]])
            let owners = try renamed.fetch(FetchRequest(entityName: "Owner"))
            #expect(owners.first?.mutableSetValue(forKey: "items").count == 2)
        }
    }

    /// IDs the file reserved for an entity stay reserved under its new name: an object inserted
    /// after the rename never takes the ID of one deleted before it.
    @Test(.sqliteStoreOnly) func aRenamedEntityKeepsItsReservedIDs() throws {
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])
        let opener = StoreOpener(url: directory.storeURL("notes"))
        let context = try opener.open(ManagedObjectModel(entities: [note]))
        let deleted: Int64 = try context.performAndWait {
            let object = context.insertNewObject(forEntityName: "Note")
            object["text"] = "gone"
            try context.save()
            context.delete(object)
            try context.save()
            return object.objectID.primaryKey
        }
        var memo = note
        memo.name = "Memo"
        memo.renamingIdentifier = "Note"
        let renamed = try opener.open(ManagedObjectModel(entities: [memo]))
        let fresh: Int64 = try renamed.performAndWait {
            let object = renamed.insertNewObject(forEntityName: "Memo")
            object["text"] = "new"
            try renamed.save()
            return object.objectID.primaryKey
        }
        #expect(fresh > deleted)
    }

    /// As in Core Data, a renaming identifier naming a recorded attribute wins over the same name.
    @Test func aRenamingIdentifierWinsOverTheSameName() throws {
        let person = EntityDescription(name: "Person", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "name", type: .string, isOptional: true),
            AttributeDescription(name: "displayName", type: .string, isOptional: true),
        ], uniquenessConstraint: ["id"])
        let opener = StoreOpener(url: directory.storeURL("people"))
        let context = try opener.open(ManagedObjectModel(entities: [person]))
        try context.performAndWait {
            let object = context.insertNewObject(forEntityName: "Person")
            object["id"] = 1
            object["name"] = "ada"
            object["displayName"] = "Ada Lovelace"
            try context.save()
        }
        var merged = person
        merged.attributes = [person.attributes[0], AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "displayName")]
        #expect(try values(try opener.open(ManagedObjectModel(entities: [merged])), ["name"], entity: "Person")[1] == ["name": "s:Ada Lovelace"])
    }

    /// A to-one whose destination changed holds the old destination's IDs: refused, not carried.
    @Test func aToOneWhoseDestinationChangedFails() throws {
        func model(_ destination: String) -> ManagedObjectModel {
            var item = Self.item
            item.relationships = [RelationshipDescription(name: "owner", destination: destination, isOptional: true)]
            return ManagedObjectModel(entities: [item, EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)]),
                                                 EntityDescription(name: "Company", attributes: [AttributeDescription(name: "name", type: .string)])])
        }
        let opener = StoreOpener(url: directory.storeURL("owners"))
        _ = try opener.open(model("Person"))
        let error = opener.migrationError(model("Company"))
        #expect(error?.entity == "Item")
        #expect(error?.attribute == "owner")
        #expect(error?.reason?.contains("destination changed from Person to Company") == true)
    }

    /// A rename that changes which side keeps a many-to-many's join table (the side whose
    /// `<Entity>_<relationship>` sorts first) keeps every link: Author owns `Author_books`,
    /// renamed Writer it is Book that owns `Book_authors`.
    @Test func aRenameThatMovesAJoinTableToTheOtherSideKeepsItsLinks() throws {
        func model(_ author: String) -> ManagedObjectModel {
            ManagedObjectModel(entities: [
                EntityDescription(name: author, attributes: [AttributeDescription(name: "name", type: .string)],
                                  relationships: [RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "authors")],
                                  uniquenessConstraint: ["name"], renamingIdentifier: author == "Author" ? nil : "Author"),
                EntityDescription(name: "Book", attributes: [AttributeDescription(name: "title", type: .string)],
                                  relationships: [RelationshipDescription(name: "authors", destination: author, toMany: true, inverse: "books")],
                                  uniquenessConstraint: ["title"]),
            ])
        }
        let opener = StoreOpener(url: directory.storeURL("books"))
        let context = try opener.open(model("Author"))
        try context.performAndWait {
            let books = ["Dune", "Emma", "Ubik"].map { title in
                let book = context.insertNewObject(forEntityName: "Book")
                book["title"] = title
                return book
            }
            for (name, indices) in [("Austen", [1]), ("Herbert", [0, 2]), ("Dick", [2])] {
                let author = context.insertNewObject(forEntityName: "Author")
                author["name"] = name
                for index in indices { author.mutableSetValue(forKey: "books").insert(books[index]) }
            }
            try context.save()
        }
        let renamed = try opener.open(model("Writer"))
        let (byWriter, byBook) = try renamed.performAndWait {
            let writers = try renamed.fetch(FetchRequest(entityName: "Writer"))
            let books = try renamed.fetch(FetchRequest(entityName: "Book"))
            func names(_ objects: [ManagedObject], _ key: String, _ member: String) -> [String: Set<String>] {
                Dictionary(uniqueKeysWithValues: objects.map { object in
                    (object[key] as? String ?? "", Set(object.mutableSetValue(forKey: member).allObjects.compactMap { $0[member == "books" ? "title" : "name"] as? String }))
                })
            }
            return (names(writers, "name", "books"), names(books, "title", "authors"))
        }
        #expect(byWriter == ["Austen": ["Emma"], "Herbert": ["Dune", "Ubik"], "Dick": ["Ubik"]])
        #expect(byBook == ["Dune": ["Herbert"], "Emma": ["Austen"], "Ubik": ["Herbert", "Dick"]])
    }

    // MARK: Helpers

    /// The values of `attributes` of each object, by `id`, typed: "i:1", "d:1.0", "s:one", "b:true", "nil".
    private func values(_ context: ManagedObjectContext, _ attributes: [String], entity: String = "Item") throws -> [Int: [String: String]] {
        try context.performAndWait {
            var rows: [Int: [String: String]] = [:]
            for object in try context.fetch(FetchRequest(entityName: entity)) {
                guard let id = object["id"] as? Int else { continue }
                rows[id] = Dictionary(uniqueKeysWithValues: attributes.map { ($0, describe(object[$0])) })
            }
            return rows
        }
    }

    private func ids(_ context: ManagedObjectContext, _ entity: String) throws -> [Int: ObjectID] {
        try context.performAndWait {
            var ids: [Int: ObjectID] = [:]
            for object in try context.fetch(FetchRequest(entityName: entity)) {
                if let id = object["id"] as? Int { ids[id] = object.objectID }
            }
            return ids
        }
    }
}

/// A value with its type: "i:1", "d:1.0", "s:one", "b:true", "t:<seconds>", "nil".
func describe(_ value: Any?) -> String {
    switch value {
    case nil: "nil"
    case let value as Int: "i:\(value)"
    case let value as Double: "d:\(value)"
    case let value as String: "s:\(value)"
    case let value as Bool: "b:\(value)"
    case let value as Date: "t:\(value.timeIntervalSince1970)"
    case let value?: "?:\(value)"
    }
}

/// Opens one store with one model after another, each on its own coordinator, and keeps
/// the coordinators (an in-memory store lives while one holds it).
final class StoreOpener: @unchecked Sendable {
    let url: URL
    /// Only touched by the test's own task.
    private var coordinators: [PersistentStoreCoordinator] = []

    init(url: URL) { self.url = url }

    /// Keeps `coordinator` (and so its store) alive while the opener lives.
    func keep(_ coordinator: PersistentStoreCoordinator) { coordinators.append(coordinator) }

    /// A root context on a new coordinator that added the store with `model`.
    func open(_ model: ManagedObjectModel) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url)
        coordinators.append(coordinator)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The `.migrationFailed` error opening with `model` throws (nil: it opened).
    func migrationError(_ model: ManagedObjectModel) -> StoreError? {
        migrationError { _ = try open(model) }
    }

    /// The `.migrationFailed` error `opening` throws (nil: it opened; another error is an issue).
    func migrationError(_ opening: () throws -> Void) -> StoreError? {
        do {
            try opening()
            return nil
        } catch let error as StoreError where error.kind == .migrationFailed {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }
}
