import Foundation
import Logging
@testable import SwellPipeline
import SwellContexts
import SwellHTTP
import SwellPostgres
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore
import SwellPipelineTestSupport

/// One budget for many runners (Pipeline file reference, "One budget for many runners"):
/// `swell run` processes of one version-4 file on one PostgreSQL store, each with a shard of a
/// `for_each`, together keep to the file's host `rate_limit` as the API sees it; a SQLite
/// store's runs each keep their own buckets; a run whose shared budget cannot be used keeps
/// to its own, saying so once.
@Suite(.serialized) struct SharedRateBudgetTests {
    static let items = ["a", "b", "c", "d", "e", "f", "g", "h"]

    /// The file: a host budget of `rate` a second (`burst` at once) for every request to the
    /// latency server, a `for_each` source over `items` (offset paging), or over `/offset` alone.
    static func pipeline(_ server: LatencyServer, rate: String, items: [String]?, prefetch: Int? = nil) -> String {
        let url = items == nil ? server.url("/offset") : server.url("/items/${item}/offset")
        return """
            version: 4
            name: budget
            concurrency: 4
            hosts:
              \(server.baseURL):
                rate_limit: \(rate)
            entities:
              Record:
                key: [id]
                attributes: { id: integer, item: string?, page: integer, name: string, value: double }
            sources:
              - name: records
                entity: Record
                url: \(url)
                records: data
                paginate:
                  offset: { param: offset, limit_param: limit, limit: \(server.options.recordsPerPage), total: meta.total }
            \(items.map { "    for_each: [\($0.joined(separator: ", "))]" } ?? "")
            \(prefetch.map { "    prefetch: \($0)" } ?? "")
            """
    }

    private static func postgresStore(_ prefix: String) throws -> (url: String, schema: String, server: PostgresServer) {
        let server = try PostgresServer.shared.get()
        let schema = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        return (server.url() + "?schema=" + schema, schema, server)
    }

    @Test(arguments: [2, 4])
    func runnersOfOneFileOnOnePostgresStoreTogetherKeepToItsRate(runners: Int) throws {
        let server = try LatencyServer(.init(delay: 0.02, recordsPerPage: 10, pages: 5, items: Self.items))
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("budget.yml", Self.pipeline(server, rate: "{ requests: 10, per: 1s }", items: Self.items))
        let (store, schema, postgres) = try Self.postgresStore("budget\(runners)")
        let running = try (0..<runners).map { index in
            try RunningSwell(["run", "budget.yml", "--store", store, "--shard", "\(index)/\(runners)",
                              "--report", "out/report-\(index).json", "--progress", "never"], in: workspace.url)
        }
        defer { running.forEach { $0.kill() } }
        for runner in running { #expect(runner.finish(within: 120), "a runner did not end: \(runner.stderr)") }
        for runner in running { #expect(runner.process.terminationStatus == 0, "\(runner.stderr)") }

        // The API saw the file's rate, all runners together: at most 1 + 10 requests within any second.
        let stats = try server.stats()
        let pages = Self.items.count * server.options.pages
        #expect(stats.count >= pages)
        let most = stats.maxArrivals(within: 1)
        #expect(most <= 11, "\(most) requests within one second from \(runners) runners")
        // And they used it: close to 10 a second from the first request to the last.
        let times = stats.requests.map(\.t)
        let rate = Double(times.count - 1) / ((times.max() ?? 0) - (times.min() ?? 0))
        #expect(rate > 7, "\(rate) requests a second from \(runners) runners")
        print("SharedRateBudgetTests: \(runners) runners, \(stats.count) requests, at most \(most) within a second, "
              + String(format: "%.1f", rate) + " a second")

        // Each run took its own items (--shard) and saved their rows.
        var taken: [String] = []
        for index in 0..<runners {
            let sources = try workspace.report("out/report-\(index).json")["sources"] as? [[String: Any]] ?? []
            let names = sources.compactMap { $0["name"] as? String }
            #expect(names == Self.items.enumerated().filter { $0.offset % runners == index }.map { "records[\($0.element)]" })
            for source in sources { #expect(source["records"] as? Int == server.recordsPerSource, "\(source)") }
            taken += names
        }
        #expect(taken.sorted() == Self.items.map { "records[\($0)]" })
        let database = try PostgresConnection(postgres.url())
        defer { database.close() }
        let counts = try database.query("SELECT item, count(*) FROM \(schema).\"Record\" GROUP BY item ORDER BY item")
        #expect(counts == Self.items.map { [.text($0), .integer(Int64(server.recordsPerSource))] })
        let keys = try database.query("SELECT key FROM \(schema).swell_rate_buckets")
        // One bucket, the host's, that every runner took from.
        #expect(keys.count == 1 && "\(keys)".contains("host:"), "\(keys)")
    }

    /// Two runs one after the other: on PostgreSQL the second finds the bucket the first
    /// emptied; on SQLite it starts with a full bucket of its own.
    @Test(arguments: [false, true])
    func aSecondRunFindsTheBucketTheFirstEmptiedOnlyOnPostgres(postgres: Bool) throws {
        let server = try LatencyServer(.init(delay: 0.01, recordsPerPage: 10, pages: 3))
        defer { server.stop() }
        let workspace = try Workspace()
        // Three requests a run, one at a time: the burst of 3 lets one run through at once.
        try workspace.write("budget.yml", Self.pipeline(server, rate: "{ requests: 1, per: 2s, burst: 3 }", items: nil, prefetch: 1))
        let store = postgres ? try Self.postgresStore("again").url : workspace.path("out/store.sqlite")
        var spans: [Double] = []
        var waited: [Double] = []
        for run in 0..<2 {
            try server.reset()
            let outcome = try workspace.run("run", "budget.yml", "--store", store, "--report", "out/report-\(run).json", "--progress", "never")
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let times = try server.stats().requests.map(\.t)
            #expect(times.count == 3)
            spans.append((times.max() ?? 0) - (times.min() ?? 0))
            let sources = try workspace.report("out/report-\(run).json")["sources"] as? [[String: Any]] ?? []
            waited.append(sources.first?["waited_s"] as? Double ?? -1)
        }
        // The first run of each went through on the burst.
        #expect(spans[0] < 1, "\(spans)")
        if postgres {
            // Two more tokens at one every 2 s, less what came back between the runs.
            #expect(spans[1] >= 1.8, "\(spans)")
            #expect(waited[1] >= 1.5, "\(waited)")
        } else {
            #expect(spans[1] < 1, "\(spans)")
            #expect(waited[1] < 0.5, "\(waited)")
        }
    }

    /// A store whose shared budget refuses every take (here: a view where its table would be):
    /// the run keeps to the file's rate with its own buckets, says so once, and succeeds.
    @Test func aRunWhoseSharedBudgetCannotBeUsedKeepsToItsOwnBucketsAndSaysSoOnce() throws {
        let server = try LatencyServer(.init(delay: 0.01, recordsPerPage: 10, pages: 4, items: ["a", "b", "c"]))
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("budget.yml", Self.pipeline(server, rate: "{ requests: 10, per: 1s }", items: ["a", "b", "c"]))
        let (store, schema, postgres) = try Self.postgresStore("refused")
        let database = try PostgresConnection(postgres.url())
        defer { database.close() }
        try database.query("CREATE SCHEMA \(schema)")
        try database.query("CREATE VIEW \(schema).swell_rate_buckets AS SELECT 'x'::text AS key, 0::float8 AS tokens, now() AS updated")
        let outcome = try workspace.run("run", "budget.yml", "--store", store, "--progress", "never")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.components(separatedBy: "the store's shared rate budget cannot be used").count == 2, "\(outcome.stderr)")
        let stats = try server.stats()
        #expect(stats.count >= 12)
        #expect(stats.maxArrivals(within: 1) <= 11)
        let rows = try database.query("SELECT count(*) FROM \(schema).\"Record\"")
        #expect(rows == [[.integer(Int64(3 * server.recordsPerSource))]])
    }

    /// The adapter after a failed take: local buckets for `retryInterval` without asking the
    /// store again, one warning, and no password in it.
    @Test func aFailedTakeIsWarnedOnceAndTheStoreIsLeftAloneForAWhile() throws {
        let log = CapturedLog()
        let unreachable = PostgresStore(url: URL(string: "postgresql://swell:hunter22@127.0.0.1:1/app")!)
        let buckets = StoreTokenBuckets(session: unreachable.openRateBudget(), logger: log.logger, redactor: Redactor(secrets: []))
        let spec = TokenBucketSpec(key: "source:s", tokensPerSecond: 1, burst: 1)
        #expect(throws: StoreError.self) { try buckets.take([spec]) }
        for _ in 0..<5 { #expect(throws: SharedBudgetUnavailable.self) { try buckets.take([spec]) } }
        let warnings = log.entries.withLock { $0 }.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("keeps to its own buckets") == true)
        #expect(warnings.first?.metadata["error"]?.contains("127.0.0.1") == true, "\(warnings)")
        #expect(!(warnings.first.map { "\($0)" } ?? "").contains("hunter22"))
    }

    /// A denied take says how long until the tokens are there: until then the adapter answers
    /// the wait left itself (here the store's session is gone, and it is not missed).
    @Test func aTakeBeforeTheTokensAreBackIsAnsweredWithoutAskingTheStore() throws {
        let (url, schema, server) = try Self.postgresStore("denied")
        let store = PostgresStore(url: URL(string: url)!)
        try store.load(model: ManagedObjectModel(entities: []))
        defer { try? store.close() }
        let log = CapturedLog()
        let buckets = StoreTokenBuckets(session: store.openRateBudget(), logger: log.logger, redactor: Redactor(secrets: []))
        let spec = TokenBucketSpec(key: "source:s", tokensPerSecond: 0.001, burst: 1)
        #expect(try buckets.take([spec]) == 0)
        let first = try buckets.take([spec])
        #expect(first > 990 && first <= 1000, "\(first)")
        let database = try PostgresConnection(server.url())
        defer { database.close() }
        let ended = try database.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name LIKE 'swell-budget %' AND query LIKE '%' || $1::text || '%'
            """, [.text("\"\(schema)\".swell_rate_buckets")])
        #expect(ended.count == 1)
        let again = try buckets.take([spec])
        #expect(again > 990 && again <= first, "\(again) after \(first)")
        #expect(log.entries.withLock { $0 }.isEmpty)
        // Other buckets are asked for: the lost session is noticed (and opened again next time).
        #expect(throws: StoreError.self) { try buckets.take([TokenBucketSpec(key: "source:t", tokensPerSecond: 1, burst: 1)]) }
    }

    /// A SQLite or in-memory store shares nothing: the run's engine keeps its own buckets.
    @Test func onlyAStoreManyRunnersShareOffersItsBuckets() throws {
        let workspace = try Workspace()
        for (url, shares) in [(URL(fileURLWithPath: workspace.path("store.sqlite")), false),
                              (URL(string: "memory://budget")!, false),
                              (URL(string: try Self.postgresStore("offers").url)!, true)] {
            let container = PersistentContainer(name: "budget", managedObjectModel: ManagedObjectModel(entities: []), storeURL: url)
            try container.loadPersistentStores()
            defer { try? container.close() }
            let shared = StoreTokenBuckets.shared(by: container.persistentStoreCoordinator, logger: Logger(label: "test"),
                                                  redactor: Redactor(secrets: []))
            #expect((shared != nil) == shares, "\(url)")
        }
    }
}
