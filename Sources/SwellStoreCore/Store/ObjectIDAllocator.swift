import SwellLocks

/// Hands out object IDs (primary keys) for the entities of one store, in this process:
/// what the in-memory store (shared by every coordinator that adds its URL, and so its
/// allocator too) answers `allocateIDs` with, and what a coordinator without a store
/// uses. It starts above the largest ID the store held when it was loaded; loading again
/// (another coordinator) only moves it past what it already handed out. The SQLite store
/// reserves its IDs through its file instead (`SQLiteIDReservations`), so that coordinators
/// in other processes never hand out the same ones; the PostgreSQL store, from the database.
package final class ObjectIDAllocator: Sendable {
    private let next = LockedValue<[String: Int64]>([:])

    package init() {}

    /// Moves each entity's next ID to at least `firstFree[entity]`.
    package func start(firstFree: [String: Int64]) {
        next.withLock { next in
            for (entity, first) in firstFree { next[entity] = max(next[entity] ?? first, first) }
        }
    }

    /// `count` IDs for `entity`, never handed out before by this allocator.
    package func allocate(for entity: String, count: Int64) -> Range<Int64> {
        next.withLock { next in
            let first = next[entity] ?? 1
            next[entity] = first + count
            return first..<(first + count)
        }
    }
}

/// Which numbers a store hands out as object IDs, so that a row's key never equals
/// another object's ID (Store guarantees 17, 49).
///
/// An entity whose key is its table's rowid (`TableLayout`) has two kinds of IDs: a row
/// inserted with its key takes the key as its ID, and an object inserted through the API
/// (which gets its ID before its key is known) gets an allocated one. Allocated IDs of such
/// an entity live at `rowidKeyedBase` and above, keys taken as IDs below it: the two never
/// meet, whichever writer — this coordinator, another one, another process — took which,
/// with no coordination. (A key at or above the base is stored with an allocated ID, kept
/// in `_pk`.) Stores made before this rule may hold allocated IDs below the base; a row
/// whose key equals one of those takes a new ID when it is saved (`ChangeResolver`).
/// IDs of every other entity never meet a key: they start at 1.
package enum ObjectIDSpace {
    /// The first ID handed out for an entity whose key is its table's rowid.
    package static let rowidKeyedBase: Int64 = 1 << 62

    /// Whether a new row whose key (its table's rowid) is `key` may take it as its ID.
    package static func mayUseKeyAsID(_ key: Int64, rowidKeyed: Bool) -> Bool {
        rowidKeyed && key < rowidKeyedBase
    }

    /// The first ID to hand out for an entity whose largest allocated ID in use is `largest`
    /// (for a rowid-keyed entity: the largest kept in `_pk`; nil when none).
    package static func firstFree(largestAllocated largest: Int64?, rowidKeyed: Bool) -> Int64 {
        let floor: Int64 = rowidKeyed ? rowidKeyedBase : 1
        guard let largest, largest < .max else { return floor }
        return max(floor, largest + 1)
    }
}
