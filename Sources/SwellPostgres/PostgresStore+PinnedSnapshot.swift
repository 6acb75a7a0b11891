import Foundation
import SwellStoreCore

/// A pinned snapshot of a PostgreSQL store (Store guarantees 56): a repeatable-read, read-only
/// transaction held open on a reader session of its own, begun with a first statement so that
/// the snapshot is taken when it opens, not at the first fetch. `PinnedSnapshot` runs these steps.
///
/// What it costs: one server session for as long as it is open (from the pool's readers, given
/// back after), and a held snapshot keeps the database's oldest visible transaction back, so
/// VACUUM cannot remove the row versions that other runners' updates and deletes leave behind
/// meanwhile (the tables grow until the snapshot ends). A server that ends idle transactions
/// (`idle_in_transaction_session_timeout`) ends the snapshot too: its reads then throw
/// `StoreError` `.connectionLost`.
extension PostgresStore: PinnedSnapshotStore {
    package static var pinnedStoreName: String { "PostgreSQL" }

    package func beginSnapshot(on connection: PostgresConnection) -> (error: StoreError?, healthy: Bool) {
        do {
            try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            // A repeatable-read transaction takes its snapshot at its first statement: now.
            try connection.query("SELECT 1")
            return (nil, true)
        } catch {
            // The error thrown is the BEGIN's; a ROLLBACK that fails only means the session is
            // not reused.
            return (StoreError(error), (try? connection.query("ROLLBACK")) != nil)
        }
    }

    package func readSnapshot<T>(on connection: PostgresConnection, _ body: (any StoreReader) throws -> T) throws -> T {
        // A statement that fails aborts the transaction it runs in: each read runs in a
        // savepoint, so a bad predicate or a cancelled copy leaves the snapshot usable.
        do {
            try connection.query("SAVEPOINT swell_pinned_read")
            let result = try body(PostgresReader(connection: connection, model: model))
            try connection.query("RELEASE SAVEPOINT swell_pinned_read")
            return result
        } catch {
            // ROLLBACK TO keeps the savepoint: released too, so failed reads do not nest. The
            // read's own error is the one thrown; should these fail too (the session is
            // lost), the next read meets that and says so.
            _ = try? connection.query("ROLLBACK TO SAVEPOINT swell_pinned_read")
            _ = try? connection.query("RELEASE SAVEPOINT swell_pinned_read")
            if let error = error as? PostgresError { throw StoreError(error) }
            throw error
        }
    }

    package func endSnapshot(on connection: PostgresConnection) {
        // A session still in its transaction would keep an old snapshot: then it is closed.
        checkIn(connection, healthy: (try? connection.query("COMMIT")) != nil)
    }

    /// A repeatable-read transaction held open on a session of its own (`PinnedSnapshot`).
    package func openPinnedReader() throws(StoreError) -> any PinnedStoreReader {
        try PinnedSnapshot.open(self)
    }
}
