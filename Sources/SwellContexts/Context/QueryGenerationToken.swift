import SwellLocks
import SwellStoreCore
import Synchronization

/// Which state of the store a context reads (Core Data's `NSQueryGenerationToken`; Store
/// guarantees 56): pass ``current`` to ``ManagedObjectContext/setQueryGenerationFrom(_:)`` to
/// pin a context to the store's state now, or a pinned context's
/// ``ManagedObjectContext/queryGenerationToken`` to pin another context to the same snapshot.
///
/// A token is a value: it crosses queues, and copies compare equal. It does not keep its
/// snapshot open — the contexts pinned to it do; once none is, the snapshot ends and the token
/// no longer pins (`StoreError` `.invalidQueryGeneration`).
public struct QueryGenerationToken: Sendable, Hashable, CustomStringConvertible {
    /// The pinned snapshot; nil for ``current``.
    let generation: QueryGeneration?

    /// The store's state at the moment a context is pinned with it.
    public static let current = QueryGenerationToken(generation: nil)

    init(generation: QueryGeneration?) {
        self.generation = generation
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.generation === rhs.generation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(generation.map(ObjectIdentifier.init))
    }

    public var description: String {
        generation.map { "QueryGenerationToken(generation \($0.number))" } ?? "QueryGenerationToken(current)"
    }
}

/// One snapshot of a store that contexts are pinned to: its reader stays open while a context
/// holds a lease on it, and closes with the last lease.
///
/// `Sendable`: `reader` serialises its own reads; `leases` is behind its lock.
final class QueryGeneration: Sendable {
    let reader: any PinnedStoreReader
    /// The store it was read from: a token pins only contexts of that store.
    let store: ObjectIdentifier
    /// Numbers generations for descriptions.
    let number: Int
    /// The leases held; nil once the last one went (the reader is closed).
    private let leases = LockedValue<Int?>(0)

    private static let counter = Atomic<Int>(0)

    /// A snapshot of `store`'s state now.
    init(opening store: any PersistentStore) throws(StoreError) {
        reader = try store.openPinnedReader()
        self.store = ObjectIdentifier(store)
        number = Self.counter.add(1, ordering: .relaxed).newValue
    }

    /// A generation no lease was taken on (or whose last lease went) ends here.
    deinit {
        reader.close()
    }

    /// A lease that keeps the snapshot open while it is held.
    ///
    /// - Throws: `StoreError.invalidQueryGeneration` when the last lease went already.
    func lease() throws(StoreError) -> QueryGenerationLease {
        let taken = leases.withLock { count -> Bool in
            guard let held = count else { return false }
            count = held + 1
            return true
        }
        guard taken else {
            throw .invalidQueryGeneration(reason: "no context is pinned to generation \(number) any more, and its snapshot ended")
        }
        return QueryGenerationLease(self)
    }

    /// Called by a lease that goes: the last one closes the reader.
    fileprivate func release() {
        let last = leases.withLock { count -> Bool in
            guard let held = count else { return false }
            count = held > 1 ? held - 1 : nil
            return held == 1
        }
        if last { reader.close() }
    }
}

/// A context's hold on a query generation: the snapshot stays open while the lease lives.
final class QueryGenerationLease: Sendable {
    let generation: QueryGeneration

    fileprivate init(_ generation: QueryGeneration) {
        self.generation = generation
    }

    deinit {
        generation.release()
    }
}
