import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Spots with entries (a to-one and its to-many inverse) and tags (a many-to-many, kept in a
/// join table): every kind of change undo must put back.
let undoModel = ManagedObjectModel(entities: [
    EntityDescription(name: "Spot", attributes: [AttributeDescription(name: "name", type: .string)],
                      relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "spot")],
                      uniquenessConstraint: ["name"]),
    EntityDescription(name: "Entry", attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "title", type: .string, isOptional: true),
        AttributeDescription(name: "rating", type: .integer, isOptional: true),
    ], relationships: [
        RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries"),
        RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "entries"),
    ], uniquenessConstraint: ["id"]),
    EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "word", type: .string)],
                      relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "tags")],
                      uniquenessConstraint: ["word"]),
])

/// Store guarantees 54: undo and redo of a context's edits, grouped per `perform` or explicitly.
@Suite(.onEveryStore) struct UndoTests {
    let directory = TemporaryDirectory()

    /// A writer context with an undo manager, over a store holding spots A and B and entry 1 at A.
    func seeded(_ name: String) throws -> (PersistentContainer, ManagedObjectContext) {
        let container = try makeContainer(directory, name: name, model: undoModel)
        let writer = container.writerContext
        try writer.performAndWait {
            let a = writer.insertNewObject(forEntityName: "Spot"), b = writer.insertNewObject(forEntityName: "Spot")
            a["name"] = "A"
            b["name"] = "B"
            let entry = writer.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry["title"] = "first"
            entry["rating"] = 3
            entry["spot"] = a
            try writer.save()
            writer.undoManager = UndoManager()
        }
        return (container, writer)
    }

    /// The writer of `container` (over `relationshipModel`), with order 1 and its lines "a" and "b"
    /// saved, then given an undo manager.
    func seededOrder(_ container: PersistentContainer) throws -> ManagedObjectContext {
        let writer = container.writerContext
        try writer.performAndWait {
            let order = writer.insertNewObject(forEntityName: "Order")
            order["id"] = 1
            for sku in ["a", "b"] {
                let line = writer.insertNewObject(forEntityName: "Line")
                line["sku"] = sku
                line["order"] = order
            }
            try writer.save()
            writer.undoManager = UndoManager()
        }
        return writer
    }

    func fetchOne(_ context: ManagedObjectContext, _ entity: String, _ format: String, _ argument: Any) throws -> ManagedObject? {
        var request = FetchRequest(entityName: entity)
        request.predicate = FetchPredicate(format: format, argument)
        return try context.fetch(request).first
    }

    func names(_ value: Any?) -> Set<String> {
        Set((value as? Set<ManagedObject> ?? []).compactMap { ($0["name"] ?? $0["word"] ?? $0["title"]) as? String })
    }

    @Test func contextsHaveNoUndoManagerByDefaultAndRecordNothing() throws {
        #expect(ManagedObjectContext(concurrencyType: .privateQueue).undoManager == nil)
        #expect(ManagedObjectContext(concurrencyType: .mainQueue).undoManager == nil)
        let (container, _) = try seeded("none")
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            #expect(worker.undoManager == nil)
            try fetchOne(worker, "Entry", "id == %@", 1)?["rating"] = 5
            // Setting a manager afterwards does not reach back: nothing was recorded.
            worker.undoManager = UndoManager()
            #expect(worker.undoManager?.canUndo == false)
        }
    }

    @Test func undoAndRedoAValueChangeEachPerformBlockOneGroup() throws {
        let (_, writer) = try seeded("values")
        try writer.performAndWait {
            try fetchOne(writer, "Entry", "id == %@", 1)?["rating"] = 4
        }
        try writer.performAndWait {
            let entry = try fetchOne(writer, "Entry", "id == %@", 1)
            entry?["rating"] = 5
            entry?["title"] = "second"
        }
        try writer.performAndWait {
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            writer.undoManager?.undo()
            #expect(entry["rating"] as? Int == 4, "the second block's changes go together")
            #expect(entry["title"] as? String == "first")
            writer.undoManager?.undo()
            #expect(entry["rating"] as? Int == 3)
            #expect(!entry.isUpdated && !writer.hasChanges, "every change undone: the object is unchanged")
            #expect(writer.undoManager?.canUndo == false)
            writer.undoManager?.redo()
            #expect(entry["rating"] as? Int == 4)
            #expect(entry.isUpdated)
            writer.undoManager?.redo()
            #expect(entry["rating"] as? Int == 5 && entry["title"] as? String == "second")
            writer.undoManager?.undo()
            try writer.save()
        }
        let observer = try makeRootContext(at: directory.storeURL("values"), model: undoModel)
        try observer.performAndWait {
            let stored = try #require(try fetchOne(observer, "Entry", "id == %@", 1))
            #expect(stored["rating"] as? Int == 4, "a save moves what the context shows")
            #expect(stored["title"] as? String == "first")
        }
    }

    @Test func explicitGroupsSpanBlocksAndNest() throws {
        let (_, writer) = try seeded("groups")
        try writer.performAndWait {
            let undo = try #require(writer.undoManager)
            undo.groupsByEvent = false
            undo.beginUndoGrouping()
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            entry["rating"] = 1
            undo.beginUndoGrouping()
            entry["title"] = "nested"
            undo.endUndoGrouping()
            #expect(undo.groupingLevel == 1)
            undo.setActionName("Edit Entry")
        }
        try writer.performAndWait {
            let undo = try #require(writer.undoManager)
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            entry["rating"] = 2
            undo.endUndoGrouping()
            #expect(undo.undoActionName == "Edit Entry")
            undo.undo()
            #expect(entry["rating"] as? Int == 3 && entry["title"] as? String == "first", "one group across two blocks")
            #expect(undo.redoActionName == "Edit Entry")
            undo.redo()
            #expect(entry["rating"] as? Int == 2 && entry["title"] as? String == "nested")
        }
    }

    @Test func undoPutsBackBothSidesOfAToOneAndAManyToMany() throws {
        let (_, writer) = try seeded("relationships")
        try writer.performAndWait {
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            let b = try #require(try fetchOne(writer, "Spot", "name == %@", "B"))
            let tag = writer.insertNewObject(forEntityName: "Tag")
            tag["word"] = "glassy"
            entry["spot"] = b
            entry.mutableSetValue(forKey: "tags").add(tag)
        }
        try writer.performAndWait {
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            let a = try #require(try fetchOne(writer, "Spot", "name == %@", "A"))
            let b = try #require(try fetchOne(writer, "Spot", "name == %@", "B"))
            #expect(names(b["entries"]) == ["first"] && names(entry["tags"]) == ["glassy"])
            writer.undoManager?.undo()
            #expect((entry["spot"] as? ManagedObject)?["name"] as? String == "A")
            #expect(names(a["entries"]) == ["first"])
            #expect(names(b["entries"]).isEmpty)
            #expect(names(entry["tags"]).isEmpty)
            #expect(writer.insertedObjects.isEmpty, "the tag's insert is undone too")
            #expect(try writer.count(for: FetchRequest(entityName: "Tag")) == 0)
            #expect(!writer.hasChanges)
            writer.undoManager?.redo()
            let tag = try #require(try fetchOne(writer, "Tag", "word == %@", "glassy"))
            #expect(names(tag["entries"]) == ["first"], "the tag's side is back")
            #expect(names(b["entries"]) == ["first"] && names(a["entries"]).isEmpty)
            try writer.save()
        }
        let observer = try makeRootContext(at: directory.storeURL("relationships"), model: undoModel)
        try observer.performAndWait {
            let entry = try #require(try fetchOne(observer, "Entry", "id == %@", 1))
            #expect((entry["spot"] as? ManagedObject)?["name"] as? String == "B")
            #expect(names(entry["tags"]) == ["glassy"])
        }
    }

    @Test func undoAnInsertAndADeleteRedoThem() throws {
        let (_, writer) = try seeded("lifecycle")
        writer.performAndWait {
            let new = writer.insertNewObject(forEntityName: "Entry")
            new["id"] = 2
        }
        try writer.performAndWait {
            try fetchOne(writer, "Entry", "id == %@", 1).map(writer.delete)
        }
        try writer.performAndWait {
            let undo = try #require(writer.undoManager)
            #expect(try writer.count(for: FetchRequest(entityName: "Entry")) == 1)
            undo.undo()
            let first = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            #expect(!first.isDeleted && first["title"] as? String == "first" && first["rating"] as? Int == 3)
            #expect((first["spot"] as? ManagedObject)?["name"] as? String == "A")
            undo.undo()
            #expect(try writer.count(for: FetchRequest(entityName: "Entry")) == 1)
            #expect(!writer.hasChanges)
            undo.redo()
            let second = try #require(try fetchOne(writer, "Entry", "id == %@", 2))
            #expect(second.isInserted)
            undo.redo()
            #expect(first.isDeleted)
            try writer.save()
        }
        #expect(try count(makeRootContext(at: directory.storeURL("lifecycle"), model: undoModel), "Entry", "id == 2") == 1)
        #expect(try count(makeRootContext(at: directory.storeURL("lifecycle"), model: undoModel), "Entry", "id == 1") == 0)
    }

    @Test func deletingANewObjectThenUndoingBringsItBackAsNew() throws {
        let (_, writer) = try seeded("newdelete")
        let new = writer.performAndWait {
            let new = writer.insertNewObject(forEntityName: "Entry")
            new["id"] = 7
            new["title"] = "kept"
            return new.objectID
        }
        writer.performAndWait {
            let object = writer.object(with: new)
            writer.delete(object)
            #expect(object.managedObjectContext == nil)
        }
        try writer.performAndWait {
            writer.undoManager?.undo()
            let back = try #require(try fetchOne(writer, "Entry", "id == %@", 7))
            #expect(back.isInserted && back["title"] as? String == "kept")
            try writer.save()
        }
        #expect(try count(makeRootContext(at: directory.storeURL("newdelete"), model: undoModel), "Entry", "id == 7") == 1)
    }

    @Test func undoAfterASaveIsANewChangeTheNextSaveMoves() throws {
        let (_, writer) = try seeded("aftersave")
        try writer.performAndWait {
            try fetchOne(writer, "Entry", "id == %@", 1)?["rating"] = 5
            try writer.save()
        }
        try writer.performAndWait {
            writer.undoManager?.undo()
            #expect(writer.hasChanges)
            try writer.save()
        }
        #expect(try count(makeRootContext(at: directory.storeURL("aftersave"), model: undoModel), "Entry", "rating == 3") == 1)
    }

    @Test func undoingASavedCascadeBringsTheObjectAndWhatItsRulesDeletedBack() throws {
        let container = try makeContainer(directory, name: "cascade", model: relationshipModel)
        let writer = try seededOrder(container)
        try writer.performAndWait {
            writer.delete(try #require(try fetchOne(writer, "Order", "id == %@", 1)))
            try writer.save()   // the cascade deletes the lines, in the same undo group
        }
        let observer = try makeRootContext(at: directory.storeURL("cascade"), model: relationshipModel)
        #expect(try count(observer, "Line") == 0)
        try writer.performAndWait {
            writer.undoManager?.undo()
            try writer.save()
        }
        try observer.performAndWait {
            let order = try #require(try fetchOne(observer, "Order", "id == %@", 1))
            let skus = Set((order["lines"] as? Set<ManagedObject> ?? []).compactMap { $0["sku"] as? String })
            #expect(skus == ["a", "b"], "the order and its lines are back, linked")
        }
    }

    @Test func aDeleteAndItsCascadeUndoTogetherWhenSavedInALaterBlock() throws {
        let container = try makeContainer(directory, name: "laterblock", model: relationshipModel)
        let writer = try seededOrder(container)
        try writer.performAndWait { writer.delete(try #require(try fetchOne(writer, "Order", "id == %@", 1))) }
        try writer.performAndWait { try writer.save() }
        #expect(try count(makeRootContext(at: directory.storeURL("laterblock"), model: relationshipModel), "Line") == 0)
        try writer.performAndWait {
            writer.undo()   // one group: the delete and what its rules did
            try writer.save()
        }
        #expect(try count(makeRootContext(at: directory.storeURL("laterblock"), model: relationshipModel), "Order") == 1)
        #expect(try count(makeRootContext(at: directory.storeURL("laterblock"), model: relationshipModel), "Line", "order.id == 1") == 2)
    }

    @Test func undoingTheSavedDeleteOfAnObjectThatWasAFaultBringsItsValuesBack() throws {
        let container = try makeContainer(directory, name: "fault")
        let writer = container.writerContext
        try writer.performAndWait {
            for id in 1...6 { insertEntry(writer, id: id, location: "spot \(id)", rating: id % 5 + 1) }
            try writer.save()
            writer.reset()
            writer.undoManager = UndoManager()
        }
        try writer.performAndWait {
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: true)]
            request.fetchBatchSize = 2
            let entries = try writer.fetch(request)
            #expect(entries[5].isFault)
            writer.delete(entries[5])
            try writer.save()
        }
        try writer.performAndWait {
            writer.undoManager?.undo()
            try writer.save()
        }
        #expect(try count(makeRootContext(at: directory.storeURL("fault")), "JournalEntry", "id == 6 AND location == 'spot 6' AND rating == 2") == 1)
    }

    @Test func theContextsOwnUndoRedoAndProcessPendingChangesUseItsManager() throws {
        let (_, writer) = try seeded("contextundo")
        try writer.performAndWait {
            let entry = try #require(try fetchOne(writer, "Entry", "id == %@", 1))
            entry["rating"] = 4
            writer.processPendingChanges()   // ends the event: the next edit is a group of its own
            entry["rating"] = 5
            writer.undo()
            #expect(entry["rating"] as? Int == 4)
            writer.undo()
            #expect(entry["rating"] as? Int == 3)
            writer.redo()
            #expect(entry["rating"] as? Int == 4)
        }
    }

    @Test func rollbackAndResetEmptyTheStack() throws {
        let (_, writer) = try seeded("rollback")
        try writer.performAndWait {
            try fetchOne(writer, "Entry", "id == %@", 1)?["rating"] = 5
        }
        writer.performAndWait {
            #expect(writer.undoManager?.canUndo == true)
            writer.rollback()
            #expect(writer.undoManager?.canUndo == false && writer.undoManager?.canRedo == false)
        }
        try writer.performAndWait {
            try fetchOne(writer, "Entry", "id == %@", 1)?["rating"] = 5
        }
        writer.performAndWait {
            writer.undoManager?.undo()
            writer.reset()
            #expect(writer.undoManager?.canRedo == false)
        }
    }

    @Test func theScratchpadFlowEditInAChildUndoThenSaveOrDiscard() async throws {
        let (container, _) = try seeded("scratchpad")
        let scratchpad = ManagedObjectContext(concurrencyType: .privateQueue)
        scratchpad.parent = container.viewContext
        try scratchpad.performAndWait {
            scratchpad.undoManager = UndoManager()
            let entry = try #require(try fetchOne(scratchpad, "Entry", "id == %@", 1))
            entry["title"] = "draft"
        }
        try scratchpad.performAndWait {
            try fetchOne(scratchpad, "Entry", "id == %@", 1)?["rating"] = 1
        }
        try scratchpad.performAndWait {
            scratchpad.undoManager?.undo()
            try scratchpad.save()
        }
        try await container.saveToDisk()
        let observer = try makeRootContext(at: directory.storeURL("scratchpad"), model: undoModel)
        try observer.performAndWait {
            let entry = try #require(try fetchOne(observer, "Entry", "id == %@", 1))
            #expect(entry["title"] as? String == "draft" && entry["rating"] as? Int == 3)
        }
    }
}

/// Random edits — inserts, deletes, values, a to-one, a many-to-many — one per `perform` block,
/// mixed with undo, redo and saves; after every step the context's objects (both sides of each
/// relationship) are compared with a model that keeps the states as a list with a cursor (undo
/// steps back, redo forward, an edit drops what was ahead). A save empties the undo stack here
/// (undo across a save is `UndoTests`' subject), and the store is compared at the end. Seeds
/// 1–12 (`SWELL_DIFF_SEED` replays one); a failure names its seed and step.
@Suite(.onEveryStore) struct UndoDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 12) }

    struct Entry: Equatable, CustomStringConvertible {
        var title: String?, rating: Int?, spot: String?, tags: Set<String> = []
        var description: String { "(\(title ?? "nil"), \(rating.map(String.init) ?? "nil"), \(spot ?? "nil"), \(tags.sorted()))" }
    }
    typealias State = [Int: Entry]

    static let spots = ["A", "B", "C"], words = ["t1", "t2", "t3"]

    /// What the context shows: every entry with its values, read from the entry's side, checked
    /// against the spots' and tags' sides.
    static func shown(_ context: ManagedObjectContext) throws -> (State, [String]) {
        var state: State = [:]
        var problems: [String] = []
        for object in try context.fetch(FetchRequest(entityName: "Entry")) {
            let id = object["id"] as! Int
            let tags = Set((object["tags"] as? Set<ManagedObject> ?? []).compactMap { $0["word"] as? String })
            state[id] = Entry(title: object["title"] as? String, rating: object["rating"] as? Int,
                              spot: (object["spot"] as? ManagedObject)?["name"] as? String, tags: tags)
        }
        for spot in try context.fetch(FetchRequest(entityName: "Spot")) {
            let name = spot["name"] as! String
            let members = Set((spot["entries"] as? Set<ManagedObject> ?? []).compactMap { $0["id"] as? Int })
            let expected = Set(state.filter { $0.value.spot == name }.keys)
            if members != expected { problems.append("spot \(name) lists \(members.sorted()), entries say \(expected.sorted())") }
        }
        for tag in try context.fetch(FetchRequest(entityName: "Tag")) {
            let word = tag["word"] as! String
            let members = Set((tag["entries"] as? Set<ManagedObject> ?? []).compactMap { $0["id"] as? Int })
            let expected = Set(state.filter { $0.value.tags.contains(word) }.keys)
            if members != expected { problems.append("tag \(word) lists \(members.sorted()), entries say \(expected.sorted())") }
        }
        return (state, problems)
    }

    static func object(_ context: ManagedObjectContext, _ entity: String, _ key: String, _ value: Any) throws -> ManagedObject {
        var request = FetchRequest(entityName: entity)
        request.predicate = FetchPredicate(format: "%K == %@", key, value)
        return try context.fetch(request)[0]
    }

    @Test(arguments: seeds)
    func undoAndRedoMatchTheModel(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "undo\(seed)", model: undoModel)
        let writer = container.writerContext
        try writer.performAndWait {
            for name in Self.spots { writer.insertNewObject(forEntityName: "Spot")["name"] = name }
            for word in Self.words { writer.insertNewObject(forEntityName: "Tag")["word"] = word }
            try writer.save()
            writer.undoManager = UndoManager()
        }
        var states: [State] = [[:]]
        var cursor = 0
        var nextID = 1
        for step in 0..<40 {
            var state = states[cursor]
            let roll = Int.random(in: 0..<100, using: &random)
            let what: String
            if roll < 15 {
                what = "undo"
                writer.performAndWait { writer.undoManager?.undo() }
                cursor = max(0, cursor - 1)
            } else if roll < 25 {
                what = "redo"
                writer.performAndWait { writer.undoManager?.redo() }
                cursor = min(states.count - 1, cursor + 1)
            } else if roll < 30 {
                what = "save"
                try writer.performAndWait {
                    try writer.save()
                    writer.undoManager?.removeAllActions()
                }
                states = [state]
                cursor = 0
            } else {
                // One edit that changes the state.
                let ids = state.keys.sorted()
                let kind = ids.isEmpty ? 0 : Int.random(in: 0..<7, using: &random)
                let id = ids.randomElement(using: &random) ?? 0
                switch kind {
                case 0:
                    let new = Entry(title: ["x", "y", nil].randomElement(using: &random)!, rating: [1, 2, nil].randomElement(using: &random)!,
                                    spot: Self.spots.randomElement(using: &random))
                    what = "insert \(nextID) \(new)"
                    try writer.performAndWait {
                        let object = writer.insertNewObject(forEntityName: "Entry")
                        object["id"] = nextID
                        if let title = new.title { object["title"] = title }
                        if let rating = new.rating { object["rating"] = rating }
                        object["spot"] = try Self.object(writer, "Spot", "name", new.spot!)
                    }
                    state[nextID] = new
                    nextID += 1
                case 1:
                    what = "delete \(id)"
                    try writer.performAndWait { writer.delete(try Self.object(writer, "Entry", "id", id)) }
                    state[id] = nil
                case 2, 3:
                    let title = ["x", "y", "z", nil].filter { $0 != state[id]!.title }.randomElement(using: &random)!
                    let rating = Int.random(in: 1...3, using: &random)
                    let both = kind == 3 && rating != state[id]!.rating
                    what = "title of \(id) = \(title ?? "nil")\(both ? ", rating = \(rating)" : "")"
                    try writer.performAndWait {
                        let object = try Self.object(writer, "Entry", "id", id)
                        object["title"] = title
                        if both { object["rating"] = rating }
                    }
                    state[id]!.title = title
                    if both { state[id]!.rating = rating }
                case 4:
                    let spot = (Self.spots + [nil]).filter { $0 != state[id]!.spot }.randomElement(using: &random)!
                    what = "spot of \(id) = \(spot ?? "nil")"
                    try writer.performAndWait {
                        let object = try Self.object(writer, "Entry", "id", id)
                        object["spot"] = try spot.map { try Self.object(writer, "Spot", "name", $0) }
                    }
                    state[id]!.spot = spot
                default:
                    let word = Self.words.randomElement(using: &random)!
                    let adding = !state[id]!.tags.contains(word)
                    what = "\(adding ? "tag" : "untag") \(id) \(word)"
                    try writer.performAndWait {
                        let object = try Self.object(writer, "Entry", "id", id)
                        let tag = try Self.object(writer, "Tag", "word", word)
                        if adding { object.mutableSetValue(forKey: "tags").add(tag) } else { object.mutableSetValue(forKey: "tags").remove(tag) }
                    }
                    if adding { state[id]!.tags.insert(word) } else { state[id]!.tags.remove(word) }
                }
                states = Array(states[...cursor]) + [state]
                cursor += 1
            }
            let (shown, problems) = try writer.performAndWait { try Self.shown(writer) }
            #expect(shown == states[cursor], "seed \(seed), step \(step) (\(what)): the context shows \(shown), the model \(states[cursor])")
            #expect(problems.isEmpty, "seed \(seed), step \(step) (\(what)): \(problems)")
            if shown != states[cursor] || !problems.isEmpty { return }
        }
        try writer.performAndWait { try writer.save() }
        let observer = try makeRootContext(at: directory.storeURL("undo\(seed)"), model: undoModel)
        let stored = try observer.performAndWait { try Self.shown(observer) }
        #expect(stored.0 == states[cursor], "seed \(seed): the store after the last save")
    }
}
