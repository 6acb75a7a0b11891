import Foundation
import SwellStore
import SwellStoreTestSupport

/// What `LevelRun` compares after every step, context by context.
extension LevelRun {
    /// Every difference between the stack and the model, described (empty when they agree).
    func check() -> [String] {
        var mismatches: [String] = []
        for context in 0..<4 {
            do {
                try onQueue(context) { mismatches += try self.check(context) }
            } catch {
                mismatches.append("\(name(context)): \(error)")
            }
        }
        return mismatches
    }

    private func check(_ context: Int) throws -> [String] {
        var found: [String] = []
        let visible = model.visible(context)
        let here = contexts[context]
        let who = name(context)
        // Held objects first: what they show before a fetch takes them again.
        for (key, object) in held[context].sorted(by: { $0.key < $1.key }) {
            var deletedHere = false
            if case .deleted? = model.pending[context][key] { deletedHere = true }
            guard visible[key] != nil || deletedHere else { continue }
            switch model.held(key, in: context) {
            case nil:
                if !object.isDeleted { found.append("\(who) holds \(key), deleted there, but its isDeleted is false") }
            case .some(nil):
                continue
            case .some(let row?):
                let shown = actual(object)
                let taken = model.snapshots[context][key].map { "\($0.map { "\($0)" } ?? "gone")" } ?? "never"
                found += differences(shown, expected(key, row, visible),
                                     "\(who) holds \(key) (took \(taken), own change \(String(describing: model.pending[context][key])))")
            }
        }
        for entity in ["Author", "Book", "Tag"] {
            let objects = try here.fetch(FetchRequest(entityName: entity))
            var fetched: [Key: ManagedObject] = [:]
            for object in objects { fetched[key(of: object)] = object }
            let keys = Set(visible.keys.filter { $0.entity == entity })
            if Set(fetched.keys) != keys || objects.count != keys.count {
                found.append("\(who) fetches \(entity): \(fetched.keys.sorted()) (\(objects.count) objects), model: \(keys.sorted())")
            }
            for (key, object) in fetched.sorted(by: { $0.key < $1.key }) {
                guard let row = visible[key] else { continue }
                found += differences(actual(object), expected(key, row, visible), "\(who) fetches \(key)")
            }
            let count = try here.count(for: FetchRequest(entityName: entity))
            if count != keys.count { found.append("\(who) counts \(count) \(entity), model: \(keys.count)") }
            model.took(fetched.keys, in: context)
            held[context] = held[context].filter { _ in chance(85) }
            for (key, object) in fetched where chance(40) { held[context][key] = object }
        }
        found += try predicates(in: context, visible: visible)
        if context == 1, controllerCurrent, let controller { found += controllerDifferences(controller, visible) }
        return found
    }

    /// The view context's controller after a save reached it: the books it sees, by ISBN, in
    /// sections by author name ("" without one) in the order they first appear.
    private func controllerDifferences(_ controller: FetchedResultsController<ManagedObject>, _ visible: [Key: Row]) -> [String] {
        let books = visible.filter { $0.key.entity == "Book" }.sorted { Int($0.key.id)! < Int($1.key.id)! }
        var names: [String] = []
        for (_, row) in books {
            var name = ""
            if case .int(let id)? = row["author"], case .string(let text)? = visible[Key(entity: "Author", id: "\(id)")]?["name"] { name = text }
            if names.last != name && !names.contains(name) { names.append(name) }
        }
        var found: [String] = []
        let shown = (controller.fetchedObjects ?? []).map { key(of: $0) }
        if shown != books.map(\.key) { found.append("view's controller shows \(shown), model: \(books.map(\.key))") }
        let sections = controller.sections?.map(\.name) ?? []
        if sections != names { found.append("view's controller's sections \(sections), model: \(names)") }
        return found
    }

    /// Predicate fetches and counts over unsaved values and key paths (statements 13, 15, 33).
    private func predicates(in context: Int, visible: [Key: Row]) throws -> [String] {
        let books = visible.filter { $0.key.entity == "Book" }
        let tag = pick(visible.keys.filter { $0.entity == "Tag" }.sorted())
        var cases: [(String, [Any?], Set<Key>)] = [
            ("rating >= %@", [3], Set(books.filter { if case .int(let r)? = $0.value["rating"] { r >= 3 } else { false } }.keys)),
            ("author == nil", [], Set(books.filter { $0.value["author"] == LevelModel.Value.none }.keys)),
            ("author.name == %@", ["Ann"], Set(books.filter { book in
                guard case .int(let id)? = book.value["author"] else { return false }
                return visible[Key(entity: "Author", id: "\(id)")]?["name"] == .string("Ann")
            }.keys)),
        ]
        if let tag {
            cases.append(("ANY tags.name == %@", [tag.id], Set(books.filter { book in
                if case .keys(let members)? = book.value["tags"] { members.contains(tag.id) } else { false }
            }.keys)))
        }
        let authors = visible.keys.filter { $0.entity == "Author" }
        let writing = Set(authors.filter { author in books.contains { $0.value["author"] == .int(Int(author.id)!) } })
        var found: [String] = []
        for (entity, format, arguments, expected) in cases.map({ ("Book", $0.0, $0.1, $0.2) }) + [
            ("Author", "books.@count >= %@", [1], writing), ("Author", "NONE books.rating >= %@", [3], Set(authors.filter { author in
                !books.contains { $0.value["author"] == .int(Int(author.id)!) && { if case .int(let r)? = $0.value["rating"] { r >= 3 } else { false } }($0) }
            })),
        ] {
            var request = FetchRequest(entityName: entity)
            request.predicate = FetchPredicate(format: format, argumentArray: arguments)
            let fetched = Set(try contexts[context].fetch(request).map(key(of:)))
            if fetched != expected {
                found.append("\(name(context)) fetches \(entity) where \(format) \(arguments.map { "\($0 ?? "nil")" }): \(fetched.sorted()), model: \(expected.sorted())")
            }
            let count = try contexts[context].count(for: request)
            if count != expected.count { found.append("\(name(context)) counts \(entity) where \(format): \(count), model: \(expected.count)") }
        }
        return found
    }

    func key(of object: ManagedObject) -> Key {
        switch object.entity.name {
        case "Book": Key(entity: "Book", id: "\(object["isbn"] as? Int ?? -1)")
        case "Author": Key(entity: "Author", id: "\(object["id"] as? Int ?? -1)")
        default: Key(entity: "Tag", id: object["name"] as? String ?? "?")
        }
    }

    /// What an object shows, in the model's terms. Reading an author's books fetches them
    /// (the inverse of their to-one), which hands the books the values the fetch matched.
    private func actual(_ object: ManagedObject) -> Row {
        func keys(_ value: Any?) -> LevelModel.Value {
            .keys(Set((value as? Set<ManagedObject> ?? []).map { key(of: $0).id }))
        }
        switch object.entity.name {
        case "Book":
            return [
                "title": (object["title"] as? String).map(LevelModel.Value.string) ?? .none,
                "rating": (object["rating"] as? Int).map(LevelModel.Value.int) ?? .none,
                "author": ((object["author"] as? ManagedObject)?["id"] as? Int).map(LevelModel.Value.int) ?? .none,
                "tags": keys(object["tags"]),
            ]
        case "Author":
            let books = keys(object["books"])
            if case .keys(let isbns) = books { model.took(isbns.map { Key(entity: "Book", id: $0) }, in: contexts.firstIndex { $0 === object.managedObjectContext } ?? 0) }
            return ["name": (object["name"] as? String).map(LevelModel.Value.string) ?? .none, "books": books]
        default:
            return ["books": keys(object["books"])]
        }
    }

    /// What the model says an object shows: its row, and its to-manys read through the other side.
    private func expected(_ key: Key, _ row: Row, _ visible: [Key: Row]) -> Row {
        let books = visible.filter { $0.key.entity == "Book" }
        switch key.entity {
        case "Author":
            return ["name": row["name"] ?? .none,
                    "books": .keys(Set(books.filter { $0.value["author"] == .int(Int(key.id)!) }.map(\.key.id)))]
        case "Tag":
            return ["books": .keys(Set(books.filter { book in
                if case .keys(let members)? = book.value["tags"] { members.contains(key.id) } else { false }
            }.map(\.key.id)))]
        default:
            return row
        }
    }

    private func differences(_ actual: Row, _ expected: Row, _ what: String) -> [String] {
        expected.keys.sorted().compactMap { name in
            actual[name] == expected[name] ? nil : "\(what).\(name): \(actual[name] ?? .none), model: \(expected[name] ?? .none)"
        }
    }
}
