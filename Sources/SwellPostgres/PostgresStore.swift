import Foundation
import SwellLocks
import SwellStoreCore

/// The PostgreSQL store: the same contexts, stack and guarantees as the SQLite
/// store, over one PostgreSQL database that many runners on many hosts write
/// at once (PostgreSQL store guarantees).
///
/// SwellStore opens it for a `postgres://` or `postgresql://` URL:
/// `addPersistentStore(at: URL(string: "postgres://user@host/db")!)`. libpq's own
/// environment (`PGPASSWORD`, `.pgpass`, `PGSSLMODE`, service files) applies; a
/// `schema` query parameter picks the schema; without one, the connection's own
/// `search_path` does (libpq's `options=-csearch_path%3Dname`), else `public`.
///
/// One writer connection commits root saves, each one transaction; reads run on
/// their own connections in a repeatable-read, read-only transaction (one
/// snapshot, never waiting for a commit in progress); a pinned context's snapshot holds
/// one of them in that transaction until it ends (`PinnedSnapshot`, PostgresStore+PinnedSnapshot.swift). Object IDs are unique across
/// runners: each store load takes a runner number from a sequence and hands out
/// IDs in its own range (`idRangeBits`), with no round trip per insert.
///
/// `@unchecked Sendable`: `writer` is used only under `writerLock`, reader
/// connections only by the caller that checked one out of `readers` (a `ReaderPool`, with
/// its own lock, which also keeps the pinned snapshots); `model` and `identifier` are set once by `load`, under `writerLock`,
/// before any read or commit.
public final class PostgresStore: PersistentStore, @unchecked Sendable {
    package let url: URL
    package private(set) var identifier = ""
    private(set) var model = ManagedObjectModel(entities: [])
    private let conninfo: String
    /// `locks=table`: hold sources by row locks in `swell_holds` instead of advisory locks
    /// (for engines without advisory locks: CockroachDB, YugabyteDB before 2.25).
    let holdsInTable: Bool
    /// The `schema` query parameter, when the URL has one.
    private let explicitSchema: String?
    /// The schema the store's tables are in: `explicitSchema`, or the one the first
    /// connection's search path names (found by `load`).
    private let resolvedSchema: LockedValue<String?>
    var schemaName: String { resolvedSchema.withLock { $0 } ?? explicitSchema ?? "public" }
    private let writerLock = NSLock()
    private var writer: PostgresConnection?
    /// The idle reader sessions and the pinned snapshots open now (`openPinnedReader`);
    /// open from the start, closed by `close()`: no reader is handed out or kept after it.
    package let readers = ReaderPool<PostgresConnection, PinnedSnapshot<PostgresStore>>(discard: { $0.close() })
    private let nextID = LockedValue<Int64>(0)
    private var idLimit: Int64 = 0

    /// Bits of an object ID a runner's range spans: 2^40 IDs per store load.
    static let idRangeBits: Int64 = 40

    /// Makes `postgres://` and `postgresql://` URLs open this store, for every coordinator.
    /// SwellStore does so without this call (PostgreSQL is one of its own store types); it
    /// stays, deprecated, for programs written when the call was needed.
    @available(*, deprecated, message: "postgres:// and postgresql:// URLs open the PostgreSQL store without it")
    public static func register() {
        for scheme in ["postgres", "postgresql"] {
            StoreTypeRegistry.register(scheme: scheme) { PostgresStore(url: $0) }
        }
    }

    package init(url: URL) {
        self.url = url
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let items = components?.queryItems ?? []
        explicitSchema = items.first { $0.name == "schema" }?.value
        holdsInTable = items.first { $0.name == "locks" }?.value == "table"
        resolvedSchema = LockedValue(explicitSchema)
        let rest = items.filter { $0.name != "schema" && $0.name != "locks" }
        components?.queryItems = rest.isEmpty ? nil : rest
        conninfo = components?.string ?? url.absoluteString
        readers.open()
    }

    /// The store's connection URL with more libpq keywords. An `options` item is put before
    /// the URL's own `options` (libpq keeps only one; later `-c` settings win), so a user's
    /// settings stay and may override Swell's.
    func conninfo(adding items: [URLQueryItem]) -> String {
        guard !items.isEmpty else { return conninfo }
        var base = conninfo
        var items = items
        if let index = items.firstIndex(where: { $0.name == "options" }),
           var components = URLComponents(string: conninfo),
           let own = components.queryItems?.first(where: { $0.name == "options" })?.value {
            items[index].value = [items[index].value ?? "", own].joined(separator: " ")
            let rest = components.queryItems?.filter { $0.name != "options" } ?? []
            components.queryItems = rest.isEmpty ? nil : rest
            base = components.string ?? conninfo
        }
        // Every character but letters, digits and -_. percent-encoded: libpq refuses a second `=` in a value.
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.")
        let query = items.map { item in
            "\(item.name)=\((item.value ?? "").addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        return base + (base.contains("?") ? "&" : "?") + query
    }

    /// TCP keepalives at both ends of a connection: libpq's keywords for the runner's socket
    /// (it notices a vanished server), and the server's settings in `options` for the
    /// server's socket (it notices a vanished runner, whose session and locks then end,
    /// instead of after the system default of hours). `client_connection_check_interval`
    /// notices a vanished runner while a statement of its session runs.
    static func keepalives(idle: Int, interval: Int, count: Int, userTimeoutMilliseconds: Int) -> [URLQueryItem] {
        let serverSide = [
            "tcp_keepalives_idle=\(idle)", "tcp_keepalives_interval=\(interval)", "tcp_keepalives_count=\(count)",
            "tcp_user_timeout=\(userTimeoutMilliseconds)", "client_connection_check_interval=\(interval * 1000)",
        ]
        return [
            URLQueryItem(name: "keepalives", value: "1"),
            URLQueryItem(name: "keepalives_idle", value: String(idle)),
            URLQueryItem(name: "keepalives_interval", value: String(interval)),
            URLQueryItem(name: "keepalives_count", value: String(count)),
            URLQueryItem(name: "tcp_user_timeout", value: String(userTimeoutMilliseconds)),
            URLQueryItem(name: "options", value: serverSide.map { "-c \($0)" }.joined(separator: " ")),
        ]
    }

    /// The data connections' (writer, readers) keepalives: a runner whose host vanishes
    /// mid-commit leaves its transaction, and the row locks it holds, for about 30 s.
    static let dataConnectionKeepalives = keepalives(idle: 10, interval: 5, count: 3, userTimeoutMilliseconds: 30_000)

    deinit {
        writer?.close()
    }

    /// Whether `close()` closed the store.
    var isClosed: Bool { !readers.isOpen }

    /// Closes the writer's, the idle readers' and the pinned snapshots' sessions (a reader in
    /// use is closed when it comes back); later reads and commits throw `StoreError.noPersistentStore`.
    package func close() throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        let (idle, pins) = readers.close()
        for connection in idle { connection.close() }
        for pin in pins { pin.close() }
        writer?.close()
        writer = nil
    }

    private func connect() throws(StoreError) -> PostgresConnection {
        do {
            let connection = try PostgresConnection(conninfo(adding: Self.dataConnectionKeepalives))
            if let schema = resolvedSchema.withLock({ $0 }) {
                try connection.query("SET search_path TO \(PostgresSQL.quote(schema))")
            }
            return connection
        } catch {
            throw StoreError(error)
        }
    }

    // MARK: Loading

    package func load(model: ManagedObjectModel, stage: MigrationStageWork) throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        let connection = try connect()
        do {
            if explicitSchema == nil, resolvedSchema.withLock({ $0 }) == nil {
                var schema = "public"
                if case .text(let current)? = try connection.query("SELECT current_schema()::text").first?.first { schema = current }
                resolvedSchema.withLock { $0 = schema }
                try connection.query("SET search_path TO \(PostgresSQL.quote(schema))")
            }
            let identifier = try PostgresSchema(connection: connection, schema: schemaName).migrate(to: model, stage: stage)
            guard case .integer(let runner)? = try connection.query("SELECT nextval('swell_runner_ids')").first?.first else {
                throw StoreError(.unexpectedAnswer, "PostgreSQL at \(connection.endpoint) gave no runner number (SELECT nextval('swell_runner_ids'))")
            }
            self.identifier = identifier
            self.model = model
            writer?.close()
            writer = connection
            let start = runner << Self.idRangeBits
            nextID.withLock { $0 = start + 1 }
            idLimit = start + (1 << Self.idRangeBits)
        } catch {
            connection.close()
            throw StoreError(converting: error)
        }
    }

    /// The model the store recorded (nil: no Swell tables in its schema yet), read on a
    /// connection of its own.
    package func recordedModel() throws(StoreError) -> ManagedObjectModel? {
        let connection = try connect()
        defer { connection.close() }
        do {
            let schema = resolvedSchema.withLock { $0 } ?? explicitSchema
            let table = schema.map { "\(PostgresSQL.quote($0)).swell_metadata" } ?? "swell_metadata"
            let exists = try connection.query("SELECT count(*) FROM pg_class WHERE oid = to_regclass($1::text)", [.text(table)])
            guard exists.first?.first == .integer(1) else { return nil }
            guard case .text(let json)? = try connection.query("SELECT value FROM \(table) WHERE key = 'model'").first?.first else {
                // Made before the store recorded its model: a plan could not place it.
                throw StoreError.migrationFailed(version: nil, reason: "the store was made before Swell recorded its model; open it once without a migration plan (that records the model), then with the plan")
            }
            return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
        } catch {
            throw StoreError(converting: error)
        }
    }

    package func allocateIDs(for entity: String, count: Int64) -> Range<Int64> {
        nextID.withLock { next in
            let block = next..<(next + count)
            next += count
            precondition(block.upperBound <= idLimit, "this store load handed out its 2^\(Self.idRangeBits) object IDs")
            return block
        }
    }

    /// An object's ID is never its key here: IDs come from the runner's range.
    package func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool { false }

    // MARK: Reading

    package func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        let connection = try checkOutReader()
        var healthy = true
        defer { checkIn(connection, healthy: healthy) }
        do {
            try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        } catch {
            healthy = false
            throw StoreError(error)
        }
        // Ending a read-only snapshot: its answer is already read; a failure only retires the connection.
        defer { if (try? connection.query("COMMIT")) == nil { healthy = false } }
        do {
            return try body(PostgresReader(connection: connection, model: model))
        } catch let error as PostgresError {
            healthy = connection.isOpen
            throw StoreError(error)
        }
    }

    package func checkOutReader() throws(StoreError) -> PostgresConnection {
        try readers.checkOut { () throws(StoreError) in try connect() }
    }

    package func checkIn(_ connection: PostgresConnection, healthy: Bool) {
        readers.checkIn(connection, healthy: healthy && connection.isOpen)
    }

    // MARK: Committing

    // MARK: History

    /// Runs `body` on the writer session in one transaction, under the writer's lock.
    private func writeTransaction(_ body: (PostgresConnection) throws -> Void) throws(StoreError) {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw .noPersistentStore }
        do {
            try writer.query("BEGIN")
            do {
                try body(writer)
                try writer.query("COMMIT")
            } catch {
                _ = try? writer.query("ROLLBACK")  // the body's error is the one to report
                throw error
            }
        } catch {
            throw StoreError(converting: error)
        }
    }

    package func startHistory() throws(StoreError) {
        // Already on (the usual case): a read, so opening never waits on another runner's lock.
        do {
            if try read({ try PostgresHistory.isOn(($0 as! PostgresReader).connection) }) { return }  // this store's own reader
        } catch {
            throw StoreError(converting: error)
        }
        try writeTransaction { writer in
            // Several runners may turn it on at once: one at a time. Held exclusively, the lock
            // also waits for commits that began before (each holds it shared from the moment it
            // asks whether history is on), so none of them goes unrecorded.
            try writer.query("SELECT pg_advisory_xact_lock(hashtext($1::text))", [.text(PostgresHistory.lockKey(schema: schemaName))])
            for sql in PostgresHistory.createSQL { try writer.query(sql) }
        }
    }

    package func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction] {
        do {
            return try read { reader in
                // The reader this store hands out is its own.
                let reader = reader as! PostgresReader
                return try PostgresHistory.transactions(after: token, connection: reader.connection, model: reader.model, storeIdentifier: identifier)
            }
        } catch {
            throw StoreError(converting: error)
        }
    }

    package func lastHistoryToken(before date: Date?) throws(StoreError) -> HistoryToken? {
        do {
            return try read { reader in
                let connection = (reader as! PostgresReader).connection  // this store's own reader
                guard try PostgresHistory.isOn(connection),
                      case .integer(let id)? = try (date.map { try connection.query("SELECT max(id) FROM \(PostgresHistory.transactions) WHERE timestamp < $1::double precision", [.real($0.timeIntervalSince1970)]) }
                        ?? connection.query("SELECT max(id) FROM \(PostgresHistory.transactions)")).first?.first else { return nil }
                return HistoryToken(value: id)
            }
        } catch {
            throw StoreError(converting: error)
        }
    }

    package func deleteHistory(before token: HistoryToken) throws(StoreError) {
        try writeTransaction { writer in
            guard try PostgresHistory.isOn(writer) else { return }
            try writer.query("DELETE FROM \(PostgresHistory.transactions) WHERE id < $1::bigint", [.integer(token.value)])
            // How far it was ever purged, never moved back (ManagedObjectContext.historyPurgedBefore);
            // two runners purging at once take turns on the row.
            try writer.query("INSERT INTO swell_state (key, value) VALUES ($1::text, $2::text) ON CONFLICT (key) DO UPDATE SET "
                             + "value = GREATEST(swell_state.value::bigint, excluded.value::bigint)::text",
                             [.text(PersistentHistoryKeys.purgedBefore), .text(String(token.value))])
        }
    }

    package func commit(_ changes: StoreChangeSet) throws(StoreError) -> StoreCommitResult {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw .noPersistentStore }
        let committer = PostgresCommitter(connection: writer, model: model, storeIdentifier: identifier, policy: changes.mergePolicy)
        var transaction = PostgresCommitTransaction(connection: writer, committer: committer,
                                                    historyLock: PostgresHistory.lockKey(schema: schemaName))
        do {
            return try CommitDriver.commit(changes, through: &transaction)
        } catch {
            throw StoreError(converting: error)
        }
    }
}

extension StoreError {
    /// A libpq failure as a store error: its message names host, port, database and user, never a password.
    init(_ error: PostgresError) {
        switch error {
        case .connectionFailed: self.init(.serverUnreachable, error.description)
        case .connectionLost: self.init(.connectionLost, error.description)
        case .statementFailed(let sqlState, let message, let sql):
            self.init(.statementRefused, error.description)
            self.sqlState = sqlState
            self.reason = message
            self.sql = sql
        case .unreadableAnswer: self.init(.unexpectedAnswer, error.description)
        }
        underlying = error
    }

    /// `error` as a store error: a store error as it is, a libpq failure by its kind,
    /// anything else as `.underlying`.
    init(converting error: any Error) {
        switch error {
        case let error as StoreError: self = error
        case let error as PostgresError: self.init(error)
        default: self = .underlying(error)
        }
    }
}
