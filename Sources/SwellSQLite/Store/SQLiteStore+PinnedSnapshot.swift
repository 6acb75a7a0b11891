import Foundation
import SwellStoreCore

/// A pinned snapshot of a SQLite store (Store guarantees 56): a read transaction held open on
/// a reader connection of its own, begun with a first read so that the snapshot is the last
/// commit's when it opens, not when the first fetch comes.
///
/// What it costs: while the transaction is open, no checkpoint (the checkpointer's, a commit's
/// past `SQLiteCheckpointer.limit`, another process's) can copy the WAL's frames past its
/// snapshot into the store file, nor start the WAL over, so the WAL grows by every page
/// committed meanwhile, by this process or another, and other readers look up pages in a
/// longer WAL. When the snapshot ends a checkpoint is scheduled; the first commit after it
/// copied everything starts the WAL over and cuts the file back to
/// `SQLiteCheckpointer.sizeLimit` (`PRAGMA journal_size_limit`).
///
/// `@unchecked Sendable`: `connection` is touched only inside `gate` (one caller at a time);
/// `store` and `model` are constants.
final class SQLitePinnedReader: PinnedStoreReader, @unchecked Sendable {
    private let store: SQLiteStore
    private let model: ManagedObjectModel
    private let gate = PinnedReadGate(store: "SQLite")
    private var connection: SQLiteConnection?

    private init(store: SQLiteStore, connection: SQLiteConnection) {
        self.store = store
        self.model = store.model
        self.connection = connection
    }

    /// Takes a reader connection from `store`'s pool and holds a snapshot on it.
    static func open(_ store: SQLiteStore) throws(StoreError) -> SQLitePinnedReader {
        let connection = try store.checkOutReader()
        do {
            try connection.execute("BEGIN DEFERRED")
            // A deferred transaction takes its snapshot at its first read: now.
            _ = try connection.query("SELECT count(*) FROM sqlite_schema")
        } catch {
            // The error thrown is the BEGIN's; a ROLLBACK that fails only means the connection
            // is not reused.
            store.checkIn(connection, healthy: (try? connection.execute("ROLLBACK")) != nil)
            throw StoreError(error, path: store.path)
        }
        let reader = SQLitePinnedReader(store: store, connection: connection)
        guard store.register(reader) else {
            reader.close()
            throw .noPersistentStore
        }
        return reader
    }

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try gate.run {
            guard let connection, store.isOpen else { throw StoreError.noPersistentStore }
            store.readCount.add(1, ordering: .relaxed)
            return try body(SQLiteStoreReader(connection: connection, model: model, path: store.path))
        }
    }

    func close() {
        // Only a close from inside one of this snapshot's own reads is refused by the gate; the
        // connection then ends its transaction when it is released with this reader.
        guard let taken = try? gate.run({ () -> SQLiteConnection? in
            defer { connection = nil }
            return connection
        }) else { return }
        store.unregister(self)
        let ended = (try? taken.execute("COMMIT")) != nil
        if store.isOpen {
            // Still in its transaction, a connection would keep an old snapshot: then it is dropped.
            store.checkIn(taken, healthy: ended)
            store.checkpointer.schedule()
        } else {
            // The store closed: the connection goes now, before the writer's closing checkpoint.
            // One that cannot close (a statement left open) is closed when released, just after.
            try? taken.close()
        }
    }
}

extension SQLiteStore {
    /// A read transaction held open on a connection of its own (`SQLitePinnedReader`).
    package func openPinnedReader() throws(StoreError) -> any PinnedStoreReader {
        try SQLitePinnedReader.open(self)
    }
}
