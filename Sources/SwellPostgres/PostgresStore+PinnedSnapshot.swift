import Foundation
import SwellStoreCore

/// A pinned snapshot of a PostgreSQL store (Store guarantees 56): a repeatable-read, read-only
/// transaction held open on a reader session of its own, begun with a first statement so that
/// the snapshot is taken when it opens, not at the first fetch.
///
/// What it costs: one server session for as long as it is open (from the pool's readers, given
/// back after), and a held snapshot keeps the database's oldest visible transaction back, so
/// VACUUM cannot remove the row versions that other runners' updates and deletes leave behind
/// meanwhile (the tables grow until the snapshot ends). A server that ends idle transactions
/// (`idle_in_transaction_session_timeout`) ends the snapshot too: its reads then throw
/// `StoreError` `.connectionLost`.
///
/// `@unchecked Sendable`: `connection` is touched only inside `gate` (one caller at a time);
/// `store` and `model` are constants.
final class PostgresPinnedReader: PinnedStoreReader, @unchecked Sendable {
    private let store: PostgresStore
    private let model: ManagedObjectModel
    private let gate = PinnedReadGate(store: "PostgreSQL")
    private var connection: PostgresConnection?

    private init(store: PostgresStore, connection: PostgresConnection) {
        self.store = store
        self.model = store.model
        self.connection = connection
    }

    /// Takes a reader session from `store`'s pool and holds a snapshot on it.
    static func open(_ store: PostgresStore) throws(StoreError) -> PostgresPinnedReader {
        let connection = try store.checkOutReader()
        do {
            try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            // A repeatable-read transaction takes its snapshot at its first statement: now.
            try connection.query("SELECT 1")
        } catch {
            // The error thrown is the BEGIN's; a ROLLBACK that fails only means the session is
            // not reused.
            store.checkIn(connection, healthy: (try? connection.query("ROLLBACK")) != nil)
            throw StoreError(error)
        }
        let reader = PostgresPinnedReader(store: store, connection: connection)
        guard store.register(reader) else {
            reader.close()
            throw .noPersistentStore
        }
        return reader
    }

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        try gate.run {
            guard let connection, !store.isClosed else { throw StoreError.noPersistentStore }
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
    }

    func close() {
        // Only a close from inside one of this snapshot's own reads is refused by the gate; the
        // session then ends with this reader (`PostgresConnection` closes when released).
        guard let taken = try? gate.run({ () -> PostgresConnection? in
            defer { connection = nil }
            return connection
        }) else { return }
        store.unregister(self)
        // A session still in its transaction would keep an old snapshot: then it is closed.
        store.checkIn(taken, healthy: (try? taken.query("COMMIT")) != nil)
    }
}

extension PostgresStore {
    /// A repeatable-read transaction held open on a session of its own (`PostgresPinnedReader`).
    package func openPinnedReader() throws(StoreError) -> any PinnedStoreReader {
        try PostgresPinnedReader.open(self)
    }
}
