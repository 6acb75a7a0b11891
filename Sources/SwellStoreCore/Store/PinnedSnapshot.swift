import Foundation

/// What a store does on the connection of a pinned snapshot (Store guarantees 56): begin it,
/// read from it, end it. The procedure around those steps — a connection of its own from the
/// store's reader pool, registered there so that closing the store ends it, one read at a
/// time (`PinnedReadGate`), closed once — is ``PinnedSnapshot``'s, the same for every store.
package protocol PinnedSnapshotStore: AnyObject, Sendable {
    /// A connection (SQLite) or session (PostgreSQL).
    associatedtype Connection: AnyObject
    /// The store's name in errors ("SQLite", "PostgreSQL").
    static var pinnedStoreName: String { get }
    /// The pool the snapshot's connection comes from and is registered with.
    var readers: ReaderPool<Connection, PinnedSnapshot<Self>> { get }
    /// A reader connection from the pool (or a new one).
    func checkOutReader() throws(StoreError) -> Connection
    /// Gives a reader connection back to the pool: kept when `healthy`, else ended.
    func checkIn(_ connection: Connection, healthy: Bool)
    /// Begins the snapshot on `connection`: a transaction and a first statement, so that the
    /// snapshot is the store's state now, not at the first fetch. On failure the transaction is
    /// rolled back here, and the error says why; `healthy` says whether the connection is
    /// still fit to reuse.
    func beginSnapshot(on connection: Connection) -> (error: StoreError?, healthy: Bool)
    /// One read of the snapshot, on its connection, while the store is open.
    func readSnapshot<T>(on connection: Connection, _ body: (any StoreReader) throws -> T) throws -> T
    /// Ends the snapshot's transaction and gives its connection back (or closes it).
    func endSnapshot(on connection: Connection)
}

/// A pinned snapshot of a store on a connection of its own: ``PinnedSnapshotStore``'s steps
/// in the one order every store keeps.
///
/// `@unchecked Sendable`: `connection` is touched only inside `gate` (one caller at a time);
/// `store` is a constant.
package final class PinnedSnapshot<Store: PinnedSnapshotStore>: PinnedStoreReader, @unchecked Sendable {
    private let store: Store
    private let gate = PinnedReadGate(store: Store.pinnedStoreName)
    private var connection: Store.Connection?

    private init(store: Store, connection: Store.Connection) {
        self.store = store
        self.connection = connection
    }

    /// Takes a reader connection from `store`'s pool and holds a snapshot on it.
    ///
    /// - Throws: `StoreError.noPersistentStore` when the store is closed (before or while it
    ///   opens), the store's error when the snapshot cannot begin.
    package static func open(_ store: Store) throws(StoreError) -> PinnedSnapshot<Store> {
        let connection = try store.checkOutReader()
        let (error, healthy) = store.beginSnapshot(on: connection)
        if let error {
            store.checkIn(connection, healthy: healthy)
            throw error
        }
        let snapshot = PinnedSnapshot(store: store, connection: connection)
        guard store.readers.register(snapshot) else {
            snapshot.close()
            throw .noPersistentStore
        }
        return snapshot
    }

    package func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try gate.run {
            guard let connection, store.readers.isOpen else { throw StoreError.noPersistentStore }
            return try store.readSnapshot(on: connection, body)
        }
    }

    package func close() {
        // Only a close from inside one of this snapshot's own reads is refused by the gate; the
        // connection then ends its transaction when it is released with this snapshot.
        guard let taken = try? gate.run({ () -> Store.Connection? in
            defer { connection = nil }
            return connection
        }) else { return }
        store.readers.unregister(self)
        store.endSnapshot(on: taken)
    }
}
