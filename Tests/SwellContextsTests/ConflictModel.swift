import SwellStore
import SwellStoreTestSupport

/// The model the conflict differential test compares writers with, written from Store
/// guarantees 61 and 62 and Core Data's documented `NSMergePolicy` behaviour, not from
/// Swell's code: the store's rows; per writer (a root context) the values each object it holds
/// last read and its unsaved changes; a save checks every update and delete against what its
/// object last read, and the saving context's policy decides each conflict.
///
/// A row's version is its values: a row conflicts when its values now differ from the values
/// the writer read (the test never writes a value twice, so "saved since" and "differs" agree
/// but for a row put back exactly by `.overwrite`, which the contract's "version" leaves open).
struct ConflictModel {
    /// The journal entry's attributes the test edits (`id` and `date` never change).
    static let attributes = ["wind", "height", "location"]

    /// An entry's values of the edited attributes (nil: NULL).
    struct Row: Hashable, CustomStringConvertible {
        var wind: String?
        var height: String?
        var location: String?

        subscript(name: String) -> String? {
            get { name == "wind" ? wind : name == "height" ? height : location }
            set {
                switch name {
                case "wind": wind = newValue
                case "height": height = newValue
                default: location = newValue
                }
            }
        }

        /// The attributes whose values differ from `other`'s.
        func differences(from other: Row) -> Set<String> {
            Set(ConflictModel.attributes.filter { self[$0] != other[$0] })
        }

        /// This row with `change`'s attributes set.
        func overlaid(_ change: Edit, only names: Set<String>? = nil) -> Row {
            var row = self
            for name in change.changed where names?.contains(name) ?? true { row[name] = change.values[name] }
            return row
        }

        var description: String {
            ConflictModel.attributes.map { "\($0)=\(self[$0] ?? "nil")" }.joined(separator: " ")
        }
    }

    /// A writer's unsaved edit of an object: the attributes it set, and their values.
    struct Edit: Hashable {
        var changed: Set<String> = []
        var values = Row()
    }

    /// A writer's unsaved change of one object.
    enum Change: Hashable {
        case inserted(Row)
        case updated(Edit)
        case deleted
    }

    /// What an object a writer holds last read: its row's values, or that the row is gone
    /// (statement 62: it reads as deleted).
    enum Read: Hashable {
        case values(Row)
        case gone
    }

    /// One writer: the objects it holds (every one it registered: the test sets
    /// `retainsRegisteredObjects`), what each last read, its unsaved changes and its policy.
    struct Writer {
        var read: [Int: Read] = [:]
        var pending: [Int: Change] = [:]
        var policy = MergePolicy.error

        /// The keys of the objects it holds: those it read and those it inserted.
        var held: Set<Int> {
            Set(read.keys).union(pending.compactMap { if case .inserted = $0.value { $0.key } else { nil } })
        }

        /// Whether the object of `key` reads as deleted here.
        func isDeleted(_ key: Int) -> Bool {
            switch pending[key] {
            case .inserted?: false
            case .deleted?: true
            default: read[key] == .gone
            }
        }

        /// What the object of `key` shows: its last read values under its unsaved edit; nil
        /// when it reads as deleted.
        func shown(_ key: Int) -> Row? {
            switch pending[key] {
            case .inserted(let row)?: return row
            case .deleted?: return nil
            case .updated(let edit)?:
                guard case .values(let row)? = read[key] else { return nil }
                return row.overlaid(edit)
            case nil:
                guard case .values(let row)? = read[key] else { return nil }
                return row
            }
        }
    }

    /// What a save with `.error` (or an edit of a gone row) reports of one object.
    struct Conflict: CustomStringConvertible {
        let key: Int
        let isDeletion: Bool
        /// The attributes the saving writer set (nil for a deletion: the contract names none).
        let changed: Set<String>?
        /// The attributes whose stored values differ from what the writer read.
        let theirChanges: Set<String>
        let ours: Row
        /// The stored values now; nil when the row is gone.
        let theirs: Row?

        var description: String {
            "\(key): \(isDeletion ? "deleted" : "changed \(changed?.sorted() ?? [])"), theirs \(theirs.map { "\($0) (\(theirChanges.sorted()))" } ?? "gone")"
        }
    }

    var store: [Int: Row] = [:]
    var writers: [Writer]

    init(writers: Int) {
        self.writers = Array(repeating: Writer(), count: writers)
    }

    // MARK: Reading

    /// `fetch` of every entry: each stored row not deleted here is handed out and read again
    /// (also under an unsaved edit, which is based on it from now on).
    mutating func fetchAll(in writer: Int) {
        for (key, row) in store where writers[writer].pending[key] != .deleted {
            writers[writer].read[key] = .values(row)
        }
    }

    /// `refresh(_:mergeChanges:)`: reads the stored row again (gone: the object reads as
    /// deleted); without merging, the object's unsaved change is dropped first. An object the
    /// writer inserted is left alone.
    mutating func refresh(_ key: Int, mergeChanges: Bool, in writer: Int) {
        if case .inserted? = writers[writer].pending[key] { return }
        if !mergeChanges { writers[writer].pending[key] = nil }
        writers[writer].read[key] = store[key].map(Read.values) ?? .gone
    }

    mutating func refreshAll(in writer: Int) {
        for key in writers[writer].read.keys { refresh(key, mergeChanges: true, in: writer) }
    }

    /// `existingObject(with:)` of a held object the writer did not insert: throws
    /// `.objectNotFound` when the row is gone, and the object reads as deleted from then on.
    /// Returns whether it throws. A look-up is not a read: what it read stays.
    mutating func lookUp(_ key: Int, in writer: Int) -> Bool {
        guard store[key] == nil else { return false }
        writers[writer].read[key] = .gone
        return true
    }

    /// `mergeChanges(_:)` of another writer's did-save changes (statement 20): the updated
    /// objects held here are refreshed keeping their changes; a deleted one held here whose
    /// row is gone leaves, with its unsaved change, and reads as deleted.
    mutating func merge(updated: Set<Int>, deleted: Set<Int>, into writer: Int) {
        for key in deleted where writers[writer].read[key] != nil && store[key] == nil {
            writers[writer].pending[key] = nil
            writers[writer].read[key] = .gone
        }
        for key in updated where writers[writer].read[key] != nil { refresh(key, mergeChanges: true, in: writer) }
    }

    // MARK: Editing

    mutating func insert(_ key: Int, _ row: Row, in writer: Int) {
        writers[writer].pending[key] = .inserted(row)
    }

    mutating func set(_ name: String, to value: String?, of key: Int, in writer: Int) {
        switch writers[writer].pending[key] {
        case .inserted(var row)?:
            row[name] = value
            writers[writer].pending[key] = .inserted(row)
        case .updated(var edit)?:
            edit.changed.insert(name)
            edit.values[name] = value
            writers[writer].pending[key] = .updated(edit)
        case .deleted?:
            break
        case nil:
            var edit = Edit()
            edit.changed = [name]
            edit.values[name] = value
            writers[writer].pending[key] = .updated(edit)
        }
    }

    /// A delete: an object inserted here just goes (and is no longer held).
    mutating func delete(_ key: Int, in writer: Int) {
        if case .inserted? = writers[writer].pending[key] {
            writers[writer].pending[key] = nil
        } else {
            writers[writer].pending[key] = .deleted
        }
    }

    /// `rollback()`: the unsaved changes go; objects show what they last read; inserted ones go.
    mutating func rollback(_ writer: Int) {
        writers[writer].pending = [:]
    }

    // MARK: Saving

    /// What a writer's save does: the conflicts it fails with (nothing is written then), or the
    /// keys it wrote (inserted, updated, removed from the store) once it applied them.
    enum SaveResult {
        case fails([Int: Conflict])
        /// `resolved`: the objects whose conflict the policy resolved.
        case saved(inserted: Set<Int>, updated: Set<Int>, deleted: Set<Int>, resolved: Set<Int>)
    }

    /// Saves `writer` by statement 61 under its policy.
    mutating func save(_ writer: Int) -> SaveResult {
        let saver = writers[writer]
        let policy = saver.policy
        var rows = store
        var conflicts: [Int: Conflict] = [:]
        var inserted = Set<Int>(), updated = Set<Int>(), deleted = Set<Int>()
        // The rows this save removes (`deleted` also has the deletes of rows already gone).
        var removed = Set<Int>()
        var resolved = Set<Int>()
        for (key, change) in saver.pending {
            let current = store[key]
            let base: Row? = if case .values(let row)? = saver.read[key] { row } else { nil }
            let theirChanges = base.flatMap { base in current.map { $0.differences(from: base) } } ?? []
            switch change {
            case .inserted(let row):
                rows[key] = row
                inserted.insert(key)
            case .updated(let edit):
                guard let current else {
                    // Deleted meanwhile: only `.rollback` gives the edit up; the row stays deleted.
                    if policy == .rollback {
                        resolved.insert(key)
                    } else {
                        conflicts[key] = Conflict(key: key, isDeletion: false, changed: edit.changed, theirChanges: [],
                                                  ours: edit.values, theirs: nil)
                    }
                    continue
                }
                let landed: Row?
                if theirChanges.isEmpty {
                    landed = current.overlaid(edit)
                } else {
                    resolved.insert(key)
                    switch policy {
                    case .error:
                        conflicts[key] = Conflict(key: key, isDeletion: false, changed: edit.changed, theirChanges: theirChanges,
                                                  ours: edit.values, theirs: current)
                        landed = nil
                    case .rollback: landed = nil
                    case .mergeByPropertyObjectTrump: landed = current.overlaid(edit)
                    case .mergeByPropertyStoreTrump:
                        let ours = edit.changed.subtracting(theirChanges)
                        landed = ours.isEmpty ? nil : current.overlaid(edit, only: ours)
                    case .overwrite: landed = (base ?? current).overlaid(edit)
                    }
                }
                if let landed {
                    rows[key] = landed
                    updated.insert(key)
                }
            case .deleted:
                // A delete of a row already gone is no conflict: nothing is left to do (the object
                // leaves the context as a saved delete's does).
                guard let current else {
                    deleted.insert(key)
                    continue
                }
                if !theirChanges.isEmpty { resolved.insert(key) }
                if theirChanges.isEmpty || policy == .mergeByPropertyObjectTrump || policy == .mergeByPropertyStoreTrump || policy == .overwrite {
                    rows[key] = nil
                    deleted.insert(key)
                    removed.insert(key)
                } else if policy == .error {
                    conflicts[key] = Conflict(key: key, isDeletion: true, changed: nil, theirChanges: theirChanges,
                                              ours: Row(), theirs: current)
                }
            }
        }
        if !conflicts.isEmpty { return .fails(conflicts) }
        store = rows
        // The saver's objects of the saved changes show what is stored now: a deleted one goes,
        // one whose delete `.rollback` dropped shows its row again, one whose edit of a gone
        // row `.rollback` dropped reads as deleted.
        for key in saver.pending.keys {
            if deleted.contains(key) {
                writers[writer].read[key] = nil
            } else {
                writers[writer].read[key] = rows[key].map(Read.values) ?? .gone
            }
        }
        writers[writer].pending = [:]
        return .saved(inserted: inserted, updated: updated, deleted: removed, resolved: resolved)
    }
}
