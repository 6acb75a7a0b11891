import CSQLite
import Foundation
import SwellStoreCore
import Synchronization

/// The SQLite persistent store: one ordinary SQLite file in WAL mode, one
/// table per entity. A coordinator's `persistentStore` is one when its URL is a file; what
/// it offers beyond the coordinator is the deferred disk sync (group commit for a batch run).
///
/// One writer connection commits root saves; reads use their own connections
/// (a small pool), each in a read transaction, so they see a consistent
/// snapshot and never wait for a commit in progress. A pinned context's snapshot holds
/// one of them in its read transaction until it ends (`PinnedSnapshot`, SQLiteStore+PinnedSnapshot.swift).
///
/// `@unchecked Sendable`, field by field: `writer` and `defersDiskSync` are used only under `writerLock`;
/// the read connections and pinned snapshots are the `readers` pool's (`ReaderPool`: its own
/// lock; each reader owned by one caller until returned); `identifier`, `model` and `rowidKeyed` are set once by `load`, under `writerLock`, and
/// published to readers by `isLoaded` (release/acquire) before any read or commit uses
/// them; `_commitObserver`, `_commitObserverInterval` and `_readObserver` are touched only
/// under `observerLock`; `url` and `path` are constants.
public final class SQLiteStore: PersistentStore, @unchecked Sendable {
    package let url: URL
    package private(set) var identifier: String = ""
    private(set) var model = ManagedObjectModel(entities: [])

    private let writerLock = NSLock()
    private var writer: SQLiteConnection?
    /// Set once the store is loaded; read without the writer's lock so reads never wait for a commit.
    private let isLoaded = Atomic<Bool>(false)
    /// The idle read connections and the pinned snapshots open now (`openPinnedReader`),
    /// closed with the store; opened by `load`.
    package let readers: ReaderPool<SQLiteConnection, PinnedSnapshot<SQLiteStore>>

    /// Called during a commit with the number of operations written so far
    /// (0 right after the transaction began, then every `commitObserverInterval`).
    /// For tests that act at a known moment inside a save.
    private let observerLock = NSLock()
    private var _commitObserver: (@Sendable (Int) -> Void)?
    private var _commitObserverInterval = 1000
    package var commitObserverInterval: Int {
        get { observerLock.withLock { _commitObserverInterval } }
        set { observerLock.withLock { _commitObserverInterval = newValue } }
    }
    package var commitObserver: (@Sendable (Int) -> Void)? {
        get { observerLock.withLock { _commitObserver } }
        set { observerLock.withLock { _commitObserver = newValue } }
    }

    /// Called inside every read, after the reader ran and before its snapshot closes.
    /// For tests that hold a store read open (a slow disk) at a known moment.
    private var _readObserver: (@Sendable () -> Void)?
    package var readObserver: (@Sendable () -> Void)? {
        get { observerLock.withLock { _readObserver } }
        set { observerLock.withLock { _readObserver = newValue } }
    }

    /// The store file's path (kept: `URL.path` is too slow to compute per read).
    package let path: String

    /// Checkpoints the WAL off the writer's queue (`SQLiteCheckpointer`).
    package let checkpointer: SQLiteCheckpointer

    /// Commits do not wait for the disk until `close` (the deferred disk sync, below); under `writerLock`.
    private var defersDiskSync = false
    /// How many times deferred commits were synced (by `close` or `syncDeferredCommits`), for tests.
    package let deferredSyncs = Atomic<Int>(0)

    package init(url: URL) {
        self.url = url
        self.path = url.path
        checkpointer = SQLiteCheckpointer(path: url.path)
        readers = ReaderPool(discard: { _ in })  // a connection closes when it is released
    }

    // MARK: Loading

    /// Hands out object IDs from blocks reserved through the file, so that no other
    /// coordinator writing it (here or in another process) hands out the same ones.
    package let ids = SQLiteIDReservations()
    /// The entities whose key is their table's rowid (`ObjectIDSpace`), set by `load`.
    private var rowidKeyed: Set<String> = []

    package func allocateIDs(for entity: String, count: Int64) throws(StoreError) -> Range<Int64> {
        try ids.allocate(for: entity, count: count) { [self] entity, size throws(StoreError) in
            writerLock.lock()
            defer { writerLock.unlock() }
            guard let writer, let description = model.entitiesByName[entity] else {
                throw writer == nil ? .noPersistentStore : .unknownEntity(entity)
            }
            do {
                return try SQLiteIDReservations.reserve(size, for: description, connection: writer)
            } catch {
                throw StoreError(converting: error, path: path)
            }
        }
    }

    package func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool {
        ObjectIDSpace.mayUseKeyAsID(key, rowidKeyed: rowidKeyed.contains(entity))
    }

    package func load(model: ManagedObjectModel, stage: MigrationStageWork) throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        do {
            try prepareDirectory()
            let connection: SQLiteConnection
            do {
                connection = try SQLiteConnection(path: path)
            } catch {
                throw StoreError(error, path: path)
            }
            do {
                try configureWriter(connection)
                let identifier = try SQLiteSchema(connection: connection).migrate(to: model, stage: stage)
                self.identifier = identifier
                self.model = model
                self.rowidKeyed = Set(model.entities.filter { $0.rowidKeyIndex != nil }.map(\.name))
                self.writer = connection
                isLoaded.store(true, ordering: .releasing)
                readers.open()
            } catch {
                throw StoreError(converting: error, path: path)
            }
        }
    }

    /// The model the file recorded (nil: no file yet, or no Swell tables in it), read through a
    /// connection of its own that writes nothing.
    package func recordedModel() throws(StoreError) -> ManagedObjectModel? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            return try SQLiteSchema(connection: connection).storedModel()
        } catch {
            throw StoreError(converting: error, path: path)
        }
    }

    private func prepareDirectory() throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .notAStore(path: path, reason: "it is a directory")
        }
        if !FileManager.default.fileExists(atPath: path) {
            // A -wal or -shm without its main file belongs to no store (a crash
            // while one was being replaced): SQLite must not replay it into a new one.
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                do {
                    try FileManager.default.removeItem(atPath: path + suffix)
                } catch {
                    throw .notAStore(path: path, reason: "a leftover \(suffix) file without its store cannot be removed: \(error.localizedDescription)")
                }
            }
        }
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .notAStore(path: path, reason: "cannot create the directory \(directory.path): \(error.localizedDescription)")
        }
        if let problem = Self.writeProblem(file: path, directory: directory.path) {
            throw .notAStore(path: path, reason: problem + " (a store in WAL mode is written, with its -wal and -shm files beside it, even to be read)")
        }
    }

    /// Why the store file or its directory cannot be written, or nil when both can.
    private static func writeProblem(file: String, directory: String) -> String? {
        var info = statvfs()
        if statvfs(directory, &info) == 0, info.f_flag & UInt(ST_RDONLY) != 0 {
            return "it is on a read-only file system"
        }
        if access(directory, W_OK) != 0 { return "its directory \(directory) is not writable" }
        if FileManager.default.fileExists(atPath: file), access(file, W_OK) != 0 { return "the file is read-only" }
        return nil
    }

    private func configureWriter(_ connection: SQLiteConnection) throws {
        // Reading the schema first tells a non-database file apart before WAL is requested.
        _ = try connection.query("PRAGMA schema_version")
        let mode = try connection.query("PRAGMA journal_mode=WAL")
        guard case .text(let name)? = mode.first?.first, name.lowercased() == "wal" else {
            throw StoreError.notAStore(path: path, reason: "cannot switch the store to WAL mode (read-only file system?)")
        }
        try connection.execute("PRAGMA synchronous=FULL")
        try connection.execute("PRAGMA journal_size_limit=\(SQLiteCheckpointer.sizeLimit)")
        try checkpointer.attach(to: connection)
    }

    // MARK: Reading

    /// How many reads ran, for tests that check a path never reads the store.
    package let readCount = Atomic<Int>(0)

    package func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        readCount.add(1, ordering: .relaxed)
        let connection = try checkOutReader()
        var healthy = true
        defer { checkIn(connection, healthy: healthy) }
        do {
            try connection.execute("BEGIN DEFERRED")
        } catch {
            healthy = false
            throw StoreError(error, path: path)
        }
        // Ending a read: its answer is already read; a failure only retires the connection
        // (still inside its transaction, it would keep an old snapshot).
        defer { if (try? connection.execute("COMMIT")) == nil { healthy = false } }
        let result = try body(SQLiteStoreReader(connection: connection, model: model, path: path))
        readObserver?()
        return result
    }

    package func checkOutReader() throws(StoreError) -> SQLiteConnection {
        guard isLoaded.load(ordering: .acquiring) else { throw .noPersistentStore }
        return try readers.checkOut { () throws(StoreError) in try openReader() }
    }

    /// A new read connection: query-only, with a small page cache.
    private func openReader() throws(StoreError) -> SQLiteConnection {
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("PRAGMA query_only=1")
            // A small page cache per reader (the OS caches the file too): measured, less memory at the same speed.
            try connection.execute("PRAGMA cache_size=-512")
            return connection
        } catch {
            throw StoreError(error, path: path)
        }
    }

    package func checkIn(_ connection: SQLiteConnection, healthy: Bool) {
        // After `close()`, or when its transaction could not be ended, a reader that comes
        // back is dropped (and closed when released).
        readers.checkIn(connection, healthy: healthy)
    }

    /// Whether the store is loaded and not closed.
    var isOpen: Bool { isLoaded.load(ordering: .acquiring) }

    /// Closes the writer, the idle readers and the pinned snapshots (a reader in use is closed
    /// when it comes back).
    ///
    /// - Throws: the first connection's failure to close, naming the statements it had open.
    package func close() throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        isLoaded.store(false, ordering: .releasing)
        let (idle, pins) = readers.close()
        // Their read transactions would keep the closing checkpoint from reaching the WAL's end.
        for pin in pins { pin.close() }
        var failure: SQLiteError?
        // The writer closes last: the last connection to the file checkpoints it.
        if let writer { checkpointer.detach(from: writer) }
        do {
            try checkpointer.close()
        } catch {
            failure = error
        }
        // Synced here, not left to the closing checkpoint: that one does not run while
        // another process has the store open.
        do {
            try syncIfDeferred()
            defersDiskSync = false
        } catch {
            if failure == nil { failure = error }
        }
        for connection in idle + (writer.map { [$0] } ?? []) {
            do {
                try connection.close()
            } catch {
                if failure == nil { failure = error }
            }
        }
        writer = nil
        if let failure { throw StoreError(failure, path: path) }
    }

    // MARK: Committing

    /// Runs `body` on the writer connection in one `BEGIN IMMEDIATE` transaction, under the
    /// writer's lock (for writes outside a change set: the history's tables and purges).
    package func writeTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw .noPersistentStore }
        do {
            return try writer.transaction { try body(writer) }
        } catch {
            throw StoreError(converting: error, path: path)
        }
    }

    package func commit(_ changes: StoreChangeSet) throws(StoreError) -> StoreCommitResult {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw .noPersistentStore }
        let committer = SQLiteCommitter(connection: writer, model: model, storeIdentifier: identifier, policy: changes.mergePolicy)
        var transaction = SQLiteCommitTransaction(connection: writer, committer: committer, observer: commitObserver,
                                                  interval: commitObserverInterval)
        do {
            return try CommitDriver.commit(changes, through: &transaction)
        } catch {
            throw StoreError(converting: error, path: path)
        }
    }
}

/// Deferred disk sync: commits that return before the disk has them, all made durable
/// together when the store closes — group commit for a batch run, whose unit of work is the
/// run rather than one commit (the pipeline asks for it).
///
/// Deferred or not, a commit is atomic and survives its process being killed (Store
/// guarantees 6: the bytes are the operating system's once written). What a deferred commit
/// gives up until the close is surviving a power cut or a crash of the operating system:
/// such a cut can take back the commits since the store last synced (SQLite syncs at every
/// checkpoint), never part of one.
extension SQLiteStore {
    /// The writer's `PRAGMA synchronous` (2: FULL, 1: NORMAL), for tests.
    package var writerSynchronous: Int64? {
        writerLock.withLock {
            // A test hook: a closed or failing writer reads as "unknown" (nil), which the tests check against.
            guard case .integer(let value)? = try? writer?.query("PRAGMA synchronous").first?.first else { return nil }
            return value
        }
    }

    /// `PRAGMA synchronous=NORMAL` on the writer until `close`, which syncs the WAL.
    public func deferDiskSyncUntilClose() throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw .noPersistentStore }
        do {
            try writer.execute("PRAGMA synchronous=NORMAL")
        } catch {
            throw StoreError(error, path: path)
        }
        defersDiskSync = true
    }

    /// Syncs the WAL when commits were deferred (nothing to do otherwise).
    public func syncDeferredCommits() throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard writer != nil else { throw .noPersistentStore }
        do {
            try syncIfDeferred()
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// The one sync of deferred commits, for `close` and `syncDeferredCommits`; under `writerLock`.
    private func syncIfDeferred() throws(SQLiteError) {
        guard defersDiskSync, let writer else { return }
        try writer.syncJournal()
        deferredSyncs.add(1, ordering: .relaxed)
    }
}
