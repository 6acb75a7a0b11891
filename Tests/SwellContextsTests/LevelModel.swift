import Foundation
import SwellStore
import SwellStoreTestSupport

/// The model the context-level differential test compares the stack with, written from
/// Store guarantees alone (statements 5, 10, 13, 18, 21, 29, 30), not from Swell's code: each level
/// keeps its unsaved changes; a context sees the store under every ancestor's changes and
/// its own; a save moves the saver's changes one level up; an object a context holds shows
/// its own level's change over the values its parent showed when the object last took them
/// (a fetch, a save, a child's save into the context, a refresh).
///
/// The graph: `Author {id}` ← `Book {isbn}.author` (to-one, inverse `Author.books`),
/// `Book.tags` ↔ `Tag {name}.books` (many-to-many, kept on the book's side:
/// `Book_tags` sorts before `Tag_books`).
struct LevelModel {
    /// A value of the model: an attribute, a to-one (the destination's key), or a to-many (keys).
    enum Value: Hashable, CustomStringConvertible {
        case none
        case string(String)
        case int(Int)
        case keys(Set<String>)

        var description: String {
            switch self {
            case .none: "nil"
            case .string(let text): "\"\(text)\""
            case .int(let number): "\(number)"
            case .keys(let keys): "{\(keys.sorted().joined(separator: ","))}"
            }
        }
    }

    /// An object of the model: its entity and its key, as text.
    struct Key: Hashable, Comparable, CustomStringConvertible {
        let entity: String
        let id: String
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.entity, lhs.id) < (rhs.entity, rhs.id) }
        var description: String { "\(entity)(\(id))" }
    }

    typealias Row = [String: Value]

    /// One level's unsaved change of one object.
    enum Change {
        case inserted(Row)
        case updated(Row)
        case deleted
    }

    /// The contexts: 0 the writer (root), 1 the view context, 2… workers (children of the view context).
    var pending: [[Key: Change]]
    var store: [Key: Row] = [:]
    /// Per context: the parent's values of the objects it holds, as they were when they were last taken.
    var snapshots: [[Key: Row?]]

    init(contexts: Int) {
        pending = Array(repeating: [:], count: contexts)
        snapshots = Array(repeating: [:], count: contexts)
    }

    static func parent(of context: Int) -> Int? {
        context == 0 ? nil : context == 1 ? 0 : 1
    }

    /// The chain from the root down to `context`.
    static func chain(to context: Int) -> [Int] {
        var chain = [context]
        while let parent = parent(of: chain[0]) { chain.insert(parent, at: 0) }
        return chain
    }

    static func apply(_ change: Change, to row: Row?) -> Row? {
        switch change {
        case .inserted(let values): return values
        case .updated(let values): return row.map { $0.merging(values) { _, new in new } }
        case .deleted: return nil
        }
    }

    /// Every object `context` sees, with its values (statement 13).
    func visible(_ context: Int) -> [Key: Row] {
        var rows = store
        for level in Self.chain(to: context) {
            for (key, change) in pending[level] { rows[key] = Self.apply(change, to: rows[key]) }
        }
        return rows
    }

    /// What `context`'s parent shows (the store, for the writer).
    func parentVisible(_ context: Int) -> [Key: Row] {
        Self.parent(of: context).map(visible) ?? store
    }

    /// The values of `key` in `context`, nil when it does not see the object.
    func row(_ key: Key, in context: Int) -> Row? { visible(context)[key] }

    // MARK: Edits

    mutating func insert(_ key: Key, _ values: Row, in context: Int) {
        pending[context][key] = .inserted(values)
    }

    /// Sets values of an object. An object with no change at its level yet takes only the
    /// values that differ from what it shows: setting what it already has is no change.
    mutating func set(_ values: Row, of key: Key, in context: Int) {
        switch pending[context][key] {
        case .inserted(let row)?: pending[context][key] = .inserted(row.merging(values) { _, new in new })
        case .updated(let row)?: pending[context][key] = .updated(row.merging(values) { _, new in new })
        case .deleted?: break
        case nil:
            let shown = snapshots[context][key] ?? nil
            let changed = values.filter { shown?[$0.key] != $0.value }
            if !changed.isEmpty { pending[context][key] = .updated(changed) }
        }
    }

    mutating func delete(_ key: Key, in context: Int) {
        if case .inserted? = pending[context][key] {
            pending[context][key] = nil
        } else {
            pending[context][key] = .deleted
        }
    }

    /// Moves `context`'s changes one level up (statement 5), or into the store.
    mutating func save(_ context: Int) {
        let moving = pending[context]
        pending[context] = [:]
        if let parent = Self.parent(of: context) {
            for (key, change) in moving {
                switch (pending[parent][key], change) {
                case (.inserted?, .deleted): pending[parent][key] = nil
                case (.inserted(let row)?, .updated(let values)): pending[parent][key] = .inserted(row.merging(values) { _, new in new })
                case (.updated(let row)?, .updated(let values)): pending[parent][key] = .updated(row.merging(values) { _, new in new })
                default: pending[parent][key] = change
                }
            }
            // The parent's objects of the saved keys take their parent's values again (a child's save reached it).
            let above = parentVisible(parent)
            for key in moving.keys where snapshots[parent][key] != nil { snapshots[parent][key] = above[key] }
        } else {
            for (key, change) in moving { store[key] = Self.apply(change, to: store[key]) }
        }
        // The saver's objects of the saved keys now show what their parent has.
        let above = parentVisible(context)
        for key in moving.keys where snapshots[context][key] != nil { snapshots[context][key] = above[key] }
    }

    /// `rollback()`: the level's changes go; objects show what they last took.
    mutating func rollback(_ context: Int) {
        pending[context] = [:]
    }

    /// A fetch, a refresh: the objects of `keys` take their parent's values.
    mutating func took(_ keys: some Sequence<Key>, in context: Int) {
        let above = parentVisible(context)
        for key in keys { snapshots[context][key] = above[key] }
    }

    /// `reset()`: the level's changes and its objects go.
    mutating func reset(_ context: Int) {
        pending[context] = [:]
        snapshots[context] = [:]
    }

    /// What an object `context` holds shows: nil when its own level deleted it, `.some(nil)`
    /// when nothing is known (it is gone above and was never taken), else the values.
    func held(_ key: Key, in context: Int) -> Row?? {
        switch pending[context][key] {
        case .inserted(let row)?: return .some(row)
        case .deleted?: return nil
        case .updated(let values)?:
            guard let base = snapshots[context][key] ?? nil else { return .some(nil) }
            return .some(base.merging(values) { _, new in new })
        case nil:
            return .some(snapshots[context][key] ?? nil)
        }
    }

    /// Whether a level that is not `context` or one of its ancestors (a worker below it, a
    /// sibling) has a change of `key` pending: deleting it then would leave that change over
    /// a deleted object, which the contract does not define, so the test does not do it.
    func pendingElsewhere(_ context: Int, _ key: Key) -> Bool {
        let chain = Self.chain(to: context)
        return pending.indices.contains { !chain.contains($0) && pending[$0][key] != nil }
    }

    /// Whether a level that is not `context` or one of its ancestors has deleted `key`
    /// unsaved: the test then leaves the object alone in `context` (see `pendingElsewhere`).
    func deletedElsewhere(_ context: Int, _ key: Key) -> Bool {
        let chain = Self.chain(to: context)
        return pending.indices.contains { level in
            guard !chain.contains(level), case .deleted? = pending[level][key] else { return false }
            return true
        }
    }
}
