import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// The differential test of conflicts between writers (Store guarantees 61, 62): two or three
/// root contexts on one store — on one coordinator or on coordinators of their own — read,
/// edit, insert, delete, refresh, merge each other's saves, pick merge policies and save in a
/// random order; after every step the store (read through a fresh coordinator), each writer's
/// change sets and the values of every object it holds, and each save's outcome (the conflict
/// it failed with, naming which objects) are compared with `ConflictModel`, computed in the test.
///
/// CI runs seeds 1–12 on every store; `SWELL_DIFF_SEEDS=500` runs more locally,
/// `SWELL_DIFF_SEED=n` replays one, and `SWELL_DIFF_STEPS` sets the steps per seed.
@Suite(.onEveryStore) struct ConflictDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 12) }

    static var steps: Int { DifferentialSeeds.steps(ci: 60) }

    @Test(arguments: seeds) func everyWriterAndTheStoreAreWhatTheModelSays(seed: UInt64) throws {
        try run(seed: seed, children: false)
    }

    /// The same rules between children and their parent (statement 61's last sentence): the
    /// writers are children of one root, which edits, deletes, inserts, saves and rolls back
    /// between their reads and saves; "the store" of the model is what the parent shows.
    @Test(arguments: seeds) func childrenAndTheirParentAreWhatTheModelSays(seed: UInt64) throws {
        try run(seed: seed, children: true)
    }

    private func run(seed: UInt64, children: Bool) throws {
        let directory = TemporaryDirectory()
        let run = try ConflictRun(seed: seed, url: directory.storeURL("conflicts"), children: children)
        for step in 1...Self.steps {
            var mismatches = try run.step()
            mismatches += run.check()
            if !mismatches.isEmpty {
                Issue.record("""
                    seed \(seed), store \(directory.store), step \(step): \(mismatches.count) mismatch(es)
                    \(mismatches.prefix(12).joined(separator: "\n"))
                    replay: SWELL_DIFF_SEED=\(seed) SWELL_TEST_STORE=\(directory.store) swift test --filter ConflictDifferentialTests/\(children ? "children" : "everyWriter")
                    \(run.layout)
                    steps:
                    \(run.log.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
                    """)
                return
            }
        }
    }
}

/// One seed's run: the writers, the model, and the objects each writer holds. Driven from one
/// task. `@unchecked Sendable`: driven from one task at a time; each writer's objects are
/// touched only inside that writer's `performAndWait`.
final class ConflictRun: @unchecked Sendable {
    typealias Row = ConflictModel.Row

    let url: URL
    /// In the child ← parent variant, the root the writers are children of; the model's `store`
    /// is then what it shows, and `disk` what its saves wrote.
    let parent: ManagedObjectContext?
    var disk: [Int: Row] = [:]
    var random: SeededGenerator
    var model: ConflictModel
    var contexts: [ManagedObjectContext] = []
    /// Per writer, the objects it holds, by their entry's `id`.
    var objects: [[Int: ManagedObject]]
    /// Every entry's ID (permanent from its insert, statement 17), to name a save's objects.
    var keys: [ObjectID: Int] = [:]
    /// Per writer, its last successful save's did-save changes, for the others to merge.
    var lastSave: [ContextDidSaveChanges?]
    let layout: String
    var log: [String] = []
    var nextKey = 1
    private var nextValue = 1
    var storeChanged = true
    var diskChanged = false

    init(seed: UInt64, url: URL, children: Bool) throws {
        self.url = url
        random = SeededGenerator(state: seed)
        parent = children ? try makeRootContext(at: url) : nil
        let count = Int.random(in: children ? 1...2 : 2...3, using: &random)
        model = ConflictModel(writers: count)
        objects = Array(repeating: [:], count: count)
        lastSave = Array(repeating: nil, count: count)
        var layout: [String] = []
        for writer in 0..<count {
            let context: ManagedObjectContext
            if let parent {
                context = ManagedObjectContext(concurrencyType: .privateQueue)
                context.parent = parent
                layout.append("\(Self.name(writer)) a child of the root P")
            } else if writer > 0, Bool.random(using: &random) {
                context = ManagedObjectContext(concurrencyType: .privateQueue)
                context.persistentStoreCoordinator = contexts[0].persistentStoreCoordinator
                layout.append("\(Self.name(writer)) on A's coordinator")
            } else {
                context = try makeRootContext(at: url)
                layout.append("\(Self.name(writer)) on its own coordinator")
            }
            // What a writer "last read" of an object must outlive the test's references: a context
            // holds unchanged objects only while someone does, so every writer keeps what it registers.
            context.retainsRegisteredObjects = true
            contexts.append(context)
        }
        self.layout = "writers: " + layout.joined(separator: ", ")
        if let parent {
            parent.retainsRegisteredObjects = true
            for _ in 0..<4 { parentInsert() }
            try parentSave()
        } else {
            for _ in 0..<4 { try insert(in: 0) }
            log.append("A.save()")
            try contexts[0].performAndWait { lastSave[0] = try contexts[0].saveReturningChanges() }
            _ = model.save(0)
        }
        for writer in 0..<count { _ = try fetchAll(in: writer) }
    }

    static func name(_ writer: Int) -> String { ["A", "B", "C"][writer] }

    func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int.random(in: 0..<values.count, using: &random)] }

    /// A value never written before, naming its writer (`nil`: the parent).
    func freshValue(_ writer: Int?) -> String {
        defer { nextValue += 1 }
        return "\(writer.map(Self.name) ?? "P")\(nextValue)"
    }

    // MARK: Steps

    /// One random step; returns what it found different from the model on the way (a save's
    /// outcome, a fetch's objects, a look-up's).
    func step() throws -> [String] {
        if parent != nil, Int.random(in: 0..<100, using: &random) < 25 { return try parentStep() }
        let writer = Int.random(in: 0..<contexts.count, using: &random)
        let who = Self.name(writer)
        let held = model.writers[writer].held.sorted()
        let live = held.filter { !model.writers[writer].isDeleted($0) }
        let read = held.filter { if case .inserted? = model.writers[writer].pending[$0] { false } else { true } }
        var found: [String] = []
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<32:
            // Mostly the first entries, which every writer read: conflicts need rows in common.
            guard let key = pick(Bool.random(using: &random) ? Array(live.prefix(3)) : live) else { return [] }
            let name = pick(ConflictModel.attributes)!
            let shown = model.writers[writer].shown(key)?[name]
            let value = shown != nil && Int.random(in: 0..<100, using: &random) < 15 ? nil : freshValue(writer)
            log.append("\(who): entry \(key).\(name) = \(value ?? "nil")")
            contexts[writer].performAndWait { objects[writer][key]?[name] = value }
            model.set(name, to: value, of: key, in: writer)
        case 32..<38:
            try insert(in: writer)
        case 38..<45:
            guard let key = pick(live) else { return [] }
            log.append("\(who): delete entry \(key)")
            contexts[writer].performAndWait {
                if let object = objects[writer][key] { contexts[writer].delete(object) }
            }
            model.delete(key, in: writer)
        case 45..<52:
            found = try fetchAll(in: writer)
        case 52..<57:
            guard let key = pick(read) else { return [] }
            let merging = Int.random(in: 0..<100, using: &random) < 70
            log.append("\(who): refresh entry \(key), mergeChanges: \(merging)")
            contexts[writer].performAndWait {
                if let object = objects[writer][key] { contexts[writer].refresh(object, mergeChanges: merging) }
            }
            model.refresh(key, mergeChanges: merging, in: writer)
        case 57..<60:
            log.append("\(who).refreshAllObjects()")
            contexts[writer].performAndWait { contexts[writer].refreshAllObjects() }
            model.refreshAll(in: writer)
        case 60..<64:
            guard let key = pick(read), let id = objects[writer][key]?.objectID else { return [] }
            let throwsNotFound = model.lookUp(key, in: writer)
            log.append("\(who): existingObject(entry \(key))\(throwsNotFound ? " throws objectNotFound" : "")")
            found = lookUp(id, key, in: writer, throwsNotFound: throwsNotFound)
        case 64..<68:
            setPolicy(of: writer)
        case 68..<88:
            // Half the saves pick their policy first (a Core Data developer sets it before saving).
            if Bool.random(using: &random) { setPolicy(of: writer) }
            found = save(writer)
        case 88..<91:
            log.append("\(who).rollback()")
            contexts[writer].performAndWait { contexts[writer].rollback() }
            model.rollback(writer)
        default:
            let others = lastSave.indices.filter { $0 != writer && lastSave[$0] != nil }
            guard let other = pick(others), let changes = lastSave[other] else { return [] }
            log.append("\(who).mergeChanges(\(Self.name(other))'s last save)")
            contexts[writer].performAndWait { contexts[writer].mergeChanges(changes) }
            model.merge(updated: Set(changes.updated.keys.compactMap { keys[$0] }),
                        deleted: Set(changes.deleted.compactMap { keys[$0] }), into: writer)
        }
        // The objects the writer no longer holds (deleted and saved, inserted and rolled back).
        let nowHeld = model.writers[writer].held
        objects[writer] = objects[writer].filter { nowHeld.contains($0.key) }
        return found
    }

    private func setPolicy(of writer: Int) {
        let policy = pick([MergePolicy.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback])!
        log.append("\(Self.name(writer)).mergePolicy = .\(policy)")
        contexts[writer].mergePolicy = policy
        model.writers[writer].policy = policy
    }

    /// Inserts an entry with a new key and random values.
    private func insert(in writer: Int) throws {
        let key = nextKey
        nextKey += 1
        var row = Row()
        for name in ConflictModel.attributes where Int.random(in: 0..<100, using: &random) < 70 { row[name] = freshValue(writer) }
        log.append("\(Self.name(writer)): insert entry \(key) \(row)")
        contexts[writer].performAndWait {
            let entry = insertEntry(contexts[writer], id: key)
            for name in ConflictModel.attributes { entry[name] = row[name] }
            objects[writer][key] = entry
            keys[entry.objectID] = key
        }
        model.insert(key, row, in: writer)
    }

    /// Fetches every entry; the writer holds what it returns.
    private func fetchAll(in writer: Int) throws -> [String] {
        log.append("\(Self.name(writer)): fetch all")
        // The stored entries but those deleted here, and those inserted here (statement 13).
        let pending = model.writers[writer].pending
        let expected = Set(model.store.keys.filter { pending[$0] != .deleted })
            .union(pending.compactMap { if case .inserted = $0.value { $0.key } else { nil } })
        model.fetchAll(in: writer)
        let fetched = try contexts[writer].performAndWait {
            var fetched: [Int: ManagedObject] = [:]
            for entry in try contexts[writer].fetch(FetchRequest(entityName: "JournalEntry")) {
                fetched[entry["id"] as? Int ?? -1] = entry
            }
            return fetched
        }
        for (key, object) in fetched where objects[writer][key] == nil { objects[writer][key] = object }
        guard Set(fetched.keys) != expected else { return [] }
        return ["\(Self.name(writer)) fetches entries \(fetched.keys.sorted()), model: \(expected.sorted())"]
    }

    /// `existingObject(with:)`: throws `.objectNotFound` exactly when the row is gone (statement 62).
    private func lookUp(_ id: ObjectID, _ key: Int, in writer: Int, throwsNotFound: Bool) -> [String] {
        let who = Self.name(writer)
        return contexts[writer].performAndWait {
            do {
                let object = try contexts[writer].existingObject(with: id)
                if throwsNotFound { return ["\(who): existingObject(entry \(key)) returned an object (deleted \(object.isDeleted)); its row is gone"] }
                if object !== objects[writer][key] { return ["\(who): existingObject(entry \(key)) returned another object than the one registered"] }
                return []
            } catch let error as StoreError where error.kind == StoreError.Kind("objectNotFound") && throwsNotFound {
                return []
            } catch {
                return ["\(who): existingObject(entry \(key)) threw \(error)\(throwsNotFound ? ", model: objectNotFound" : ", model: the object")"]
            }
        }
    }

    /// Saves a writer and compares the outcome with the model's: the conflict it fails with
    /// (which objects, what each changed), or the changes its did-save notice lists.
    private func save(_ writer: Int) -> [String] {
        let who = Self.name(writer)
        let before = model.writers[writer].pending
        let expected = model.save(writer)
        let outcome = Result { try contexts[writer].performAndWait { try contexts[writer].saveReturningChanges() } }
        switch (expected, outcome) {
        case (.fails(let conflicts), .failure(let error as StoreError)) where error.kind == StoreError.Kind("mergeConflict"):
            log.append("\(who).save() [.\(model.writers[writer].policy)] fails: mergeConflict \(conflicts.keys.sorted())")
            let named = error.objects.map { keys[$0] ?? -1 }.sorted()
            var found: [String] = []
            if named != conflicts.keys.sorted() {
                found.append("\(who).save() failed naming entries \(named), model: \(conflicts.keys.sorted()) (\(conflicts.values.map(\.description).sorted().joined(separator: "; ")))")
            }
            return found + conflictDetailMismatches(error, conflicts)
        case (.fails(let conflicts), .success):
            log.append("\(who).save() [.\(model.writers[writer].policy)] succeeded")
            return ["\(who).save() succeeded, model: mergeConflict on \(conflicts.values.map(\.description).sorted().joined(separator: "; "))"]
        case (.fails(let conflicts), .failure(let error)):
            log.append("\(who).save() [.\(model.writers[writer].policy)] threw \(error)")
            return ["\(who).save() threw \(error), model: mergeConflict on \(conflicts.keys.sorted())"]
        case (.saved, .failure(let error)):
            log.append("\(who).save() [.\(model.writers[writer].policy)] threw \(error)")
            return ["\(who).save() threw \(error), model: it saves"]
        case (.saved(let inserted, let updated, let deleted, let resolved), .success(let changes)):
            log.append("\(who).save() [.\(model.writers[writer].policy)] saved: inserted \(inserted.sorted()), updated \(updated.sorted()), deleted \(deleted.sorted())"
                       + (resolved.isEmpty ? "" : ", conflicts resolved \(resolved.sorted())"))
            storeChanged = true
            lastSave[writer] = changes
            // Statement 19: the notice lists every change written, and no object the save did not carry.
            let listed = (inserted: Set(changes.inserted.compactMap { keys[$0] }), updated: Set(changes.updated.keys.compactMap { keys[$0] }),
                          deleted: Set(changes.deleted.compactMap { keys[$0] }))
            let carried = { (kind: (ConflictModel.Change) -> Bool) in Set(before.filter { kind($0.value) }.keys) }
            let carriedUpdates = carried { if case .updated = $0 { true } else { false } }
            let carriedDeletes = carried { $0 == .deleted }
            if listed.inserted != inserted || !listed.updated.isSuperset(of: updated) || !listed.updated.isSubset(of: carriedUpdates)
                || !listed.deleted.isSuperset(of: deleted) || !listed.deleted.isSubset(of: carriedDeletes) {
                return ["\(who)'s did-save notice lists inserted \(listed.inserted.sorted()), updated \(listed.updated.sorted()), deleted \(listed.deleted.sorted()); model wrote \(inserted.sorted()), \(updated.sorted()), \(deleted.sorted())"]
            }
            return []
        }
    }

    // MARK: Checks

    /// Every difference between the writers, the store and the model (empty when they agree).
    func check() -> [String] {
        var found: [String] = []
        for writer in contexts.indices {
            contexts[writer].performAndWait { found += check(writer) }
        }
        if diskChanged {
            diskChanged = false
            do {
                let stored = try storedRows()
                for key in Set(stored.keys).union(disk.keys).sorted() where stored[key] != disk[key] {
                    found.append("the store has entry \(key) \(stored[key].map { "\($0)" } ?? "gone"), model: \(disk[key].map { "\($0)" } ?? "gone")")
                }
            } catch {
                found.append("reading the store: \(error)")
            }
        }
        if storeChanged {
            storeChanged = false
            do {
                let stored = try parent.map(parentRows) ?? storedRows()
                let store = parent == nil ? "the store" : "the parent"
                for key in Set(stored.keys).union(model.store.keys).sorted() where stored[key] != model.store[key] {
                    found.append("\(store) has entry \(key) \(stored[key].map { "\($0)" } ?? "gone"), model: \(model.store[key].map { "\($0)" } ?? "gone")")
                }
            } catch {
                found.append("reading \(parent == nil ? "the store" : "the parent"): \(error)")
            }
        }
        return found
    }

    /// One writer (on its queue): its change sets and the objects it holds.
    private func check(_ writer: Int) -> [String] {
        let who = Self.name(writer)
        let context = contexts[writer]
        let expected = model.writers[writer]
        var found: [String] = []
        let sets = (inserted: Set(context.insertedObjects.map { keys[$0.objectID] ?? -1 }),
                    updated: Set(context.updatedObjects.map { keys[$0.objectID] ?? -1 }),
                    deleted: Set(context.deletedObjects.map { keys[$0.objectID] ?? -1 }))
        let modelSets = (inserted: Set(expected.pending.filter { if case .inserted = $0.value { true } else { false } }.keys),
                         updated: Set(expected.pending.filter { if case .updated = $0.value { true } else { false } }.keys),
                         deleted: Set(expected.pending.filter { $0.value == .deleted }.keys))
        if sets.inserted != modelSets.inserted || sets.updated != modelSets.updated || sets.deleted != modelSets.deleted {
            found.append("\(who)'s changes: inserted \(sets.inserted.sorted()), updated \(sets.updated.sorted()), deleted \(sets.deleted.sorted()); model: \(modelSets.inserted.sorted()), \(modelSets.updated.sorted()), \(modelSets.deleted.sorted())")
        }
        let anySet = !(sets.inserted.isEmpty && sets.updated.isEmpty && sets.deleted.isEmpty)
        if context.hasChanges != !expected.pending.isEmpty || context.hasChanges != anySet {
            found.append("\(who).hasChanges is \(context.hasChanges), model: \(!expected.pending.isEmpty), its change sets \(anySet ? "are not" : "are") empty")
        }
        for key in expected.held.sorted() {
            guard let object = objects[writer][key] else {
                found.append("\(who) holds no object of entry \(key), the model does")
                continue
            }
            let deleted = expected.isDeleted(key)
            if object.isDeleted != deleted {
                found.append("\(who)'s entry \(key).isDeleted is \(object.isDeleted) (shows \(Self.row(of: object)), \(object.managedObjectContext == nil ? "in no context" : "registered")), model: \(deleted) (read \(String(describing: expected.read[key])), change \(String(describing: expected.pending[key])))")
            } else if let shown = expected.shown(key), Self.row(of: object) != shown {
                found.append("\(who)'s entry \(key) shows \(Self.row(of: object)), model: \(shown) (read \(String(describing: expected.read[key])), change \(String(describing: expected.pending[key])))")
            }
        }
        return found
    }

    /// Every entry in the store, read through a fresh coordinator.
    private func storedRows() throws -> [Int: Row] {
        let reader = try makeRootContext(at: url)
        return try reader.performAndWait {
            var rows: [Int: Row] = [:]
            for entry in try reader.fetch(FetchRequest(entityName: "JournalEntry")) { rows[entry["id"] as? Int ?? -1] = Self.row(of: entry) }
            return rows
        }
    }

    static func row(of object: ManagedObject) -> Row {
        Row(wind: object["wind"] as? String, height: object["height"] as? String, location: object["location"] as? String)
    }
}
