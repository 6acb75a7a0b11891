import Foundation
import SwellStoreCore

/// What changed between two layouts of a fetched results controller's results, in the form a
/// table view applies as one batch: sections and rows deleted at their old indices, sections
/// and rows inserted at their new ones, moves from old to new, updates at the old index path.
///
/// Sections are matched by name and rows by object ID. A section that stays keeps its place
/// among the others unless the order of the sections that stay changed: then as few as possible
/// are deleted and inserted again (a longest increasing subsequence keeps the rest), with their
/// rows moved. Within a section that stays, rows keep their place the same way; every other row
/// that stays is a move. A changed row that keeps its place is an update, or a move when its
/// index path differs (as Core Data reports it).
struct FetchedResultsDiff {
    /// Section names and the object IDs of each section, in order.
    struct Layout: Equatable {
        var names: [String] = []
        var rows: [[ObjectID]] = []
    }

    /// One row's change.
    enum RowChange {
        case delete(ObjectID, at: IndexPath)
        case insert(ObjectID, at: IndexPath)
        case move(ObjectID, from: IndexPath, to: IndexPath)
        case update(ObjectID, at: IndexPath)

        /// The index path it is ordered by (the old one, or the new one for an insert), then its kind.
        var order: (IndexPath, Int) {
            switch self {
            case .delete(_, let path): (path, 0)
            case .move(_, let path, _): (path, 1)
            case .update(_, let path): (path, 2)
            case .insert(_, let path): (path, 3)
            }
        }
    }

    /// Old section indices deleted, ascending.
    private(set) var deletedSections: [Int] = []
    /// New section indices inserted, ascending.
    private(set) var insertedSections: [Int] = []
    /// Row changes, by `order` (deletes, moves and updates by the old path, inserts by the new).
    private(set) var rows: [RowChange] = []

    var isEmpty: Bool { deletedSections.isEmpty && insertedSections.isEmpty && rows.isEmpty }

    /// The changes from `old` to `new`; `changed` says whether a row present in both changed.
    init(from old: Layout, to new: Layout, changed: (ObjectID) -> Bool) {
        var newSection: [String: Int] = [:]
        for (index, name) in new.names.enumerated() { newSection[name] = index }
        // Sections that stay, in old order, with their new index; the longest run in increasing
        // new order keeps its place.
        let staying = old.names.indices.compactMap { index in newSection[old.names[index]].map { (old: index, new: $0) } }
        var kept: [Int: Int] = [:]
        for position in Self.longestIncreasingSubsequence(staying.map(\.new)) {
            kept[staying[position].old] = staying[position].new
        }
        let keptNew = Set(kept.values)
        deletedSections = old.names.indices.filter { kept[$0] == nil }
        insertedSections = new.names.indices.filter { !keptNew.contains($0) }

        var oldPath: [ObjectID: IndexPath] = [:]
        for (section, ids) in old.rows.enumerated() {
            for (item, id) in ids.enumerated() { oldPath[id] = IndexPath(item: item, section: section) }
        }
        var present: Set<ObjectID> = []
        var changes: [RowChange] = []
        for (section, ids) in new.rows.enumerated() {
            // Rows that were in the same (kept) section: candidates to keep their place.
            var candidates: [(id: ObjectID, old: IndexPath, new: IndexPath)] = []
            for (item, id) in ids.enumerated() {
                present.insert(id)
                let path = IndexPath(item: item, section: section)
                guard let from = oldPath[id] else {
                    changes.append(.insert(id, at: path))
                    continue
                }
                if kept[from.section] == section {
                    candidates.append((id, from, path))
                } else {
                    changes.append(.move(id, from: from, to: path))
                }
            }
            let stay = Set(Self.longestIncreasingSubsequence(candidates.map(\.old.item)))
            for (position, candidate) in candidates.enumerated() {
                if !stay.contains(position) {
                    changes.append(.move(candidate.id, from: candidate.old, to: candidate.new))
                } else if changed(candidate.id) {
                    changes.append(candidate.old == candidate.new ? .update(candidate.id, at: candidate.old)
                                                                  : .move(candidate.id, from: candidate.old, to: candidate.new))
                }
            }
        }
        for (id, path) in oldPath where !present.contains(id) {
            changes.append(.delete(id, at: path))
        }
        rows = changes.sorted { $0.order < $1.order }
    }

    /// The positions in `values` of one longest strictly increasing subsequence (patience
    /// sorting, O(n log n)).
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        // tails[k]: the position of the smallest last value of an increasing run of length k + 1.
        var tails: [Int] = []
        var previous = Array(repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result: [Int] = []
        var position = tails.last ?? -1
        while position >= 0 {
            result.append(position)
            position = previous[position]
        }
        return result.reversed()
    }
}
