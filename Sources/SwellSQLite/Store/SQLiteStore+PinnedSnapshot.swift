import Foundation
import SwellStoreCore

/// A pinned snapshot of a SQLite store (Store guarantees 56): a read transaction held open on
/// a reader connection of its own, begun with a first read so that the snapshot is the last
/// commit's when it opens, not when the first fetch comes. `PinnedSnapshot` runs these steps.
///
/// What it costs: while the transaction is open, no checkpoint (the checkpointer's, a commit's
/// past `SQLiteCheckpointer.limit`, another process's) can copy the WAL's frames past its
/// snapshot into the store file, nor start the WAL over, so the WAL grows by every page
/// committed meanwhile, by this process or another, and other readers look up pages in a
/// longer WAL. When the snapshot ends a checkpoint is scheduled; the first commit after it
/// copied everything starts the WAL over and cuts the file back to
/// `SQLiteCheckpointer.sizeLimit` (`PRAGMA journal_size_limit`).
extension SQLiteStore: PinnedSnapshotStore {
    package static var pinnedStoreName: String { "SQLite" }

    package func beginSnapshot(on connection: SQLiteConnection) -> (error: StoreError?, healthy: Bool) {
        do {
            try connection.execute("BEGIN DEFERRED")
            // A deferred transaction takes its snapshot at its first read: now.
            _ = try connection.query("SELECT count(*) FROM sqlite_schema")
            return (nil, true)
        } catch {
            // The error thrown is the BEGIN's; a ROLLBACK that fails only means the connection
            // is not reused.
            return (StoreError(error, path: path), (try? connection.execute("ROLLBACK")) != nil)
        }
    }

    package func readSnapshot<T>(on connection: SQLiteConnection, _ body: (any StoreReader) throws -> T) throws -> T {
        // `close()` marks the store closed before it closes the pool: no read starts from then on.
        guard isOpen else { throw StoreError.noPersistentStore }
        readCount.add(1, ordering: .relaxed)
        return try body(SQLiteStoreReader(connection: connection, model: model, path: path))
    }

    package func endSnapshot(on connection: SQLiteConnection) {
        let ended = (try? connection.execute("COMMIT")) != nil
        if isOpen {
            // Still in its transaction, a connection would keep an old snapshot: then it is dropped.
            checkIn(connection, healthy: ended)
            checkpointer.schedule()
        } else {
            // The store closed: the connection goes now, before the writer's closing checkpoint.
            // One that cannot close (a statement left open) is closed when released, just after.
            try? connection.close()
        }
    }

    /// A read transaction held open on a connection of its own (`PinnedSnapshot`).
    package func openPinnedReader() throws(StoreError) -> any PinnedStoreReader {
        try PinnedSnapshot.open(self)
    }
}
