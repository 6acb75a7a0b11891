/// The last few commits of a coordinator and the rows each may have written, so that a
/// batch compared with the store ahead of its turn (`BatchInsertRequest.compareAhead`)
/// knows which of its rows a commit since then may have changed.
package struct CommitLog: Sendable {
    /// What one commit may have written.
    package enum Touched: Sendable {
        /// Any row of any entity (a context's save, a batch update or delete).
        case anyRow
        /// Only the rows of `entity` with these keys (a batch insert of columns: its rows by
        /// key, kept as they are rather than copied into a set): the integer keys of an entity
        /// whose key is one integer, else each key's hash (`ColumnRows.keyHash`).
        case keys(entity: String, Keys)
    }

    package typealias Keys = Dictionary<Int64, Int>.Keys

    /// How many commits are remembered: a comparison ahead is one or two commits old.
    package static let capacity = 8

    private var entries: [(generation: UInt64, touched: Touched)] = []
    /// Commits begun and not yet counted (`beginCommit`).
    package var underWay = 0

    package init() {}

    package mutating func append(generation: UInt64, touched: Touched) {
        if entries.count == Self.capacity { entries.removeFirst() }
        entries.append((generation, touched))
    }

    /// The keys of `entity` the commits after `generation` may have written, one collection
    /// per commit; nil when unknown.
    package func keysWritten(after generation: UInt64, entity: String) -> [Keys]? {
        var keys: [Keys] = []
        var next = generation + 1
        for entry in entries where entry.generation > generation {
            // A commit after `generation` that is no longer remembered: unknown.
            guard entry.generation == next else { return nil }
            next += 1
            switch entry.touched {
            case .anyRow: return nil
            case .keys(let written, let writtenKeys):
                if written == entity { keys.append(writtenKeys) }
            }
        }
        return keys
    }
}
