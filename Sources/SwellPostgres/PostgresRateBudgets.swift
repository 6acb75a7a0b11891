import Foundation
import SwellStoreCore

/// Rate budgets shared by every runner of one database (Pipeline file reference, "One budget
/// for many runners"): a row per bucket in `swell_rate_buckets` (key, tokens, when they were
/// counted), taken in one short statement by the server's clock — runners' clocks may differ.
///
/// A take locks the rows of its buckets in key order (`SELECT … FOR UPDATE`: two takes of the
/// same buckets queue, and never deadlock), reads the server's clock once they are held,
/// counts each bucket's tokens (what it held plus what it gained since, at most its burst),
/// and, only when every one holds a token, takes one from each. All of it is one statement, so
/// one round trip, in its own transaction. A bucket's row is made full, once per session, by an
/// `INSERT … ON CONFLICT DO NOTHING` before its first take.
///
/// Each run's budget session has a connection of its own (never the writer's, whose
/// transactions may be long), with keepalives as a source hold's, a connect timeout, and
/// statement and lock timeouts: a take that cannot be answered in seconds fails, and the
/// run goes on with its own buckets. (A file store has no such budgets: each run keeps its own.)
extension PostgresStore {
    /// The table, in the store's schema (created by `PostgresSchema`).
    static let rateBucketsTable = "swell_rate_buckets"

    /// Connection keywords of a budget session.
    var rateBudgetParameters: [URLQueryItem] {
        var items = Self.keepalives(idle: 2, interval: 1, count: 2, userTimeoutMilliseconds: 5000)
        if let index = items.firstIndex(where: { $0.name == "options" }) {
            items[index].value = [items[index].value ?? "", "-c statement_timeout=5000 -c lock_timeout=3000"].joined(separator: " ")
        }
        let host = ProcessInfo.processInfo.hostName
        items.append(URLQueryItem(name: "application_name", value: String("swell-budget \(host) \(getpid())".prefix(63))))
        // The URL's or the environment's connect timeout, else 5 s (libpq's default waits as long as TCP does).
        let named = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.contains { $0.name == "connect_timeout" } ?? false
        if !named && ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            items.append(URLQueryItem(name: "connect_timeout", value: "5"))
        }
        return items
    }

    /// A session on the shared buckets for one run: its own connection, opened at the first
    /// take and closed by ``PostgresRateBudgetSession/close()`` (or when the session goes).
    public func openRateBudget() -> PostgresRateBudgetSession {
        PostgresRateBudgetSession(conninfo: conninfo(adding: rateBudgetParameters),
                                  table: "\(PostgresSQL.quote(schemaName)).\(Self.rateBucketsTable)")
    }
}

/// One bucket of a take: `tokensPerSecond` gained, at most `burst` held (at least 1).
public struct RateBucketSpec: Sendable, Hashable {
    public var key: String
    public var tokensPerSecond: Double
    public var burst: Double

    public init(key: String, tokensPerSecond: Double, burst: Double) {
        self.key = key
        self.tokensPerSecond = tokensPerSecond
        self.burst = max(1, burst)
    }
}

/// One run's session on the shared buckets: its connection (opened at the first take, opened
/// again after it was lost) and the buckets whose rows it knows are there. Used from one
/// thread at a time.
///
/// `@unchecked Sendable`: every field but the two constants is touched only under `lock`.
public final class PostgresRateBudgetSession: @unchecked Sendable {
    private let conninfo: String
    private let table: String
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var known: Set<String> = []
    private var closed = false

    init(conninfo: String, table: String) {
        self.conninfo = conninfo
        self.table = table
    }

    deinit { connection?.close() }

    /// Takes one token from every bucket of `buckets` at once, or none: 0 when taken, else
    /// the seconds until every one of them would hold a token. A bucket seen for the first
    /// time starts full.
    ///
    /// - Throws: `StoreError` when the store cannot be reached or refuses the take.
    public func takeToken(from buckets: [RateBucketSpec]) throws -> Double {
        try lock.withLock { () throws(StoreError) -> Double in
            guard !closed else { throw .noPersistentStore }
            var seen = Set<String>()
            let buckets = buckets.filter { seen.insert($0.key).inserted }
            guard !buckets.isEmpty else { return 0 }
            do {
                let connection = try self.connection ?? PostgresConnection(conninfo)
                self.connection = connection
                return try take(buckets, on: connection)
            } catch {
                // A lost session is opened again by the next take; its rows are checked again then.
                if connection?.isOpen == false {
                    connection?.close()
                    connection = nil
                    known = []
                }
                throw StoreError(converting: error)
            }
        }
    }

    /// Ends the session (later takes throw `StoreError.noPersistentStore`).
    public func close() {
        lock.withLock {
            closed = true
            connection?.close()
            connection = nil
        }
    }

    /// The take: rows made first where this session has not seen them; made again when one
    /// went missing since (someone deleted it).
    private func take(_ buckets: [RateBucketSpec], on connection: PostgresConnection) throws(PostgresError) -> Double {
        let wanted = try Self.json(buckets)
        for attempt in 0..<2 {
            let missing = buckets.filter { !known.contains($0.key) }
            if !missing.isEmpty {
                try connection.query(insertSQL, [.text(try Self.json(missing))])
                known.formUnion(missing.map(\.key))
            }
            let rows = try connection.query(takeSQL, [.text(wanted)])
            guard let row = rows.first, row.count == 3, case .integer(let found) = row[2] else {
                throw .unreadableAnswer(message: "a rate budget take gave no verdict", sql: takeSQL)
            }
            if found < buckets.count {
                known.subtract(buckets.map(\.key))
                if attempt == 0 { continue }
                break
            }
            guard row[0] == .integer(1) else {
                guard case .real(let wait) = row[1] else { return 1 / (buckets.map(\.tokensPerSecond).min() ?? 1) }
                return max(wait, 0.001)
            }
            return 0
        }
        throw .unreadableAnswer(message: "the rows of the rate budgets \(buckets.map(\.key)) are missing", sql: insertSQL)
    }

    /// The buckets as `jsonb_to_recordset` reads them.
    private static func json(_ buckets: [RateBucketSpec]) throws(PostgresError) -> String {
        struct Bucket: Encodable { let key: String, rate: Double, burst: Double }
        do {
            let data = try JSONEncoder().encode(buckets.map { Bucket(key: $0.key, rate: $0.tokensPerSecond, burst: $0.burst) })
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw .unreadableAnswer(message: "a rate budget cannot be written as JSON: \(error)", sql: "")
        }
    }

    /// The buckets' rows, full, where missing; in key order (two sessions making the same rows wait in turn).
    private var insertSQL: String {
        """
        INSERT INTO \(table) (key, tokens, updated)
        SELECT key, burst, clock_timestamp() FROM jsonb_to_recordset($1::jsonb) AS w(key text, rate double precision, burst double precision)
        ORDER BY key ON CONFLICT (key) DO NOTHING
        """
    }

    /// One take. `clock` is read after every row is locked (it counts them first), so a take
    /// that waited for another's lock counts from the time it got it. A row counted later than
    /// the clock reads (the other take's clock ran ahead by microseconds) keeps its time: no
    /// token is counted twice; one more than 5 s ahead (the server's clock was set back since)
    /// starts again full, counted from now, rather than stay empty until the clock is back there.
    /// The answer: granted (all or none), the seconds to wait, the rows found.
    private var takeSQL: String {
        """
        WITH wanted AS MATERIALIZED (
            SELECT key, rate, burst FROM jsonb_to_recordset($1::jsonb) AS w(key text, rate double precision, burst double precision)
        ), locked AS MATERIALIZED (
            SELECT key, tokens, updated FROM \(table) WHERE key IN (SELECT key FROM wanted) ORDER BY key FOR UPDATE
        ), clock AS MATERIALIZED (
            SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM locked) AS held
        ), state AS MATERIALIZED (
            SELECT w.key, w.rate,
                   CASE WHEN l.updated > c.now + interval '5 seconds' THEN w.burst
                        ELSE LEAST(w.burst, l.tokens + GREATEST(0, EXTRACT(EPOCH FROM c.now - l.updated)::double precision) * w.rate)
                   END AS have,
                   CASE WHEN l.updated > c.now + interval '5 seconds' THEN c.now ELSE GREATEST(l.updated, c.now) END AS at
            FROM wanted w JOIN locked l ON l.key = w.key CROSS JOIN clock c
        ), verdict AS MATERIALIZED (
            SELECT count(*) = (SELECT count(*) FROM wanted) AND coalesce(bool_and(have >= 1), false) AS granted,
                   coalesce(max((1 - have) / rate) FILTER (WHERE have < 1), 0)::double precision AS wait,
                   count(*) AS found
            FROM state
        ), taken AS (
            UPDATE \(table) AS b SET tokens = s.have - 1, updated = s.at
            FROM state s, verdict v WHERE v.granted AND b.key = s.key
            RETURNING b.key
        )
        SELECT v.granted, v.wait, v.found FROM verdict v
        """
    }
}
