import CSQLite
import Dispatch
import SwellStoreCore
import Synchronization

/// Copies the WAL's committed pages into the store file on a queue of its own, with a
/// connection of its own, so that a commit never waits for a checkpoint.
///
/// SQLite's automatic checkpoint runs inside the commit that grows the WAL past
/// `threshold` pages: the writer then copies the pages and waits for the file's fsync
/// before its next commit can start (in a re-sync, a third of the writer's waits on the
/// disk). The checkpointer takes over that hook on the writer's connection (which turns
/// the automatic checkpoint off) and runs a passive checkpoint — one that never waits
/// for, nor blocks, readers and the writer — whenever a commit leaves the WAL past the
/// threshold. Should the WAL still grow past `limit` pages (the checkpointer cannot keep
/// up, or a reader's snapshot holds pages back), the commit checkpoints as before, so the
/// WAL stays bounded. Closing the store waits for a checkpoint under way.
///
/// `@unchecked Sendable`: `connection` and `closed` are used only on `queue`; `scheduled` is atomic.
package final class SQLiteCheckpointer: @unchecked Sendable {
    /// WAL pages after which a checkpoint is started (SQLite's automatic checkpoint's default).
    package static let threshold: Int32 = 1000
    /// WAL pages after which the committing connection checkpoints itself.
    package static let limit: Int32 = 16 * threshold
    /// The size the WAL file is cut back to when it starts over (`PRAGMA journal_size_limit`,
    /// set on the writer): the bytes of `limit` pages of 4 KiB, the most it holds in ordinary
    /// use. Only a WAL that grew past it — a transaction larger than that, or commits while a
    /// pinned snapshot held the WAL's frames back (Store guarantees 56) — is cut, at the first
    /// commit after a checkpoint copied all of it; without the limit SQLite keeps the file at
    /// its largest size.
    package static let sizeLimit = Int64(limit) * 4096

    private let path: String
    private let queue = DispatchQueue(label: "swell.sqlite.checkpoint", qos: .utility)
    private var connection: SQLiteConnection?
    /// Set by `close` (on `queue`): a checkpoint queued after it does nothing.
    private var closed = false
    /// Whether a checkpoint is queued and not yet started.
    private let scheduled = Atomic<Bool>(false)
    /// Checkpoints run, for tests.
    package let checkpoints = Atomic<Int>(0)

    package init(path: String) {
        self.path = path
    }

    /// Takes over `writer`'s WAL hook (after each commit).
    package func attach(to writer: SQLiteConnection) throws(SQLiteError) {
        let handle = try writer.handle
        sqlite3_wal_hook(handle, { context, database, name, pages in
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context!).takeUnretainedValue()
            if pages >= SQLiteCheckpointer.limit {
                // Far behind: this commit checkpoints, as SQLite's automatic checkpoint would.
                sqlite3_wal_checkpoint_v2(database, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if pages >= SQLiteCheckpointer.threshold {
                checkpointer.schedule()
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer`'s WAL hook back (before it closes: the hook names this object).
    package func detach(from writer: SQLiteConnection) {
        guard let handle = writer.openHandle else { return }
        sqlite3_wal_hook(handle, nil, nil)
    }

    /// Queues a passive checkpoint (none when one is queued already): after each commit past
    /// the threshold, and when a pinned snapshot that held the WAL's frames back ends.
    package func schedule() {
        guard !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            scheduled.store(false, ordering: .releasing)
            checkpoint()
        }
    }

    /// One passive checkpoint. A failure (the file gone, a full disk) is left to the
    /// writer's next commit and the store's close, which meet the same file.
    private func checkpoint() {
        guard !closed else { return }
        do {
            if connection == nil {
                let opened = try SQLiteConnection(path: path, mode: .readWrite)
                try opened.execute("PRAGMA cache_size=-512")
                connection = opened
            }
            guard let handle = connection?.openHandle else { return }
            sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            checkpoints.add(1, ordering: .relaxed)
        } catch {
            connection = nil
        }
    }

    /// Waits for a checkpoint queued or under way.
    package func waitUntilIdle() {
        queue.sync {}
    }

    /// Waits for a checkpoint under way, then closes the checkpointer's connection.
    package func close() throws(SQLiteError) {
        let connection = queue.sync { () -> SQLiteConnection? in
            defer { self.connection = nil }
            closed = true
            return self.connection
        }
        try connection?.close()
    }
}
