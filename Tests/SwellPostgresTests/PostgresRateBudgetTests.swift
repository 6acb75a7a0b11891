import Foundation
@testable import SwellPostgres
import SwellContexts
import SwellLocks
import SwellTestSupport
import Testing

/// The rate budgets runners share on a PostgreSQL store (Pipeline file reference, "One budget
/// for many runners"): takers on sessions of their own together stay within a bucket's rate,
/// counted by the server's clock; buckets taken together are taken all or none; a session
/// whose connection was lost opens another.
@Suite struct PostgresRateBudgetTests {
    /// A store in a schema of its own, loaded (its tables made).
    private func store() throws -> (PostgresStore, schema: String, server: PostgresServer) {
        let server = try PostgresServer.shared.get()
        let schema = "budget_\(UUID().uuidString.prefix(8).lowercased())"
        let store = PostgresStore(url: URL(string: server.url() + "?schema=" + schema)!)
        try store.load(model: ManagedObjectModel(entities: []))
        return (store, schema, server)
    }

    /// Logs each grant (an update of a bucket's row: a denied take writes nothing) with the
    /// time it was counted at, by the server's clock.
    private func logGrants(_ database: PostgresConnection, schema: String) throws {
        try database.query("CREATE TABLE \(schema).grants (key text, at timestamptz, tokens double precision)")
        try database.query("""
            CREATE FUNCTION \(schema).log_grant() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO \(schema).grants VALUES (NEW.key, NEW.updated, NEW.tokens); RETURN NEW; END $$
            """)
        try database.query("CREATE TRIGGER log_grant AFTER UPDATE ON \(schema).swell_rate_buckets FOR EACH ROW EXECUTE FUNCTION \(schema).log_grant()")
    }

    @Test func takersOnFourSessionsTogetherStayWithinTheRateAndUseIt() throws {
        let (store, schema, server) = try store()
        let database = try PostgresConnection(server.url())
        defer { database.close() }
        try logGrants(database, schema: schema)
        let bucket = RateBucketSpec(key: "host:http://api.example.com", tokensPerSecond: 20, burst: 1)
        let granted = LockedValue(0)
        let failures = LockedValue<[String]>([])
        let total = 100
        // Four takers, as four runners would: each waits what its denied take says, then tries again.
        _ = onThreads(4) { _ in
            let session = store.openRateBudget()
            defer { session.close() }
            while granted.withLock({ $0 }) < total {
                do {
                    let wait = try session.takeToken(from: [bucket])
                    if wait == 0 { granted.withLock { $0 += 1 } } else { Thread.sleep(forTimeInterval: wait) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let rows = try database.query("SELECT extract(epoch FROM at)::float8 FROM \(schema).grants ORDER BY at")
        let times = rows.compactMap { row -> Double? in if case .real(let t) = row[0] { t } else { nil } }
        #expect(times.count == granted.withLock { $0 })
        #expect(times.count >= total)
        // A bucket of 20/s with a burst of 1: at most 1 + 20 grants within any second.
        let most = LatencyServerStats.maxCount(of: times, within: 1)
        #expect(most <= 21, "\(most) grants within one second")
        // And the takers together use the budget: close to 20 a second over the whole run.
        let rate = Double(times.count - 1) / ((times.last ?? 0) - (times.first ?? 0))
        #expect(rate > 17 && rate <= 21, "\(rate) grants a second")
        print("PostgresRateBudgetTests: \(times.count) grants to four sessions, at most \(most) within a second, "
              + String(format: "%.1f", rate) + " a second")
    }

    @Test func bucketsTakenTogetherAreTakenAllOrNone() throws {
        let (store, schema, server) = try store()
        let session = store.openRateBudget()
        defer { session.close() }
        // Each gains a token in 1,000 s: what they hold is what the takes leave.
        let host = RateBucketSpec(key: "host:h", tokensPerSecond: 0.001, burst: 1)
        let source = RateBucketSpec(key: "source:s", tokensPerSecond: 0.001, burst: 3)
        #expect(try session.takeToken(from: [host, source]) == 0)
        let wait = try session.takeToken(from: [source, host])
        // The host's bucket is empty: about 1,000 s until it holds a token again.
        #expect(wait > 990 && wait <= 1000, "\(wait)")
        // The denied take left the source's bucket as it was: two tokens, then none.
        #expect(try session.takeToken(from: [source]) == 0)
        #expect(try session.takeToken(from: [source]) == 0)
        #expect(try session.takeToken(from: [source]) > 990)

        let database = try PostgresConnection(server.url())
        defer { database.close() }
        let tokens = try database.query("SELECT key, round(tokens::numeric, 2)::float8 FROM \(schema).swell_rate_buckets ORDER BY key")
        #expect(tokens == [[.text("host:h"), .real(0)], [.text("source:s"), .real(0)]])
    }

    @Test func aBucketIsSharedByEverySessionOfTheStoreAndNotByAnotherSchemasStore() throws {
        let (first, _, _) = try store()
        let (other, _, _) = try store()
        let bucket = RateBucketSpec(key: "source:s", tokensPerSecond: 0.001, burst: 1)
        let one = first.openRateBudget(), two = first.openRateBudget(), elsewhere = other.openRateBudget()
        defer { [one, two, elsewhere].forEach { $0.close() } }
        #expect(try one.takeToken(from: [bucket]) == 0)
        #expect(try two.takeToken(from: [bucket]) > 990)
        #expect(try elsewhere.takeToken(from: [bucket]) == 0)
    }

    @Test func aRowCountedWellAheadOfTheServersClockStartsAgainFull() throws {
        let (store, schema, server) = try store()
        let session = store.openRateBudget()
        defer { session.close() }
        let bucket = RateBucketSpec(key: "source:s", tokensPerSecond: 0.001, burst: 1)
        #expect(try session.takeToken(from: [bucket]) == 0)
        #expect(try session.takeToken(from: [bucket]) > 990)
        let database = try PostgresConnection(server.url())
        defer { database.close() }
        func ahead() throws -> Double? {
            let rows = try database.query("SELECT extract(epoch FROM updated - clock_timestamp())::float8 FROM \(schema).swell_rate_buckets")
            if case .real(let seconds)? = rows.first?.first { return seconds }
            return nil
        }
        // A row counted a second ahead (another take's clock read a moment later) waits for it.
        try database.query("UPDATE \(schema).swell_rate_buckets SET tokens = 0, updated = clock_timestamp() + interval '1 second'")
        #expect(try session.takeToken(from: [bucket]) > 990)
        // The server's clock was set back an hour since the row was counted: it starts again
        // full, from now, instead of staying empty for the hour.
        try database.query("UPDATE \(schema).swell_rate_buckets SET tokens = 0, updated = clock_timestamp() + interval '1 hour'")
        #expect(try session.takeToken(from: [bucket]) == 0)
        let after = try #require(try ahead())
        #expect(after <= 0 && after > -5, "\(after)")
        #expect(try session.takeToken(from: [bucket]) > 990)
    }

    @Test func aSessionWhoseConnectionWasLostOpensAnother() throws {
        let (store, schema, server) = try store()
        let session = store.openRateBudget()
        defer { session.close() }
        let bucket = RateBucketSpec(key: "source:s", tokensPerSecond: 1000, burst: 1000)
        #expect(try session.takeToken(from: [bucket]) == 0)
        let database = try PostgresConnection(server.url())
        defer { database.close() }
        // This session's backend: the one whose last statement took from this schema's buckets.
        let ended = try database.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name LIKE 'swell-budget %' AND query LIKE '%' || $1::text || '%'
            """, [.text("\"\(schema)\".swell_rate_buckets")])
        #expect(ended.count == 1)
        #expect(throws: StoreError.self) { try session.takeToken(from: [bucket]) }
        #expect(try session.takeToken(from: [bucket]) == 0)
        session.close()
        #expect(throws: StoreError.self) { try session.takeToken(from: [bucket]) }
    }

    @Test func aBudgetSessionHasItsOwnTimeoutsAndNamesItsRunner() throws {
        let store = PostgresStore(url: URL(string: "postgresql://swell@db.example:5432/app?options=-c%20statement_timeout%3D4321")!)
        let conninfo = store.conninfo(adding: store.rateBudgetParameters)
        let items = try #require(URLComponents(string: conninfo)?.queryItems)
        let options = items.filter { $0.name == "options" }
        #expect(options.count == 1)
        // Swell's settings first, the user's after (later -c settings win).
        #expect(options.first?.value?.hasPrefix("-c tcp_keepalives_idle=2") == true)
        #expect(options.first?.value?.contains("-c statement_timeout=5000 -c lock_timeout=3000 -c statement_timeout=4321") == true)
        #expect(items.contains { $0.name == "application_name" && $0.value?.hasPrefix("swell-budget ") == true })
        if ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            #expect(items.contains { $0.name == "connect_timeout" && $0.value == "5" })
        }
        let named = PostgresStore(url: URL(string: "postgresql://swell@db.example/app?connect_timeout=2")!)
        #expect(named.conninfo(adding: named.rateBudgetParameters).components(separatedBy: "connect_timeout").count == 2)
    }
}
