import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Real networks", rules 2 and 5, through `swell run` against flask-limiter (a rate
/// limiter Swell's authors did not write) and the latency server's 429/503 fault rules: a
/// file's budget keeps the run under the server's limit; a server's `Retry-After`,
/// `X-RateLimit-*` and IETF `RateLimit-*` hold the next request to the host, in every file
/// version; `max_wait` stops the source with 69 naming the host and when, and the next run
/// resumes; a budget that is too small never changes the order of work. Wall-time checks are
/// lower bounds only (a loaded machine only makes a run slower).
@Suite struct RateLimitTests {
    typealias Paging = ConcurrencyTests.Paging

    /// The number of records the store's export holds (the header line not counted).
    static func exportedRows(_ workspace: Workspace) throws -> Int {
        let csv = try ResumeTests.outcome(workspace, .columns).exports["items"].map { String(decoding: $0, as: UTF8.self) } ?? ""
        return csv.split(separator: "\n").count - 1
    }

    // MARK: The file's budget (rule 2, the buckets)

    /// Where the file puts its budget.
    enum Budget: String, CaseIterable, Sendable, CustomStringConvertible {
        case source, host
        var description: String { rawValue }
    }

    @Test(arguments: Budget.allCases)
    func aFilesBudgetKeepsTheRunUnderTheServersLimit(budget: Budget) throws {
        // The server allows 15 in any 2 s; the file's bucket gives at most 2 + 4 × 2 = 10 in any 2 s
        // (and without it the 20 requests would go at once: refused).
        let server = try RateLimitedServer(limit: "15 per 2 seconds", strategy: .movingWindow, recordsPerPage: 10, pages: 5,
                                           items: ["a", "b", "c", "d"])
        defer { server.stop() }
        let rate = "{ requests: 4, per: 1s, burst: 2 }"
        let yaml = ConcurrencyTests.pipeline(
            .offset, url: server.url("/items/${item}/offset"),
            top: "concurrency: 8" + (budget == .host ? "\nhosts:\n  \"\(server.baseURL)\": { rate_limit: \(rate) }" : ""),
            extra: "    for_each: [a, b, c, d]" + (budget == .source ? "\n    rate_limit: \(rate)" : ""))
        let workspace = try ConcurrencyTests.run(yaml)
        let stats = try server.stats()
        #expect(stats.count429 == 0, "the server refused \(stats.count429) of \(stats.count) requests")
        #expect(stats.count >= 20)
        #expect(try Self.exportedRows(workspace) == 200)
        // 20 requests, 2 at once and then 4 a second: the run waited for its budget.
        let entries = try workspace.report()["sources"] as? [[String: Any]] ?? []
        let waited = entries.compactMap { $0["waited_s"] as? Double }.reduce(0, +)
        #expect(waited > 1, "waited_s \(entries.map { $0["waited_s"] ?? "none" })")
        let requests = entries.compactMap { $0["requests"] as? Int }.reduce(0, +)
        #expect(requests == stats.count, "the report counts \(requests) requests, the server saw \(stats.count)")
        let span = (stats.requests.map(\.t).max() ?? 0) - (stats.requests.map(\.t).min() ?? 0)
        #expect(span >= Double(stats.count - 2) / 4 - 0.1, "\(stats.count) requests in \(span) s")
    }

    // MARK: The server's answers (rule 2, resets)

    @Test(arguments: [Paging.offset, .pages, .link])
    func aVersion3FileWaitsForTheServersResetAndIsNeverRefused(paging: Paging) throws {
        // One request at a time: the answer that says `X-RateLimit-Remaining: 0` holds the next
        // request until `X-RateLimit-Reset`, so the limiter never has to refuse one.
        let server = try RateLimitedServer(limit: "4 per 2 seconds", recordsPerPage: 10, pages: 7)
        defer { server.stop() }
        let path = ["offset": "/offset", "pages": "/pages", "link": "/link"][paging.rawValue]!
        let workspace = try ConcurrencyTests.run(ConcurrencyTests.pipeline(paging, url: server.url(path), version: 3))
        let stats = try server.stats()
        #expect(stats.maxInFlight == 1)
        #expect(stats.count429 == 0, "refused: \(stats.requests.filter { $0.status == 429 }.map(\.query))")
        #expect(try Self.exportedRows(workspace) == 70)
        let report = try ResumeTests.source(workspace)
        #expect(report["requests"] as? Int == stats.count)
        #expect((report["waited_s"] as? Double ?? 0) > 0.5, "\(report)")
        // Each refill came after a reset: no window of the limiter held more than 4.
        #expect(stats.maxAccepted(within: 1.5) <= 4)
    }

    @Test(arguments: [RateLimitedServer.RetryAfter.deltaSeconds, .httpDate])
    func aConcurrentRunWithoutABudgetIsHeldByTheServerAndLosesNothing(retryAfter: RateLimitedServer.RetryAfter) throws {
        let server = try RateLimitedServer(limit: "6 per 2 seconds", retryAfter: retryAfter, recordsPerPage: 10, pages: 4,
                                           items: ["a", "b", "c", "d"])
        defer { server.stop() }
        let yaml = ConcurrencyTests.pipeline(.offset, url: server.url("/items/${item}/offset"), top: "concurrency: 4",
                                             extra: "    for_each: [a, b, c, d]")
            .replacingOccurrences(of: "retries: 0", with: "retries: 20")
        let workspace = try ConcurrencyTests.run(yaml)
        let stats = try server.stats()
        #expect(try Self.exportedRows(workspace) == 160)
        let entries = try workspace.report()["sources"] as? [[String: Any]] ?? []
        let requests = entries.compactMap { $0["requests"] as? Int }.reduce(0, +)
        let retries = entries.compactMap { $0["retries"] as? Int }.reduce(0, +)
        #expect(requests == stats.count, "the report counts \(requests) requests, the server saw \(stats.count)")
        #expect(retries == stats.count429, "\(retries) retries for \(stats.count429) refusals")
        // Held by every answer's reset: once a window is spent, only what was already in flight
        // (at most the concurrency) is refused, not a retry storm.
        let windows = (16 + 5) / 6 + 1
        #expect(stats.count429 <= windows * 4, "\(stats.count429) refusals in about \(windows) windows")
    }

    /// One form of a server asking for a pause, as a latency-server rule on the answer of page 2.
    enum Pause: String, CaseIterable, Sendable, CustomStringConvertible {
        case retryAfterSeconds, retryAfterDate, xRateLimit, ietfRateLimit
        var description: String { rawValue }

        var rule: LatencyServer.FaultRule {
            switch self {
            case .retryAfterSeconds: .init(query: "page=2", status: 429, retryAfter: "2")
            case .retryAfterDate: .init(query: "page=2", status: 503, retryAfter: "{http_date+2}")
            case .xRateLimit: .init(query: "page=2", headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{unix+2}"])
            case .ietfRateLimit: .init(query: "page=2", headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "2"])
            }
        }

        /// The least time, in seconds, between that answer and the next request the server sees
        /// (an HTTP date and a Unix time are whole seconds: up to one less).
        var least: Double {
            switch self {
            case .retryAfterSeconds, .ietfRateLimit: 1.9
            case .retryAfterDate, .xRateLimit: 0.9
            }
        }
    }

    @Test(arguments: Pause.allCases, [3, 4])
    func everyFormOfAServersPauseHoldsTheNextRequest(pause: Pause, version: Int) throws {
        let server = try LatencyServer(.init(recordsPerPage: 10, pages: 4, faults: [pause.rule]))
        defer { server.stop() }
        let yaml = ConcurrencyTests.pipeline(.pages, url: server.url("/pages"), version: version,
                                             top: version == 4 ? "concurrency: 1" : "")
            .replacingOccurrences(of: "retries: 0", with: "retries: 2")
        let workspace = try ConcurrencyTests.run(yaml)
        #expect(try Self.exportedRows(workspace) == 40)
        let stats = try server.stats()
        let fired = try #require(stats.requests.firstIndex { $0.fault != nil }, "the rule did not fire")
        let next = try #require(stats.requests.indices.first { $0 > fired }, "no request after the pause")
        let gap = stats.requests[next].t - (stats.requests[fired].tEnd ?? stats.requests[fired].t)
        #expect(gap >= pause.least, "the next request came \(gap) s after the server asked for a pause")
        let waited = try ResumeTests.source(workspace)["waited_s"] as? Double ?? 0
        #expect(waited >= min(gap, pause.least) - 0.1, "waited_s \(waited), gap \(gap)")
    }

    // MARK: max_wait (rule 2) and resuming after it (rule 4)

    @Test func aResetPastMaxWaitStopsTheSourceWith69NamingTheHostAndWhenAndTheNextRunResumes() throws {
        let server = try RateLimitedServer(limit: "3 per minute", recordsPerPage: 10, pages: 6)
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", ConcurrencyTests.pipeline(.offset, url: server.url("/offset"), top: "concurrency: 2",
                                                                   extra: "    max_wait: 2s")
            // A request in flight when the budget ran out is refused; its retry waits for the reset.
            .replacingOccurrences(of: "retries: 0", with: "retries: 3"))
        let started = Date()
        let stopped = try workspace.run(["run", "items.yml", "--batch-size", "10", "--report", "out/report.json", "--progress", "never"])
        #expect(stopped.status == 69, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("127.0.0.1:\(server.baseURL.split(separator: ":").last!)"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("max_wait"), "\(stopped.stderr)")
        // When the budget comes back: the limiter's reset, about a minute from the first request.
        let when = try #require(stopped.stderr.firstMatch(of: /until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/).map { String($0.1) },
                                "\(stopped.stderr)")
        let back = try #require(ISO8601DateFormatter().date(from: when))
        #expect(back.timeIntervalSince(started) > 30 && back.timeIntervalSince(started) < 70, "\(when)")
        let report = try workspace.report()
        #expect(report["status"] as? String == "failed")
        #expect("\(report["error"] ?? "")".contains("max_wait"))
        // The three pages the budget allowed are saved, and the next run starts after them.
        try server.reset()
        let rerun = try workspace.run(["run", "items.yml", "--batch-size", "10", "--report", "out/report.json", "--progress", "never"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 3)
        #expect(try server.stats().requests.map(\.query).allSatisfy { !$0.contains("offset=0&") && !$0.hasSuffix("offset=0") })
        #expect(try Self.exportedRows(workspace) == 60)
    }

    // MARK: Order of work (rule 5)

    @Test func aBudgetTooSmallForTheConcurrencyKeepsTheSequentialOrder() throws {
        let items = ["a", "b", "c", "d"]
        let server = try RateLimitedServer(limit: "1000 per second", recordsPerPage: 10, pages: 3, items: items)
        defer { server.stop() }
        // One token every 0.2 s, twelve requests wanting to go at once: each token goes to the
        // request a sequential run would make first (earlier item, then earlier page).
        let yaml = ConcurrencyTests.pipeline(.offset, url: server.url("/items/${item}/offset"), top: "concurrency: 8",
                                             extra: "    for_each: [a, b, c, d]\n    rate_limit: { requests: 5, per: 1s, burst: 1 }")
        let concurrent = try ConcurrencyTests.run(yaml)
        let seen = try server.stats().requests.filter { $0.status == 200 }.map { request in
            "\(request.path.split(separator: "/")[1])@\(request.query.firstMatch(of: /offset=(\d+)/).map { String($0.1) } ?? "?")"
        }
        let sequentialOrder = items.flatMap { item in [0, 10, 20].map { "\(item)@\($0)" } }
        #expect(seen == sequentialOrder, "the server saw \(seen)")
        try server.reset()
        let sequential = try ConcurrencyTests.run(yaml, ["--concurrency", "1"])
        #expect(try ResumeTests.outcome(concurrent, .columns) == ResumeTests.outcome(sequential, .columns))
    }
}
