import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The library's differential test (issue 20, 2b): random inserts, edits, deletes and
/// relationship changes in the writer, the view context and workers, saved in random
/// orders (`save()`, `saveToDisk()`, `performBackgroundTask`) and interleavings; after
/// every step each context's objects — those it holds and those its fetches return — and
/// its counts and predicate fetches are compared with `LevelModel`, computed in the test.
///
/// CI runs fixed seeds on every store (scripts/test.sh runs the store suite on each);
/// `SWELL_DIFF_SEEDS=500` runs more locally, `SWELL_DIFF_SEED=n` replays one, and
/// `SWELL_DIFF_STEPS` sets the steps per seed.
@Suite(.onEveryStore) struct ContextLevelsDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 8) }

    static var steps: Int { DifferentialSeeds.steps(ci: 70) }

    @Test(arguments: seeds) func everyContextSeesWhatTheModelSays(seed: UInt64) async throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "levels", model: levelsModel)
        let run = LevelRun(seed: seed, container: container)
        for step in 1...Self.steps {
            try await run.step()
            let mismatches = run.check()
            if !mismatches.isEmpty {
                Issue.record("""
                    seed \(seed), store \(directory.store), step \(step): \(mismatches.count) mismatch(es)
                    \(mismatches.prefix(12).joined(separator: "\n"))
                    replay: SWELL_DIFF_SEED=\(seed) SWELL_TEST_STORE=\(directory.store) swift test --filter ContextLevelsDifferentialTests
                    steps:
                    \(run.log.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
                    """)
                return
            }
        }
    }
}

/// Authors, books and tags: a to-one with a to-many inverse, and a many-to-many.
let levelsModel = ManagedObjectModel(entities: [
    EntityDescription(name: "Author", attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "name", type: .string, isOptional: true),
    ], relationships: [
        RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "author"),
    ], uniquenessConstraint: ["id"]),
    EntityDescription(name: "Book", attributes: [
        AttributeDescription(name: "isbn", type: .integer),
        AttributeDescription(name: "title", type: .string, isOptional: true),
        AttributeDescription(name: "rating", type: .integer, isOptional: true),
    ], relationships: [
        RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
        RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "books"),
    ], uniquenessConstraint: ["isbn"]),
    EntityDescription(name: "Tag", attributes: [
        AttributeDescription(name: "name", type: .string),
    ], relationships: [
        RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "tags"),
    ], uniquenessConstraint: ["name"]),
])

/// One seed's run: the stack, the model, and the objects each context holds. Driven from one
/// task; each context's objects are touched only inside that context's `performAndWait`.
/// `@unchecked Sendable`: driven from one task at a time; each context's objects are touched only inside that context's `performAndWait`.
final class LevelRun: @unchecked Sendable {
    typealias Key = LevelModel.Key
    typealias Row = LevelModel.Row

    let container: PersistentContainer
    var random: SeededGenerator
    var model = LevelModel(contexts: 5)
    /// 0 the writer, 1 the view context, 2 and 3 workers, 4 a background task's context.
    var contexts: [ManagedObjectContext]
    var held: [[Key: ManagedObject]] = Array(repeating: [:], count: 5)
    var log: [String] = []
    private var nextKey = 1
    /// On the view context (used on its queue); `controllerCurrent`: a save that moved
    /// something reached the view context since its last own edit or the writer's.
    var controller: FetchedResultsController<ManagedObject>?
    var controllerCurrent = false

    init(seed: UInt64, container: PersistentContainer) {
        self.container = container
        random = SeededGenerator(state: seed)
        contexts = [container.writerContext, container.viewContext,
                    container.newBackgroundContext(), container.newBackgroundContext(), container.newBackgroundContext()]
    }

    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int.random(in: 0..<values.count, using: &random)] }
    func freshKey() -> Int { defer { nextKey += 1 }; return nextKey }
    func name(_ context: Int) -> String { ["writer", "view", "worker A", "worker B", "background task"][context] }

    // MARK: Steps

    func step() async throws {
        if controller == nil { try startController() }
        let roll = Int.random(in: 0..<100, using: &random)
        // Whether a save that moves something reaches the view context (its controller fetches again).
        let movesIntoView = { (context: Int) in !self.model.pending[context].isEmpty }
        switch roll {
        case 0..<50:
            let context = pick([0, 1, 1, 2, 2, 3, 3])!
            try onQueue(context) { try self.edit(in: context) }
            if context < 2 { controllerCurrent = false }
        case 50..<62:
            let context = pick([1, 2, 3])!
            if movesIntoView(context) { controllerCurrent = true }
            log.append("\(name(context)).save()")
            try onQueue(context) { try self.contexts[context].save() }
            model.save(context)
        case 62..<68:
            log.append("writer.save()")
            try onQueue(0) { try self.contexts[0].save() }
            model.save(0)
        case 68..<76:
            if movesIntoView(1) { controllerCurrent = true }
            log.append("saveToDisk()")
            try await container.saveToDisk()
            model.save(1)
            model.save(0)
        case 76..<84:
            try await backgroundTask()
        case 84..<88:
            let context = pick([2, 3])!
            log.append("\(name(context)).rollback()")
            try onQueue(context) { self.contexts[context].rollback() }
            model.rollback(context)
        case 88..<90:
            let context = pick([2, 3])!
            log.append("\(name(context)).reset()")
            try onQueue(context) {
                self.contexts[context].reset()
                self.held[context] = [:]
            }
            model.reset(context)
        case 90..<94:
            let context = pick([0, 1, 2, 3])!
            log.append("\(name(context)).refreshAllObjects()")
            try onQueue(context) { self.contexts[context].refreshAllObjects() }
            model.took(model.snapshots[context].keys, in: context)
        default:
            try await interleaved()
            controllerCurrent = true
        }
        drain()
    }

    /// A fetched results controller on the view context: books by ISBN in sections by their author's name.
    private func startController() throws {
        try onQueue(1) {
            var request = FetchRequest(entityName: "Book")
            request.sortDescriptors = [FetchSortDescriptor(key: "isbn")]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: self.contexts[1],
                                                      sectionNameKeyPath: "author.name", cacheName: nil)
            try controller.performFetch()
            self.controller = controller
        }
        controllerCurrent = true
    }

    /// A background task's edits, saved into the view context.
    private func backgroundTask() async throws {
        let edits = Int.random(in: 1...3, using: &random)
        log.append("performBackgroundTask { \(edits) edit(s); save }")
        contexts[4] = await container.performBackgroundTask { context in context }
        model.reset(4)
        held[4] = [:]
        try onQueue(4) {
            for _ in 0..<edits { try self.edit(in: 4) }
            try self.contexts[4].save()
        }
        if !model.pending[4].isEmpty { controllerCurrent = true }
        model.save(4)
    }

    /// A background task's save into the view context while `saveToDisk()` and a worker's
    /// save run: the task edits only objects no level has a change of, so the outcome does
    /// not depend on the order; then everything above the workers goes to disk.
    private func interleaved() async throws {
        let task = container.newBackgroundContext()
        contexts[4] = task
        model.reset(4)
        held[4] = [:]
        let untouched = model.visible(1).keys.filter { key in
            key.entity == "Book" && !model.pending.contains { $0[key] != nil }
        }.sorted()
        var titles: [(Key, String)] = []
        for _ in 0..<2 { if let key = pick(untouched) { titles.append((key, "i\(freshKey())")) } }
        let newBook = freshKey()
        let worker = pick([2, 3])!
        log.append("interleaved { saveToDisk() | task: titles \(titles.map { "\($0.0)=\($0.1)" }), insert Book(\(newBook)); save | \(name(worker)).save() }; saveToDisk()")
        let edits = titles.map { ($0.0.id, $0.1) }
        let workerContext = contexts[worker]
        async let disk: Void = container.saveToDisk()
        async let workerSave: Void = workerContext.perform { try workerContext.save() }
        async let taskSave: Void = task.perform {
            for (isbn, title) in edits {
                var request = FetchRequest(entityName: "Book")
                request.predicate = FetchPredicate(format: "isbn == %@", Int(isbn)!)
                try task.fetch(request).first?["title"] = title
            }
            let book = task.insertNewObject(forEntityName: "Book")
            book["isbn"] = newBook
            try task.save()
        }
        _ = try await (disk, workerSave, taskSave)
        try await container.saveToDisk()
        for (key, title) in titles {
            model.took([key], in: 4)
            model.set(["title": .string(title)], of: key, in: 4)
        }
        model.insert(Key(entity: "Book", id: "\(newBook)"), ["title": .none, "rating": .none, "author": .none, "tags": .keys([])], in: 4)
        model.save(worker)
        model.save(4)
        model.save(1)
        model.save(0)
    }

    /// One random edit in `context` (on its queue).
    private func edit(in context: Int) throws {
        let here = contexts[context]
        let visible = model.visible(context)
        let books = visible.keys.filter { $0.entity == "Book" && !model.deletedElsewhere(context, $0) }.sorted()
        let authors = visible.keys.filter { $0.entity == "Author" }.sorted()
        let tags = visible.keys.filter { $0.entity == "Tag" }.sorted()
        let who = name(context)
        let edit = Int.random(in: 0..<9, using: &random)
        if edit >= 4 && (edit == 6 ? tags.isEmpty || books.isEmpty : edit == 8 ? authors.isEmpty : books.isEmpty) {
            log.append("\(who): (nothing to edit)")
            return
        }
        switch edit {
        case 0, 1:
            let isbn = freshKey()
            let title: String? = pick(["a", "b", "c", nil])!
            let rating: Int? = pick([1, 3, 5, nil])!
            let author = chance(60) ? pick(authors) : nil
            let tag = chance(40) ? pick(tags) : nil
            log.append("\(who): insert Book(\(isbn)) title=\(title ?? "nil") rating=\(rating.map(String.init) ?? "nil") author=\(author?.id ?? "nil") tags=\(tag?.id ?? "-")")
            let book = here.insertNewObject(forEntityName: "Book")
            book["isbn"] = isbn
            book["title"] = title
            book["rating"] = rating
            if let author { book["author"] = try object(author, in: context) }
            if let tag { book.mutableSetValue(forKey: "tags").insert(try object(tag, in: context)) }
            hold(book, Key(entity: "Book", id: "\(isbn)"), in: context)
            model.insert(Key(entity: "Book", id: "\(isbn)"), [
                "title": title.map(LevelModel.Value.string) ?? .none, "rating": rating.map(LevelModel.Value.int) ?? .none,
                "author": author.map { .int(Int($0.id)!) } ?? .none, "tags": .keys(tag.map { [$0.id] } ?? []),
            ], in: context)
        case 2:
            let id = freshKey()
            let name: String? = pick(["Ann", "Bo", nil])!
            log.append("\(who): insert Author(\(id)) name=\(name ?? "nil")")
            let author = here.insertNewObject(forEntityName: "Author")
            author["id"] = id
            author["name"] = name
            hold(author, Key(entity: "Author", id: "\(id)"), in: context)
            model.insert(Key(entity: "Author", id: "\(id)"), ["name": name.map(LevelModel.Value.string) ?? .none], in: context)
        case 3:
            let label = "t\(freshKey())"
            log.append("\(who): insert Tag(\(label))")
            let tag = here.insertNewObject(forEntityName: "Tag")
            tag["name"] = label
            model.insert(Key(entity: "Tag", id: label), [:], in: context)
        case 4:
            guard let key = pick(books) else { return }
            let book = try object(key, in: context)
            if chance(50) {
                let title: String? = pick(["a", "b", "c", "d", nil])!
                log.append("\(who): \(key).title = \(title ?? "nil")")
                book["title"] = title
                model.set(["title": title.map(LevelModel.Value.string) ?? .none], of: key, in: context)
            } else {
                let rating: Int? = pick([1, 2, 3, 4, 5, nil])!
                log.append("\(who): \(key).rating = \(rating.map(String.init) ?? "nil")")
                book["rating"] = rating
                model.set(["rating": rating.map(LevelModel.Value.int) ?? .none], of: key, in: context)
            }
        case 5:
            guard let key = pick(books) else { return }
            let author = chance(80) ? pick(authors) : nil
            log.append("\(who): \(key).author = \(author?.description ?? "nil")")
            let book = try object(key, in: context)
            book["author"] = try author.map { try object($0, in: context) }
            model.set(["author": author.map { .int(Int($0.id)!) } ?? .none], of: key, in: context)
        case 6:
            guard let key = pick(books), let tag = pick(tags) else { return }
            let book = try object(key, in: context)
            guard case .keys(var members)? = model.row(key, in: context)?["tags"] else { return }
            let members0 = members
            let set = book.mutableSetValue(forKey: "tags")
            let tagObject = try object(tag, in: context)
            if members0.contains(tag.id) {
                log.append("\(who): \(key).tags.remove(\(tag))")
                set.remove(tagObject)
                members.remove(tag.id)
            } else {
                log.append("\(who): \(key).tags.insert(\(tag))")
                set.insert(tagObject)
                members.insert(tag.id)
            }
            model.set(["tags": .keys(members)], of: key, in: context)
        case 7:
            guard let key = pick(books.filter { !model.pendingElsewhere(context, $0) }) else {
                log.append("\(who): (nothing to delete)")
                return
            }
            log.append("\(who): delete \(key)")
            here.delete(try object(key, in: context))
            model.delete(key, in: context)
        default:
            guard let key = pick(authors) else { return }
            let name: String? = pick(["Ann", "Bo", "Cy", nil])!
            log.append("\(who): \(key).name = \(name ?? "nil")")
            try object(key, in: context)["name"] = name
            model.set(["name": name.map(LevelModel.Value.string) ?? .none], of: key, in: context)
        }
    }

    /// The object for a model key in `context`, fetched by its key (the fetch refreshes it).
    private func object(_ key: Key, in context: Int) throws -> ManagedObject {
        var request = FetchRequest(entityName: key.entity)
        switch key.entity {
        case "Book": request.predicate = FetchPredicate(format: "isbn == %@", Int(key.id)!)
        case "Author": request.predicate = FetchPredicate(format: "id == %@", Int(key.id)!)
        default: request.predicate = FetchPredicate(format: "name == %@", key.id)
        }
        guard let object = try contexts[context].fetch(request).first else {
            throw LevelRunFailure(message: "\(name(context)) cannot fetch \(key), which the model says it sees")
        }
        model.took([key], in: context)
        return object
    }

    private func hold(_ object: ManagedObject, _ key: Key, in context: Int) {
        if chance(70) { held[context][key] = object }
    }

    /// Runs `body` on a context's queue and waits.
    func onQueue(_ context: Int, _ body: () throws -> Void) throws {
        try contexts[context].performAndWait { try body() }
    }

    /// Lets every context run what saves queued on it (refreshes of its objects).
    func drain() {
        for context in contexts { context.performAndWait {} }
    }
}

struct LevelRunFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
