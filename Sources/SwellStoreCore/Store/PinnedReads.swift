import Foundation
import Synchronization

/// One snapshot of a store held open for pinned reads (Store guarantees 56, Core Data's query
/// generations): every `read` answers from the state the store had when it was opened,
/// whatever commits since, until `close`.
///
/// A store opens it with `PersistentStore.openPinnedReader()`: the SQLite store holds a read
/// transaction on a connection of its own, the PostgreSQL store a repeatable-read transaction,
/// the in-memory store a copy-on-write value of its tables. Implementations serialise their
/// own access (`PinnedReadGate`): any queue may call them, one read at a time.
package protocol PinnedStoreReader: AnyObject, Sendable {
    /// Runs `body` against the pinned snapshot.
    ///
    /// - Throws: `StoreError.noPersistentStore` after `close` (or the store's), a store error
    ///   from the snapshot's connection, `StoreError.unsupported` for a read started from
    ///   inside another read of the same snapshot on the same thread (`PinnedReadGate`).
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    /// Ends the snapshot and gives its connection back. Closing twice does nothing.
    func close()
}

/// Lets one read at a time through to a pinned snapshot's connection, and refuses a read
/// started inside another on the same thread (it would wait for itself, or reuse a statement
/// the outer read is still stepping) instead of deadlocking.
///
/// `@unchecked Sendable`: `lock` serialises the reads; `owner` is atomic.
package final class PinnedReadGate: @unchecked Sendable {
    private let lock = NSLock()
    /// The thread inside `run`, or 0.
    private let owner = Atomic<UInt>(0)
    private let store: String

    /// A gate for a snapshot of the `store` store (named in the error a nested read gets).
    package init(store: String) {
        self.store = store
    }

    /// Runs `body` alone.
    package func run<T>(_ body: () throws -> T) throws -> T {
        let thread = UInt(pthread_self())
        guard owner.load(ordering: .acquiring) != thread else {
            throw StoreError.unsupported(store: store, what: "a pinned read started inside another read of the same snapshot")
        }
        lock.lock()
        owner.store(thread, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        return try body()
    }
}
