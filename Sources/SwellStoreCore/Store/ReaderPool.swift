import Foundation

/// A store's idle read connections and the pinned snapshots it has open, behind one lock:
/// the one pool of the SQLite and PostgreSQL stores, so that both check "open" the same way
/// (before a reader is handed out) and keep at most `capacity` idle readers.
///
/// A connection checked out belongs to its caller until it is checked in. The pool does not
/// open or end transactions: the store does, around its use of the connection.
///
/// `@unchecked Sendable`: `state` is touched only under `lock` (an `NSLock`, a POSIX mutex
/// TSan sees; not `LockedValue`, whose `sending` values a pool of non-`Sendable` connections
/// cannot pass through); `discard` is the store's, a `Sendable` closure called outside the lock.
package final class ReaderPool<Connection: AnyObject, Pinned: AnyObject>: @unchecked Sendable {
    private struct State {
        var idle: [Connection] = []
        var pinned: [ObjectIdentifier: Weak] = [:]
        var isOpen = false
    }

    private struct Weak {
        weak var snapshot: Pinned?
    }

    /// The most idle readers kept.
    package let capacity: Int
    private let discard: @Sendable (Connection) -> Void
    private let lock = NSLock()
    private var state = State()

    /// A pool that ends a connection it does not keep with `discard`. It hands out nothing
    /// until ``open()``.
    package init(capacity: Int = 4, discard: @escaping @Sendable (Connection) -> Void) {
        self.capacity = capacity
        self.discard = discard
    }

    /// From now on readers are handed out (the store is loaded).
    package func open() {
        lock.withLock { state.isOpen = true }
    }

    /// Whether readers are handed out.
    package var isOpen: Bool { lock.withLock { state.isOpen } }

    /// An idle reader, or a new one from `connect` (called outside the lock);
    /// `StoreError.noPersistentStore` when the pool is not open.
    package func checkOut(orConnect connect: () throws(StoreError) -> Connection) throws(StoreError) -> Connection {
        let (connection, isOpen) = lock.withLock { (state.isOpen ? state.idle.popLast() : nil, state.isOpen) }
        guard isOpen else { throw .noPersistentStore }
        if let connection { return connection }
        return try connect()
    }

    /// Takes `connection` back: kept when it is `healthy`, the pool open and not full; else
    /// discarded (after `close()`, a reader that was in use ends here).
    package func checkIn(_ connection: Connection, healthy: Bool) {
        let kept = lock.withLock { () -> Bool in
            guard healthy, state.isOpen, state.idle.count < capacity else { return false }
            state.idle.append(connection)
            return true
        }
        if !kept { discard(connection) }
    }

    /// Notes a pinned snapshot so that `close()` hands it back to be ended; false when the
    /// pool is not open.
    package func register(_ snapshot: Pinned) -> Bool {
        lock.withLock {
            guard state.isOpen else { return false }
            state.pinned = state.pinned.filter { $0.value.snapshot != nil }
            state.pinned[ObjectIdentifier(snapshot)] = Weak(snapshot: snapshot)
            return true
        }
    }

    /// Forgets a pinned snapshot that ended.
    package func unregister(_ snapshot: Pinned) {
        lock.withLock { _ = state.pinned.removeValue(forKey: ObjectIdentifier(snapshot)) }
    }

    /// Stops handing out readers; returns the idle ones and the pinned snapshots still alive,
    /// for the store to close and end (it reports their failures).
    package func close() -> (idle: [Connection], pinned: [Pinned]) {
        lock.withLock { () -> ([Connection], [Pinned]) in
            defer {
                state.idle = []
                state.pinned = [:]
                state.isOpen = false
            }
            return (state.idle, state.pinned.values.compactMap(\.snapshot))
        }
    }

    deinit {
        for connection in state.idle { discard(connection) }
    }
}
