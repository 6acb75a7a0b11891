import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store guarantees 55: a save validates every object it moves and fails as a whole listing
/// every failure; the on-demand methods check the same rules; batch requests keep the attribute rules.
@Suite(.onEveryStore) struct ValidationTests {
    let directory = TemporaryDirectory()

    typealias Seen = ValidationFailures.Seen

    static func seen(_ error: any Error) -> [Seen] { ValidationFailures.seen(error) }

    func product(_ context: ManagedObjectContext, sku: String = "AB-1", stock: Int = 1, _ values: [String: Any] = [:]) -> ManagedObject {
        let product = context.insertNewObject(forEntityName: "Product")
        product["sku"] = sku
        product["stock"] = stock
        for (key, value) in values { product[key] = value }
        return product
    }

    @Test func aSaveListsEveryBrokenRuleOfEveryObjectAndMovesNothing() async throws {
        let container = try makeContainer(directory, name: "rules", model: validationModel)
        let writer = container.writerContext
        let failures = try writer.performAndWait { () throws -> [Seen] in
            _ = product(writer, sku: "AB-12", ["rating": 3, "name": "ok"])                 // valid
            _ = product(writer, sku: "ab-1", ["rating": 7])                                // pattern, max
            _ = product(writer, sku: "AB-123456", ["name": "x", "price": 0.25])            // maxLength, minLength, min (double)
            _ = product(writer, sku: "CD-1", ["status": "lost", "since": Date(timeIntervalSince1970: 0), "rating": 0])
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error?.kind == .validationFailed)
            #expect(error?.objects.count == 3)
            #expect(writer.insertedObjects.count == 4, "a failed save keeps the context's changes")
            return error.map(Self.seen) ?? []
        }
        let expected: Set<Seen> = [
            Seen(entity: "Product", key: "sku", value: .text("ab-1"), rule: "pattern [A-Z]{2}-[0-9]+"),
            Seen(entity: "Product", key: "rating", value: .integer(7), rule: "maxValue 5"),
            Seen(entity: "Product", key: "sku", value: .text("AB-123456"), rule: "maxLength 8"),
            Seen(entity: "Product", key: "name", value: .text("x"), rule: "minLength 2"),
            Seen(entity: "Product", key: "price", value: .real(0.25), rule: "minValue 0.5"),
            Seen(entity: "Product", key: "status", value: .text("lost"), rule: "allowedValues [open, closed]"),
            Seen(entity: "Product", key: "since", value: .real(0), rule: "minValue 2020-01-01T00:00:00Z"),
            Seen(entity: "Product", key: "rating", value: .integer(0), rule: "minValue 1"),
        ]
        #expect(Set(failures) == expected)
        #expect(failures.count == expected.count)
        #expect(try count(makeRootContext(at: container.storeURL, model: validationModel), "Product") == 0)
    }

    @Test func aSaveThatNoLongerBreaksARuleMovesEverything() async throws {
        let container = try makeContainer(directory, name: "fixed", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let bad = product(writer, sku: "AB-1", ["rating": 9])
            #expect(throws: StoreError.self) { try writer.save() }
            bad["rating"] = 5
            try writer.save()
        }
        #expect(try count(makeRootContext(at: container.storeURL, model: validationModel), "Product", "rating == 5") == 1)
    }

    @Test func anUpdateIsCheckedOnItsChangedValuesAndTheUpdateValidation() async throws {
        let container = try makeContainer(directory, name: "update", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let saved = product(writer, sku: "AB-1", ["rating": 2])
            try writer.save()
            saved["rating"] = 6
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error.map(Self.seen) == [Seen(entity: "Product", key: "rating", value: .integer(6), rule: "maxValue 5")])
            saved["rating"] = nil
            saved["status"] = "closed"
            let refused = #expect(throws: StoreError.self) { try writer.save() }
            #expect(refused?.validationFailures.first?.error as? RefusedOnPurpose == RefusedOnPurpose(why: "a closed product has a rating"))
            #expect(refused.map(Self.seen) == [Seen(entity: "Product", key: nil, value: nil, rule: "validateForUpdate")])
            saved["rating"] = 4
            try writer.save()
        }
        #expect(try count(container.writerContext, "Product", "status == 'closed' AND rating == 4") == 1)
    }

    @Test func entityValidationRefusesInsertsAndDeletesWithWhatTheClosureThrew() async throws {
        let container = try makeContainer(directory, name: "closures", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let forbidden = product(writer, sku: "AB-1", ["name": "forbidden"])
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error.map(Self.seen) == [Seen(entity: "Product", key: nil, value: nil, rule: "validateForInsert")])
            #expect(String(describing: error).contains("no product is named forbidden"))
            forbidden["name"] = "allowed"
            forbidden["status"] = "open"
            try writer.save()
            writer.delete(forbidden)
            let denied = #expect(throws: StoreError.self) { try writer.save() }
            #expect(denied.map(Self.seen) == [Seen(entity: "Product", key: nil, value: nil, rule: "validateForDelete")])
            writer.rollback()
            forbidden["status"] = "closed"
            forbidden["rating"] = 1
            try writer.save()
            writer.delete(forbidden)
            try writer.save()
        }
        #expect(try count(container.writerContext, "Product") == 0)
    }

    @Test func toManyCountsAreCheckedOnBothSidesOfAMove() async throws {
        let container = try makeContainer(directory, name: "counts", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let first = product(writer, sku: "AB-1")
            let second = product(writer, sku: "AB-2")
            func part(_ label: String, of product: ManagedObject) -> ManagedObject {
                let part = writer.insertNewObject(forEntityName: "Part")
                part["label"] = label
                part["product"] = product
                return part
            }
            let parts = (1...4).map { part("p\($0)", of: first) }
            // Four parts: above the maximum; the empty second product is fine (optional).
            let tooMany = #expect(throws: StoreError.self) { try writer.save() }
            #expect(tooMany.map(Self.seen) == [Seen(entity: "Product", key: "parts", value: .integer(4), rule: "maxCount 3")])
            parts[3]["product"] = second
            // Three and one: the second is below the minimum.
            let tooFew = #expect(throws: StoreError.self) { try writer.save() }
            #expect(tooFew.map(Self.seen) == [Seen(entity: "Product", key: "parts", value: .integer(1), rule: "minCount 2")])
            parts[2]["product"] = second
            try writer.save()
            // Moving a saved part changes no row of either product: both are counted again.
            parts[1]["product"] = second
            let moved = #expect(throws: StoreError.self) { try writer.save() }
            #expect(moved.map(Self.seen) == [Seen(entity: "Product", key: "parts", value: .integer(1), rule: "minCount 2")])
            #expect(moved?.objects == [first.objectID], "the product the part left")
        }
    }

    @Test func anObjectWhoseToManyChangesFromTheOtherSideRunsItsUpdateValidation() throws {
        let container = try makeContainer(directory, name: "otherside", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            // Inserted closed without a rating: only the update validation refuses that.
            let closed = product(writer, sku: "AB-1", ["status": "closed"])
            let open = product(writer, sku: "AB-2", ["status": "open"])
            var parts: [ManagedObject] = []
            for (label, owner) in [("a", closed), ("b", closed), ("c", open), ("d", open), ("e", open)] {
                let part = writer.insertNewObject(forEntityName: "Part")
                part["label"] = label
                part["product"] = owner
                parts.append(part)
            }
            try writer.save()
            parts[4]["product"] = closed   // only the part's row changes
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error.map(Self.seen) == [Seen(entity: "Product", key: nil, value: nil, rule: "validateForUpdate")])
            #expect(error?.objects == [closed.objectID])
        }
    }

    @Test func aRequiredToManyAndAJoinTableMaximumAreChecked() async throws {
        let container = try makeContainer(directory, name: "keepers", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let keeper = writer.insertNewObject(forEntityName: "Keeper")
            keeper["name"] = "K"
            let tags = (1...3).map { n -> ManagedObject in
                let tag = writer.insertNewObject(forEntityName: "Tag")
                tag["word"] = "w\(n)"
                return tag
            }
            keeper["tags"] = Set(tags)
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error?.kind == .validationFailed)
            #expect(Set(error.map(Self.seen) ?? []) == [
                Seen(entity: "Keeper", key: "products", value: .integer(0), rule: "required"),
                Seen(entity: "Keeper", key: "tags", value: .integer(3), rule: "maxCount 2"),
            ])
            keeper["tags"] = Set(tags.prefix(2))
            let only = #expect(throws: StoreError.self) { try writer.save() }
            #expect(only?.kind == .missingRequiredRelationship, "only required relationships missing: the older kind")
            #expect(only?.validationFailures.count == 1)
            keeper["products"] = Set([product(writer, sku: "AB-1")])
            try writer.save()
        }
    }

    @Test func aManyToManyIsCountedOnBothSidesWhicheverSideLinks() throws {
        let container = try makeContainer(directory, name: "shelves", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let shelves = (1...3).map { n -> ManagedObject in
                let shelf = writer.insertNewObject(forEntityName: "Shelf")
                shelf["label"] = "s\(n)"
                return shelf
            }
            let books = (1...3).map { n -> ManagedObject in
                let book = writer.insertNewObject(forEntityName: "Book")
                book["title"] = "b\(n)"
                return book
            }
            try writer.save()
            // From the books' side: the first shelf gets three books.
            for book in books { book.mutableSetValue(forKey: "shelves").add(shelves[0]) }
            let fromBooks = #expect(throws: StoreError.self) { try writer.save() }
            #expect(fromBooks.map(Self.seen) == [Seen(entity: "Shelf", key: "books", value: .integer(3), rule: "maxCount 2")])
            writer.rollback()
            // From the shelves' side: the first book goes on three shelves.
            for shelf in shelves { shelf.mutableSetValue(forKey: "books").add(books[0]) }
            let fromShelves = #expect(throws: StoreError.self) { try writer.save() }
            #expect(fromShelves.map(Self.seen) == [Seen(entity: "Book", key: "shelves", value: .integer(3), rule: "maxCount 2")])
        }
    }

    /// A child's inserts reach the view context whole (a segment, checked by the child); the
    /// writer, which cannot see them, adds to the same to-many meanwhile. Each was within the
    /// maximum alone; the view context's save counts them together.
    @Test func insertsThatExceedACountTogetherWithAnotherLevelsFailAtTheSave() async throws {
        let container = try makeContainer(directory, name: "levels", model: validationModel)
        let writer = container.writerContext, view = container.viewContext
        func addPart(_ context: ManagedObjectContext, _ label: String, to product: ObjectID) {
            let part = context.insertNewObject(forEntityName: "Part")
            part["label"] = label
            part["product"] = context.object(with: product)
        }
        let productID = try writer.performAndWait {
            let product = product(writer, sku: "AB-1")
            try writer.save()
            return product.objectID
        }
        try writer.performAndWait {
            addPart(writer, "p0", to: productID)
            addPart(writer, "p1", to: productID)
            try writer.save()
        }
        let child = container.newBackgroundContext()
        try child.performAndWait {
            addPart(child, "child", to: productID)
            try child.save()   // three, as the child sees them
        }
        try writer.performAndWait {
            addPart(writer, "writer", to: productID)
            try writer.save()  // three, as the writer sees them: the child's part is not its
        }
        let error = view.performAndWait { () -> StoreError? in
            do { try view.save(); return nil } catch let error as StoreError { return error } catch { return nil }
        }
        #expect(error.map(Self.seen) == [Seen(entity: "Product", key: "parts", value: .integer(4), rule: "maxCount 3")])
    }

    @Test func aDenyRefusalIsListedWithTheOtherFailures() throws {
        let container = try makeContainer(directory, name: "deny", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let kept = product(writer, sku: "AB-1", ["status": "closed", "rating": 1])
            let keeper = writer.insertNewObject(forEntityName: "Keeper")
            keeper["name"] = "K"
            kept["keeper"] = keeper
            product(writer, sku: "AB-9")["keeper"] = keeper   // deleting one of two leaves the keeper one
            try writer.save()
            writer.delete(kept)
            let alone = #expect(throws: StoreError.self) { try writer.save() }
            #expect(alone?.kind == .deleteDenied, "only refusals: the older kind")
            #expect(alone.map(Self.seen) == [Seen(entity: "Product", key: "keeper", value: .integer(1), rule: "delete rule deny")])
            _ = product(writer, sku: "AB-2", ["rating": 9])
            let both = #expect(throws: StoreError.self) { try writer.save() }
            #expect(both?.kind == .deleteDenied, "a deny refuses the delete whatever else failed: the kind stays")
            #expect(Set(both.map(Self.seen) ?? []) == [
                Seen(entity: "Product", key: "keeper", value: .integer(1), rule: "delete rule deny"),
                Seen(entity: "Product", key: "rating", value: .integer(9), rule: "maxValue 5"),
            ])
        }
    }

    @Test func rulesTakeSwiftValues() throws {
        let limit = 10, since = Date(timeIntervalSince1970: 1_700_000_000)
        let event = EntityDescription(name: "Event", attributes: [
            AttributeDescription(name: "kind", type: .string, validation: [.allowedValues(["talk", "walk"])]),
            AttributeDescription(name: "seats", type: .integer, validation: [.minValue(1), .maxValue(limit), .allowedValues([2, 4, 8, 12])]),
            AttributeDescription(name: "score", type: .double, isOptional: true, validation: [.maxValue(0.75), .allowedValues([0.25, 0.5, 1.0])]),
            AttributeDescription(name: "at", type: .date, validation: [.minValue(since), .maxValue(since.addingTimeInterval(3600))]),
        ])
        let container = try makeContainer(directory, name: "swiftvalues", model: ManagedObjectModel(entities: [event]))
        let writer = container.writerContext
        try writer.performAndWait {
            let object = writer.insertNewObject(forEntityName: "Event")
            object["kind"] = "talk"
            object["seats"] = 8
            object["score"] = 0.5
            object["at"] = since.addingTimeInterval(60)
            try object.validateForInsert()
            #expect(throws: StoreError.self) { try object.validateValue("run", forKey: "kind") }
            #expect(throws: StoreError.self) { try object.validateValue(12, forKey: "seats") }
            #expect(throws: StoreError.self) { try object.validateValue(4.0, forKey: "score") }
            #expect(throws: StoreError.self) { try object.validateValue(1.0, forKey: "score") }
            #expect(throws: StoreError.self) { try object.validateValue(since.addingTimeInterval(-1), forKey: "at") }
            try writer.save()
        }
    }

    /// Deleting a company (cascading to its employees) and a department (denying while it has
    /// employees) in one save: the cascade takes the employees, so the deny has nothing left to
    /// refuse — whichever delete the save meets first.
    @Test(arguments: 0..<4) func aDenyStandsOnlyWhileADestinationRemains(round: Int) throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Company", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "staff", destination: "Employee", toMany: true,
                                                                      inverse: "company", deleteRule: .cascade)]),
            EntityDescription(name: "Department", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "members", destination: "Employee", toMany: true,
                                                                      inverse: "department", deleteRule: .deny)]),
            EntityDescription(name: "Employee", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "company", destination: "Company", inverse: "staff"),
                                              RelationshipDescription(name: "department", destination: "Department", inverse: "members")]),
        ])
        let container = try makeContainer(directory, name: "deny\(round)", model: model)
        let writer = container.writerContext
        try writer.performAndWait {
            let company = writer.insertNewObject(forEntityName: "Company"), department = writer.insertNewObject(forEntityName: "Department")
            company["name"] = "C"
            department["name"] = "D"
            for n in 0..<3 {
                let employee = writer.insertNewObject(forEntityName: "Employee")
                employee["name"] = "e\(n)"
                employee["company"] = company
                employee["department"] = department
            }
            try writer.save()
            if round % 2 == 0 { writer.delete(company); writer.delete(department) } else { writer.delete(department); writer.delete(company) }
            try writer.save()
        }
        #expect(try count(makeRootContext(at: container.storeURL, model: model), "Employee") == 0)
    }

    @Test func notANumberIsWithinNoBounds() throws {
        let container = try makeContainer(directory, name: "nan", model: validationModel)
        let writer = container.writerContext
        writer.performAndWait {
            let item = product(writer, sku: "AB-1")
            #expect(throws: StoreError.self) { try item.validateValue(Double.nan, forKey: "price") }
            #expect(throws: StoreError.self) { try item.validateValue(NSNull(), forKey: "stock") }
        }
    }

    @Test func missingRequiredValuesKeepTheirKindAndAreAllListed() async throws {
        let container = try makeContainer(directory, name: "required", model: validationModel)
        let writer = container.writerContext
        writer.performAndWait {
            for sku in ["AB-1", "AB-2"] {
                let product = writer.insertNewObject(forEntityName: "Product")
                product["sku"] = sku
            }
            let error = #expect(throws: StoreError.self) { try writer.save() }
            #expect(error?.kind == .missingRequiredValue)
            #expect(error?.validationFailures.count == 2)
            #expect(error?.objects.count == 2)
            #expect(error?.attribute == "stock")
        }
    }

    @Test func aChildSaveValidatesBeforeAnythingReachesItsParent() async throws {
        let container = try makeContainer(directory, name: "child", model: validationModel)
        let worker = container.newBackgroundContext()
        worker.performAndWait {
            _ = product(worker, sku: "AB-1", ["rating": 6])
            _ = product(worker, sku: "AB-2", ["rating": 3])
            let error = #expect(throws: StoreError.self) { try worker.save() }
            #expect(error.map(Self.seen) == [Seen(entity: "Product", key: "rating", value: .integer(6), rule: "maxValue 5")])
        }
        #expect(try count(container.viewContext, "Product") == 0)
    }

    @Test func theOnDemandMethodsCheckWhatASaveWould() async throws {
        let container = try makeContainer(directory, name: "demand", model: validationModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let item = product(writer, sku: "AB-1", ["rating": 3, "status": "open"])
            try item.validateForInsert()
            try item.validateForUpdate()
            try item.validateValue(5, forKey: "rating")
            var byReference: Any? = 2
            try item.validateValue(&byReference, forKey: "rating")
            let high = #expect(throws: StoreError.self) { try item.validateValue(6, forKey: "rating") }
            #expect(high.map(Self.seen) == [Seen(entity: "Product", key: "rating", value: .integer(6), rule: "maxValue 5")])
            #expect(item["rating"] as? Int == 3, "validating a value changes nothing")
            let wrongType = #expect(throws: StoreError.self) { try item.validateValue("three", forKey: "rating") }
            #expect(wrongType.map(Self.seen) == [Seen(entity: "Product", key: "rating", value: nil, rule: "type integer")])
            let missing = #expect(throws: StoreError.self) { try item.validateValue(nil, forKey: "stock") }
            #expect(missing?.kind == .missingRequiredValue)
            #expect(throws: StoreError.self) { try item.validateValue(1, forKey: "nope") }
            try item.validateValue([ManagedObject](), forKey: "parts")  // an empty optional to-many is valid
            let onePart = writer.insertNewObject(forEntityName: "Part")
            #expect(throws: StoreError.self) { try item.validateValue([onePart], forKey: "parts") }
            let open = #expect(throws: StoreError.self) { try item.validateForDelete() }
            #expect(open.map(Self.seen) == [Seen(entity: "Product", key: nil, value: nil, rule: "validateForDelete")])
            item["status"] = "closed"
            let keeper = writer.insertNewObject(forEntityName: "Keeper")
            item["keeper"] = keeper
            let denied = #expect(throws: StoreError.self) { try item.validateForDelete() }
            #expect(denied.map(Self.seen) == [Seen(entity: "Product", key: "keeper", value: .integer(1), rule: "delete rule deny")])
            item["rating"] = 8
            let update = #expect(throws: StoreError.self) { try item.validateForUpdate() }
            #expect(update.map(Self.seen) == [Seen(entity: "Product", key: "rating", value: .integer(8), rule: "maxValue 5")])
        }
    }

    @Test func aBatchInsertWithARowBreakingARuleFailsWholeNamingTheRow() async throws {
        let container = try makeContainer(directory, name: "batch", model: validationModel)
        let writer = container.writerContext
        let rows: [[String: Any]] = [["sku": "AB-1", "stock": 1], ["sku": "AB-2", "stock": 2, "rating": 9], ["sku": "AB-3", "stock": 3]]
        let error = await #expect(throws: StoreError.self) {
            try await writer.execute(BatchInsertRequest(entityName: "Product", objects: rows))
        }
        #expect(error?.kind == .invalidBatchRow)
        #expect(error?.row == 1)
        #expect(error?.attribute == "rating")
        #expect(String(describing: error).contains("9") && String(describing: error).contains("maxValue 5"))
        var columns = BatchColumns()
        let sku = columns.strings("sku"), stock = columns.integers("stock")
        for (text, number) in [("AB-1", 1), ("AB-2", 2), ("bad", 3)] {
            columns.append(text, to: sku)
            columns.append(number, to: stock)
        }
        let columnError = await #expect(throws: StoreError.self) {
            try await writer.execute(BatchInsertRequest(entityName: "Product", columns: columns))
        }
        #expect(columnError?.kind == .invalidBatchRow)
        #expect(columnError?.row == 2)
        #expect(columnError?.attribute == "sku")
        #expect(try count(writer, "Product") == 0)
    }

    @Test func aBatchUpdateBreakingARuleListsEveryObjectAndWritesNothing() async throws {
        let container = try makeContainer(directory, name: "batchupdate", model: validationModel)
        let writer = container.writerContext
        try await writer.execute(BatchInsertRequest(entityName: "Product", objects: (1...4).map { ["sku": "AB-\($0)", "stock": 1, "rating": $0] }))
        let update = BatchUpdateRequest(entityName: "Product")
        update.propertiesToUpdate = ["rating": BatchExpression("rating + 3")]
        let error = await #expect(throws: StoreError.self) { try await writer.execute(update) }
        #expect(error?.kind == .validationFailed)
        #expect(Set(error.map(Self.seen) ?? []) == [
            Seen(entity: "Product", key: "rating", value: .integer(6), rule: "maxValue 5"),
            Seen(entity: "Product", key: "rating", value: .integer(7), rule: "maxValue 5"),
        ])
        #expect(try count(writer, "Product", "rating <= 4") == 4)
        update.propertiesToUpdate = ["status": "gone"]
        let constant = await #expect(throws: StoreError.self) { try await writer.execute(update) }
        #expect(constant?.validationFailures.count == 4)
    }

    @Test func aModelWithARuleThatCannotWorkIsRefusedWhenItsStoreIsAdded() throws {
        func refused(_ entity: EntityDescription) -> Bool {
            let container = PersistentContainer(name: "bad", managedObjectModel: ManagedObjectModel(entities: [entity, tagEntity]),
                                                storeURL: directory.storeURL("bad\(entity.name.lowercased())"))
            do { try container.loadPersistentStores(); return false } catch { return "\(error)".contains("not usable") }
        }
        #expect(refused(EntityDescription(name: "A", attributes: [AttributeDescription(name: "n", type: .integer, validation: [.pattern("x")])])))
        #expect(refused(EntityDescription(name: "B", attributes: [AttributeDescription(name: "s", type: .string, validation: [.minValue(1)])])))
        #expect(refused(EntityDescription(name: "C", attributes: [AttributeDescription(name: "s", type: .string, validation: [.pattern("([a-z]")])])))
        #expect(refused(EntityDescription(name: "D", attributes: [AttributeDescription(name: "s", type: .string, validation: [.allowedValues([.integer(1)])])])))
        #expect(refused(EntityDescription(name: "E", attributes: [AttributeDescription(name: "s", type: .string)],
                                          relationships: [RelationshipDescription(name: "tag", destination: "Tag", minCount: 1)])))
        #expect(refused(EntityDescription(name: "F", attributes: [AttributeDescription(name: "s", type: .string)],
                                          relationships: [RelationshipDescription(name: "tags", destination: "Tag", toMany: true, minCount: 3, maxCount: 2)])))
        #expect(!refused(EntityDescription(name: "G", attributes: [AttributeDescription(name: "s", type: .double, validation: [.allowedValues([.integer(1), .real(1.5)])])])))
    }
}

/// Random products — valid and broken values of every rule, zero to four parts, some named
/// "forbidden" — saved, then random edits of the saved ones saved again; each save's failures
/// compared with a model of the rules computed here, independently of the store's checkers
/// (Swift `Regex`, plain comparisons). Seeds 1–16 (`SWELL_DIFF_SEED` replays one); a failure
/// names its seed.
@Suite(.onEveryStore) struct ValidationDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 16) }

    typealias Seen = ValidationTests.Seen

    /// The failures the rules give for `values` (only the keys in `changed`, when given).
    static func expected(_ values: [String: Any], parts: Int?, changed: Set<String>?, update: Bool) -> [Seen] {
        var seen: [Seen] = []
        func checks(_ key: String) -> Bool { changed?.contains(key) ?? true }
        func add(_ key: String?, _ value: StoreValue?, _ rule: String) { seen.append(Seen(entity: "Product", key: key, value: value, rule: rule)) }
        if checks("sku"), let sku = values["sku"] as? String {
            if (try? /[A-Z]{2}-[0-9]+/.wholeMatch(in: sku)) == nil { add("sku", .text(sku), "pattern [A-Z]{2}-[0-9]+") }
            if sku.count > 8 { add("sku", .text(sku), "maxLength 8") }
        }
        if checks("name"), let name = values["name"] as? String, name.count < 2 { add("name", .text(name), "minLength 2") }
        if checks("rating"), let rating = values["rating"] as? Int {
            if rating < 1 { add("rating", .integer(Int64(rating)), "minValue 1") }
            if rating > 5 { add("rating", .integer(Int64(rating)), "maxValue 5") }
        }
        if checks("price"), let price = values["price"] as? Double, price < 0.5 { add("price", .real(price), "minValue 0.5") }
        if checks("status"), let status = values["status"] as? String, !["open", "closed"].contains(status) {
            add("status", .text(status), "allowedValues [open, closed]")
        }
        if checks("stock"), values["stock"] == nil { add("stock", .null, "required") }
        if let parts, parts > 0 {
            if parts < 2 { add("parts", .integer(Int64(parts)), "minCount 2") }
            if parts > 3 { add("parts", .integer(Int64(parts)), "maxCount 3") }
        }
        if !update, values["name"] as? String == "forbidden" { add(nil, nil, "validateForInsert") }
        if update, values["status"] as? String == "closed", values["rating"] == nil { add(nil, nil, "validateForUpdate") }
        return seen
    }

    static func draw(_ key: String, index: Int, using random: inout SeededGenerator) -> Any? {
        switch key {
        case "sku": ["AB-\(index)", "ab-\(index)", "AB-\(index)9999999", "A-\(index)"].randomElement(using: &random)!
        case "name": [nil, "x", "ok", "forbidden"].randomElement(using: &random)!
        case "rating": [nil, 0, 1, 5, 6].randomElement(using: &random)!
        case "price": [nil, 0.25, 0.5, 10.0].randomElement(using: &random)!
        case "status": [nil, "open", "closed", "lost"].randomElement(using: &random)!
        default: [nil, 3, 3, 3].randomElement(using: &random)!
        }
    }

    @Test(arguments: seeds)
    func saveFailuresMatchTheRules(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "diff\(seed)", model: validationModel)
        let writer = container.writerContext
        let keys = ["sku", "name", "rating", "price", "status", "stock"]
        writer.performAndWait {
            var products: [(object: ManagedObject, values: [String: Any])] = []
            var expected: [Seen] = []
            for index in 0..<Int.random(in: 1...8, using: &random) {
                let product = writer.insertNewObject(forEntityName: "Product")
                var values: [String: Any] = [:]
                for key in keys {
                    let value = Self.draw(key, index: index, using: &random)
                    if let value { values[key] = value; product[key] = value }
                }
                let parts = Int.random(in: 0...4, using: &random)
                for n in 0..<parts {
                    let part = writer.insertNewObject(forEntityName: "Part")
                    part["label"] = "p\(n)"
                    part["product"] = product
                }
                products.append((product, values))
                expected += Self.expected(values, parts: parts, changed: nil, update: false)
            }
            var saved = true
            do { try writer.save() } catch {
                saved = false
                #expect(Set(ValidationTests.seen(error)) == Set(expected), "seed \(seed): the first save")
                #expect(ValidationTests.seen(error).count == expected.count, "seed \(seed): each failure once")
            }
            #expect(saved == expected.isEmpty, "seed \(seed): the first save \(saved ? "succeeded" : "failed") against the model")
            guard saved else { return }
            // Edits of saved products: only the changed values are checked, and the update validation.
            expected = []
            for (index, product) in products.enumerated() where Bool.random(using: &random) {
                var values = product.values
                var changed: Set<String> = []
                for key in ["name", "rating", "status"] where Bool.random(using: &random) {
                    let value = Self.draw(key, index: index, using: &random)
                    values[key] = value
                    product.object[key] = value
                    if product.values[key].map({ "\($0)" }) != value.map({ "\($0)" }) { changed.insert(key) }
                }
                // An object whose values end as they were is not updated: nothing to check.
                guard !changed.isEmpty else { continue }
                expected += Self.expected(values, parts: nil, changed: changed, update: true)
            }
            do {
                try writer.save()
                #expect(expected.isEmpty, "seed \(seed): the second save succeeded; the model expected \(expected)")
            } catch {
                #expect(Set(ValidationTests.seen(error)) == Set(expected), "seed \(seed): the second save")
            }
        }
    }
}
