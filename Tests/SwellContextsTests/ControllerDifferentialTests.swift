import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 64, differentially: random events on the view context — unsaved inserts, updates
/// and deletes, saves, rollbacks, a child's save, explicit `processPendingChanges()` — and after
/// each event every controller's rows and sections are those of a fresh fetch, and replaying what
/// it reported (deletes at old index paths, inserts and moves at new ones, as a table view applies
/// a batch) onto the rows it showed before gives them.
///
/// CI runs seeds 1–12 on every store; `SWELL_DIFF_SEED=n` replays one, `SWELL_DIFF_SEEDS=500` runs
/// more, `SWELL_DIFF_STEPS` sets the events per seed.
@Suite(.onEveryStore) struct ControllerDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 12) }

    static var events: Int { DifferentialSeeds.steps(ci: 40) }

    @Test(arguments: seeds) func reportedChangesReplayOntoTheRowsAFreshFetchGives(seed: UInt64) async throws {
        let directory = TemporaryDirectory()
        let run = ControllerRun(seed: seed, container: try makeContainer(directory, name: "controllers"))
        try run.start()
        for event in 1...Self.events {
            let mismatches = try await run.event() + run.check()
            if !mismatches.isEmpty {
                Issue.record("""
                    seed \(seed), store \(directory.store), event \(event): \(mismatches.count) mismatch(es)
                    \(mismatches.prefix(12).joined(separator: "\n"))
                    replay: SWELL_DIFF_SEED=\(seed) SWELL_TEST_STORE=\(directory.store) swift test --filter ControllerDifferentialTests
                    events:
                    \(run.log.map { "  \($0)" }.joined(separator: "\n"))
                    """)
                return
            }
        }
    }
}

/// What a controller shows: section names and each section's object IDs.
struct ControllerLayout: Equatable, CustomStringConvertible {
    var names: [String] = []
    var rows: [[ObjectID]] = []

    /// The layout a controller over `objects` must show: grouped by `location` ("" for nil) in
    /// the order the names first appear.
    init(grouping objects: [ManagedObject], sectioned: Bool) {
        for object in objects {
            let name = sectioned ? (object["location"] as? String ?? "") : ""
            if let index = names.firstIndex(of: name) {
                rows[index].append(object.objectID)
            } else {
                names.append(name)
                rows.append([object.objectID])
            }
        }
        if !sectioned && names.isEmpty {
            names = [""]
            rows = [[]]
        }
    }

    init(names: [String], rows: [[ObjectID]]) {
        self.names = names
        self.rows = rows
    }

    var description: String {
        zip(names, rows).map { name, ids in "\(name.isEmpty ? "-" : name): \(ids.map { "\($0.primaryKey & 0xFFFF_FFFF)" }.joined(separator: ","))" }
            .joined(separator: " | ")
    }
}

/// Records a controller's calls in order (used on the view context's queue only).
/// `@unchecked Sendable`: the controller calls it on the main queue, where the test reads it inside `performAndWait`.
final class ReplayRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
    enum Call {
        case will, did
        case row(FetchedResultsChangeType, ObjectID, IndexPath?, IndexPath?)
        case section(FetchedResultsChangeType, String, Int)
    }

    var calls: [Call] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) { calls.append(.will) }
    func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) { calls.append(.did) }
    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        calls.append(.row(type, object.objectID, indexPath, newIndexPath))
    }
    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange sectionInfo: FetchedResultsSectionInfo<ManagedObject>,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        calls.append(.section(type, sectionInfo.name, sectionIndex))
    }

    /// The layout `calls` turn `old` into: each will-change … did-change batch in turn (an event
    /// of the test may be two of the context's, as `saveToDisk()` after an edit).
    func replay(onto old: ControllerLayout) throws -> ControllerLayout {
        var layout = old
        var batch: [Call] = []
        for call in calls {
            if case .did = call {
                layout = try Self.apply(batch, onto: layout)
                batch = []
            } else {
                batch.append(call)
            }
        }
        return batch.isEmpty ? layout : try Self.apply(batch, onto: layout)
    }

    /// The layout one batch of calls turns `old` into, applied as a table view applies a batch of
    /// updates: row deletes and move sources by their old index paths, then deleted sections (which
    /// must be empty by then), then inserted sections and row inserts and move destinations by their
    /// new index paths, ascending. Throws what cannot be applied.
    private static func apply(_ calls: [Call], onto old: ControllerLayout) throws -> ControllerLayout {
        var sections = old.rows.map { $0.map(Optional.some) }
        var deletedSections: Set<Int> = []
        var insertedSections: [(Int, String)] = []
        var placed: [(IndexPath, ObjectID)] = []
        func remove(_ id: ObjectID, at path: IndexPath?) throws {
            guard let path, sections.indices.contains(path.section), sections[path.section].indices.contains(path.item),
                  sections[path.section][path.item] == id else {
                throw LevelRunFailure(message: "a delete or move of \(id.primaryKey & 0xFFFF_FFFF) from \(String(describing: path)) is not where it was in \(old)")
            }
            sections[path.section][path.item] = nil
        }
        for call in calls {
            switch call {
            case .will, .did: continue
            case .section(.delete, _, let index): deletedSections.insert(index)
            case .section(.insert, let name, let index): insertedSections.append((index, name))
            case .section(let type, let name, _): throw LevelRunFailure(message: "a section call of type \(type) for '\(name)'")
            case .row(.delete, let id, let path, _): try remove(id, at: path)
            case .row(.move, let id, let path, let newPath):
                try remove(id, at: path)
                guard let newPath else { throw LevelRunFailure(message: "a move of \(id.primaryKey & 0xFFFF_FFFF) without a new index path") }
                placed.append((newPath, id))
            case .row(.insert, let id, _, let newPath):
                guard let newPath else { throw LevelRunFailure(message: "an insert of \(id.primaryKey & 0xFFFF_FFFF) without a new index path") }
                placed.append((newPath, id))
            case .row(.update, let id, let path, _):
                guard let path, sections.indices.contains(path.section), sections[path.section].indices.contains(path.item),
                      sections[path.section][path.item] == id else {
                    throw LevelRunFailure(message: "an update of \(id.primaryKey & 0xFFFF_FFFF) at \(String(describing: path)), where it was not in \(old)")
                }
            case .row(let type, let id, _, _): throw LevelRunFailure(message: "a row call of type \(type) for \(id.primaryKey & 0xFFFF_FFFF)")
            }
        }
        var names = old.names
        for index in deletedSections.sorted(by: >) {
            guard sections.indices.contains(index), sections[index].allSatisfy({ $0 == nil }) else {
                throw LevelRunFailure(message: "section \(index) was deleted but rows stay in it (\(old))")
            }
            sections.remove(at: index)
            names.remove(at: index)
        }
        var rows = sections.map { $0.compactMap { $0 } }
        for (index, name) in insertedSections.sorted(by: { $0.0 < $1.0 }) {
            guard index <= rows.count else { throw LevelRunFailure(message: "section '\(name)' inserted at \(index) past the end") }
            rows.insert([], at: index)
            names.insert(name, at: index)
        }
        for (path, id) in placed.sorted(by: { $0.0 < $1.0 }) {
            guard rows.indices.contains(path.section), path.item <= rows[path.section].count else {
                throw LevelRunFailure(message: "\(id.primaryKey & 0xFFFF_FFFF) placed at \(path) past the end")
            }
            rows[path.section].insert(id, at: path.item)
        }
        return ControllerLayout(names: names, rows: rows)
    }

    /// What is wrong with the order of the calls: every change between a will-change and a did-change.
    var bracketingErrors: [String] {
        var open = false
        var errors: [String] = []
        for call in calls {
            switch call {
            case .will:
                if open { errors.append("two will-change calls without a did-change between") }
                open = true
            case .did:
                if !open { errors.append("a did-change call without a will-change") }
                open = false
            case .row, .section:
                if !open { errors.append("a change reported outside will-change / did-change: \(call)") }
            }
        }
        if open { errors.append("a will-change call without its did-change") }
        return errors
    }

    /// The IDs reported as updated or moved.
    var updatedOrMoved: Set<ObjectID> {
        Set(calls.compactMap { call in
            if case .row(let type, let id, _, _) = call, type == .update || type == .move { return id }
            return nil
        })
    }
}

/// One seed's run on a container's view context, driven from one task.
/// `@unchecked Sendable`: driven from one task at a time; the view context's objects and controllers are touched only inside its `performAndWait`.
final class ControllerRun: @unchecked Sendable {
    let container: PersistentContainer
    let view: ManagedObjectContext
    var random: SeededGenerator
    var log: [String] = []
    private var nextID = 1
    private var events = 0
    /// Entries with a rating of 2 or more, by location then rating (highest first), in sections by
    /// location; and every entry by rating, in sections by location that do not follow the sort.
    var controllers: [(controller: FetchedResultsController<ManagedObject>, recorder: ReplayRecorder, sectioned: Bool)] = []
    /// What each controller showed after the last event: the layout the next reports apply to.
    var shown: [ControllerLayout] = []
    /// The values (location, rating) of the objects the current event edited, before its first edit.
    var edited: [ObjectID: [String?]] = [:]

    init(seed: UInt64, container: PersistentContainer) {
        self.container = container
        self.view = container.viewContext
        random = SeededGenerator(state: seed)
    }

    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int.random(in: 0..<values.count, using: &random)] }

    func start() throws {
        try view.performAndWait {
            for _ in 0..<6 { insert(in: view) }
            try view.save()
            var rated = FetchRequest(entityName: "JournalEntry")
            rated.predicate = FetchPredicate(format: "rating >= %@", 2)
            rated.sortDescriptors = [FetchSortDescriptor(key: "location"), FetchSortDescriptor(key: "rating", ascending: false)]
            var all = FetchRequest(entityName: "JournalEntry")
            all.sortDescriptors = [FetchSortDescriptor(key: "rating")]
            var plain = FetchRequest(entityName: "JournalEntry")
            plain.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: false)]
            for (request, sectioned) in [(rated, true), (all, true), (plain, false)] {
                let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view,
                                                          sectionNameKeyPath: sectioned ? "location" : nil, cacheName: nil)
                let recorder = ReplayRecorder()
                controller.delegate = recorder
                try controller.performFetch()
                controllers.append((controller, recorder, sectioned))
                shown.append(ControllerLayout(grouping: try view.fetch(request), sectioned: sectioned))
            }
        }
        log.append("6 inserts; save; three controllers")
    }

    // MARK: Events

    /// One event on the view context (or a child's save reaching it); what a check inside it found.
    func event() async throws -> [String] {
        edited = [:]
        events += 1
        log.append("event \(events):")
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<50:
            let edits = Int.random(in: 1...3, using: &random)
            try view.performAndWait { for _ in 0..<edits { try edit(in: view) } }
        case 50..<60:
            try view.performAndWait {
                try edit(in: view)
                log.append("save")
                try view.save()
            }
        case 60..<66:
            log.append("save")
            try view.performAndWait { try view.save() }
        case 66..<73:
            log.append("rollback")
            view.performAndWait { view.rollback() }
            // What the rollback returned to differs from what was shown: every object may change.
            edited = [:]
        case 73..<85:
            let child = container.newBackgroundContext()
            log.append("child {")
            try child.performAndWait {
                for _ in 0..<Int.random(in: 1...3, using: &random) { try edit(in: child) }
                try child.save()
            }
            log.append("} child saved")
            // The save reaches the view context on its queue: wait behind it.
            view.performAndWait {}
        case 85..<93:
            // Two events in one block: processPendingChanges() ends the first.
            var mismatches: [String] = []
            try view.performAndWait {
                try edit(in: view)
                log.append("processPendingChanges()")
                view.processPendingChanges()
                mismatches = check()
                edited = [:]
                try edit(in: view)
            }
            return mismatches.map { "after processPendingChanges(): \($0)" }
        default:
            try view.performAndWait { try edit(in: view) }
            log.append("saveToDisk()")
            try await container.saveToDisk()
        }
        return []
    }

    /// An insert, update or delete in `context` (on its queue).
    private func edit(in context: ManagedObjectContext) throws {
        var request = FetchRequest(entityName: "JournalEntry")
        request.sortDescriptors = [FetchSortDescriptor(key: "id")]
        let existing = try context.fetch(request)
        let where_ = context === view ? "" : "child: "
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<35:
            let entry = insert(in: context)
            log.append("\(where_)insert \(entry["id"]!) \(entry["location"] ?? "nil") \(entry["rating"] ?? "nil")")
        case 35..<80:
            guard let entry = pick(existing) else { return }
            let key = chance(50) ? "rating" : "location"
            let value: Any? = key == "rating" ? Int.random(in: 0...4, using: &random) : pick(["A", "B", "C", nil] as [String?])!
            if edited[entry.objectID] == nil { edited[entry.objectID] = Self.values(of: entry) }
            entry[key] = value
            log.append("\(where_)\(entry["id"]!).\(key) = \(entry[key].map { "\($0)" } ?? "nil")")
        default:
            guard let entry = pick(existing) else { return }
            log.append("\(where_)delete \(entry["id"]!)")
            context.delete(entry)
        }
    }

    private static func values(of entry: ManagedObject) -> [String?] {
        [entry["location"].map { "\($0)" }, entry["rating"].map { "\($0)" }]
    }

    @discardableResult
    private func insert(in context: ManagedObjectContext) -> ManagedObject {
        defer { nextID += 1 }
        return insertEntry(context, id: nextID, location: pick(["A", "B", "C", nil] as [String?])!, rating: Int.random(in: 0...4, using: &random))
    }

    // MARK: Checks

    /// Every difference between each controller and a fresh fetch, and between the fresh fetch
    /// and what replaying the controller's reports gives; then the fresh layouts become the shown ones.
    func check() -> [String] {
        view.performAndWait {
            var found: [String] = []
            for (index, entry) in controllers.enumerated() {
                let (controller, recorder, sectioned) = entry
                let who = "controller \(index)"
                let fresh: [ManagedObject]
                do {
                    fresh = try view.fetch(controller.fetchRequest)
                } catch {
                    return ["\(who): a fresh fetch failed: \(error)"]
                }
                let expected = ControllerLayout(grouping: fresh, sectioned: sectioned)
                let objects = (controller.fetchedObjects ?? []).map(\.objectID)
                if objects != fresh.map(\.objectID) {
                    found.append("\(who) holds \(objects.map { $0.primaryKey & 0xFFFF_FFFF }), a fresh fetch gives \(fresh.map { $0.objectID.primaryKey & 0xFFFF_FFFF })")
                }
                let sections = ControllerLayout(names: controller.sections?.map(\.name) ?? [],
                                                rows: controller.sections?.map { $0.objects.map(\.objectID) } ?? [])
                if sections != expected { found.append("\(who) shows \(sections), a fresh fetch gives \(expected)") }
                found += recorder.bracketingErrors.map { "\(who): \($0)" }
                do {
                    let replayed = try recorder.replay(onto: shown[index])
                    if replayed != expected {
                        found.append("\(who): its reports turn \(shown[index]) into \(replayed), a fresh fetch gives \(expected)")
                    }
                } catch {
                    found.append("\(who): \(error)")
                }
                let before = Set(shown[index].rows.joined())
                let changed = fresh.filter { object in
                    edited[object.objectID].map { $0 != Self.values(of: object) } ?? false
                }.map(\.objectID)
                let unreported = Set(changed.filter(before.contains)).subtracting(recorder.updatedOrMoved)
                if !unreported.isEmpty { found.append("\(who): changed rows \(unreported.map { $0.primaryKey & 0xFFFF_FFFF }.sorted()) not reported as updated or moved") }
                shown[index] = expected
                recorder.calls = []
            }
            return found
        }
    }
}
