import SwellLocks

/// Hands out object IDs (primary keys) for the entities of one store, in this
/// process: what the SQLite and in-memory stores answer `allocateIDs` and
/// `mayUseKeyAsID` with. It starts above the largest ID (and, for an entity whose
/// key is its table's rowid, the largest key) the store held when it was loaded.
/// A store shared by many processes (PostgreSQL) hands out IDs from the database instead.
final class ObjectIDAllocator: Sendable {
    private let allocators = LockedValue<[String: EntityAllocator]>([:])

    /// Starts from the store's maxima (`load`): per entity the largest ID in use, and
    /// whether its key is its table's rowid (then keys may become IDs: `mayUseKeyAsID`).
    /// An entity already handing out IDs (a store loaded again, by another coordinator)
    /// keeps what it handed out and only moves past the maxima: no ID is handed out twice.
    func start(maxima: [String: Int64], rowidKeyed: Set<String>) {
        allocators.withLock { allocators in
            for (entity, largest) in maxima {
                let next = largest + 1
                if allocators[entity] != nil {
                    allocators[entity]!.next = max(allocators[entity]!.next, next)
                } else {
                    allocators[entity] = EntityAllocator(next: next, keyFloor: rowidKeyed.contains(entity) ? next : nil)
                }
            }
        }
    }

    func allocate(for entity: String, count: Int64) -> Range<Int64> {
        allocators.withLock { $0[entity, default: EntityAllocator(next: 1, keyFloor: nil)].take(count) }
    }

    func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool {
        allocators.withLock { $0[entity]?.mayUseKeyAsID(key) ?? false }
    }

    /// Hands out one entity's object IDs, ascending.
    private struct EntityAllocator: Sendable {
        var next: Int64
        /// For an entity whose key is its table's rowid: the first ID handed out since the
        /// store was loaded (every stored ID and key below the ceiling is below it), and the
        /// blocks handed out since, ascending, adjacent ones joined: so that no key taken as
        /// an ID (`mayUseKeyAsID`) is ever also handed out.
        let keyFloor: Int64?
        var blocks: [Range<Int64>] = []

        mutating func take(_ count: Int64) -> Range<Int64> {
            let block = next..<(next + count)
            next += count
            guard keyFloor != nil else { return block }
            if let last = blocks.last, last.upperBound == block.lowerBound {
                blocks[blocks.count - 1] = last.lowerBound..<block.upperBound
            } else {
                blocks.append(block)
            }
            return block
        }

        mutating func mayUseKeyAsID(_ key: Int64) -> Bool {
            guard let keyFloor else { return false }
            if key < keyFloor || key >= TableLayout.allocatedIDCeiling { return true }
            if key >= next {
                next = key + 1
                return true
            }
            var low = 0, high = blocks.count
            while low < high {
                let middle = (low + high) / 2
                if blocks[middle].upperBound <= key { low = middle + 1 } else { high = middle }
            }
            return !(low < blocks.count && blocks[low].contains(key))
        }
    }
}
