import Foundation
import SwellHTTP
import SwellTestSupport
import SwellLocks
import Testing

/// The run's HTTP engine against real servers (Pipeline file reference, "Real networks"):
/// the run's concurrency and a host's cap bound what is in flight; held jobs go in priority
/// order; a server's `Retry-After` and `X-RateLimit-*` hold every request to its host; a wait
/// past `maxWait` fails with ``HTTPBudgetExceeded``; cancelled jobs complete with
/// ``HTTPJobCancelled``; redirects are followed; a 401 is retried once after a renewal.
@Suite(.serialized) struct HTTPEngineTests {
    static func engine(concurrency: Int) throws -> HTTPEngine {
        try HTTPEngine(HTTPEngine.Configuration(concurrency: concurrency, userAgent: testUserAgent))
    }

    /// A job for `url` reporting to `outcomes` under `name`.
    static func job(_ url: String, name: String, priority: [Int] = [0], hostCap: Int? = nil, buckets: [TokenBucketSpec] = [],
                    retries: Int = 0, maxWait: Double = 900, headers: @escaping @Sendable () -> [HTTPHeader] = { [] },
                    renew: (@Sendable () -> Bool)? = nil, into outcomes: Outcomes) -> HTTPJob {
        HTTPJob(priority: priority, origin: HTTPClient.origin(of: url) ?? url, hostCap: hostCap, buckets: buckets,
                retry: RetryPolicy(retries: retries, baseDelay: 0.01, maxDelay: 0.05), maxWait: maxWait,
                prepare: {
                    var request = HTTPRequest(url: url)
                    request.headers = headers()
                    request.timeout = 20
                    return request
                },
                renewCredentials: renew,
                completion: { outcomes.add(name, $0) })
    }

    /// The wall clock (Unix seconds) when a latency server saw `request`.
    static func unix(_ request: LatencyServerStats.Request, _ stats: LatencyServerStats) -> Double {
        stats.startedUnix + request.t
    }

    // MARK: Concurrency and caps

    @Test func theRunsConcurrencyCapsRequestsInFlight() throws {
        let server = try LatencyServer(.init(delay: 0.2))
        let engine = try Self.engine(concurrency: 3)
        let outcomes = Outcomes()
        for page in 1...9 { engine.submit(Self.job(server.url("/pages?page=\(page)"), name: "\(page)", into: outcomes)) }
        let results = try #require(outcomes.wait(for: 9))
        #expect(results.values.allSatisfy { $0.response?.status == 200 })
        let stats = try server.stats()
        #expect(stats.count == 9)
        #expect(stats.maxInFlight == 3, "\(stats.maxInFlight) in flight at most")
        // At least three rounds of 0.2 s (never more than three at once). That more than one ran at
        // a time is the maxInFlight check above: no upper bound on the wall time, which a loaded CI stretches.
        let span = (stats.requests.compactMap(\.tEnd).max() ?? 0) - (stats.requests.map(\.t).min() ?? 0)
        #expect(span >= 0.58, "\(span) s")
    }

    @Test func aHostsCapHoldsItsHostAndNotTheOthers() throws {
        let capped = try LatencyServer(.init(delay: 0.25))
        let free = try LatencyServer(.init(delay: 0.25))
        let engine = try Self.engine(concurrency: 8)
        let outcomes = Outcomes()
        for page in 1...6 {
            engine.submit(Self.job(capped.url("/pages?page=\(page)"), name: "c\(page)", priority: [0, page], hostCap: 2, into: outcomes))
        }
        for page in 1...6 {
            engine.submit(Self.job(free.url("/pages?page=\(page)"), name: "f\(page)", priority: [1, page], into: outcomes))
        }
        let results = try #require(outcomes.wait(for: 12))
        #expect(results.values.allSatisfy { $0.response?.status == 200 })
        #expect(try capped.stats().maxInFlight == 2)
        // The capped host's jobs waiting for their cap do not hold the other host's back.
        let other = try free.stats().maxInFlight
        #expect(other >= 4 && other <= 6, "\(other)")
    }

    // MARK: Order of work

    /// Jobs held by a bucket go in priority order (item, then page), whatever order they came in.
    @Test func jobsHeldByABucketGoInPriorityOrder() throws {
        let server = try LatencyServer()
        let engine = try Self.engine(concurrency: 8)
        let outcomes = Outcomes()
        let bucket = TokenBucketSpec(key: "source:s", tokensPerSecond: 4, burst: 1)
        // The first takes the bucket's one token: the next comes 0.25 s later, when every other
        // job below is waiting for it.
        engine.submit(Self.job(server.url("/pages?page=1&p=first"), name: "first", priority: [-1], buckets: [bucket], into: outcomes))
        let scrambled = [[2, 1], [0, 3], [1, 0], [0, 1], [2, 0], [1, 2], [0, 2], [1, 1]]
        for priority in scrambled {
            let tag = priority.map(String.init).joined(separator: "-")
            engine.submit(Self.job(server.url("/pages?page=1&p=\(tag)"), name: tag, priority: priority, buckets: [bucket], into: outcomes))
        }
        let results = try #require(outcomes.wait(for: 9, timeout: 30))
        #expect(results.values.allSatisfy { $0.response?.status == 200 })
        let stats = try server.stats()
        let order = stats.requests.map { $0.parameters["p"] ?? "?" }
        let expected = ["first"] + scrambled.sorted { $0.lexicographicallyPrecedes($1) }.map { $0.map(String.init).joined(separator: "-") }
        #expect(order == expected)
        // And spaced by the bucket.
        let times = stats.requests.map(\.t)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 0.2 }, "\(gaps)")
        // Each job but the first was held, and says so.
        #expect(results.filter { $0.key != "first" }.values.allSatisfy { !$0.held.isEmpty })
    }

    // MARK: Servers' holds

    /// A 429 with `Retry-After: 1`: the retry waits that second (a retry, counted), and so does
    /// every other request to the host meanwhile.
    @Test func a429WithRetryAfterHoldsTheHostAndTheRetrySucceeds() throws {
        let server = try LatencyServer(.init(faults: [.init(pathPrefix: "/pages", status: 429, retryAfter: "1")]))
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "a", priority: [0], retries: 2, into: outcomes))
        engine.submit(Self.job(server.url("/pages?page=2"), name: "b", priority: [1], retries: 2, into: outcomes))
        let results = try #require(outcomes.wait(for: 2))
        let a = try #require(results["a"]), b = try #require(results["b"])
        #expect(a.response?.status == 200 && a.retries == 1 && a.requests == 2)
        #expect(b.response?.status == 200 && b.retries == 0 && b.requests == 1)
        let stats = try server.stats()
        #expect(stats.requests.map(\.status) == [429, 200, 200])
        #expect(stats.requests.map { $0.parameters["page"] } == ["1", "1", "2"])
        let refused = try #require(stats.requests.first?.tEnd)
        // Not the policy's backoff (at most 0.05 s here): the server's second.
        #expect(stats.requests[1].t - refused >= 0.95, "retry \(stats.requests[1].t - refused) s after the 429")
        #expect(stats.requests[2].t - refused >= 0.95, "next request \(stats.requests[2].t - refused) s after the 429")
        #expect(a.held.reduce(0) { $0 + $1.upperBound - $1.lowerBound } >= 0.9)
    }

    /// A 503 whose `Retry-After` is an HTTP date: nothing goes to the host before that date.
    @Test func a503WithAnHTTPDateHoldsUntilThatDate() throws {
        let server = try LatencyServer(.init(faults: [.init(pathPrefix: "/offset", status: 503, retryAfter: "{http_date+2}")]))
        let engine = try Self.engine(concurrency: 4)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/offset?offset=0"), name: "a", retries: 1, into: outcomes))
        let results = try #require(outcomes.wait(for: 1))
        #expect(results["a"]?.response?.status == 200 && results["a"]?.retries == 1)
        let stats = try server.stats()
        #expect(stats.requests.map(\.status) == [503, 200])
        // The date has whole seconds: between 1 and 2 s after the 503.
        let refusedUnix = Self.unix(stats.requests[0], stats)
        let dateUnix = floor(refusedUnix + 2)
        #expect(Self.unix(stats.requests[1], stats) >= dateUnix - 0.05, "retried before the date")
    }

    /// `X-RateLimit-Remaining: 0` on a page that succeeded: every later request to that host
    /// waits for the reset (Unix seconds); a request to another host does not.
    @Test func xRateLimitRemainingZeroHoldsEveryRequestToTheHostUntilTheReset() throws {
        let server = try LatencyServer(.init(faults: [
            .init(pathPrefix: "/pages", query: "page=1", headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{unix+2}"]),
        ]))
        let other = try LatencyServer()
        let engine = try Self.engine(concurrency: 8)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "first", into: outcomes))
        let first = try #require(outcomes.wait(for: 1)?["first"])
        let reset = try #require(first.response?.header("x-ratelimit-reset").flatMap(Double.init))
        for page in 2...4 { engine.submit(Self.job(server.url("/pages?page=\(page)"), name: "\(page)", priority: [page], into: outcomes)) }
        engine.submit(Self.job(other.url("/pages?page=1"), name: "other", into: outcomes))
        let results = try #require(outcomes.wait(for: 5))
        #expect(results.values.allSatisfy { $0.response?.status == 200 })
        let stats = try server.stats()
        #expect(stats.count == 4)
        for request in stats.requests.dropFirst() {
            #expect(Self.unix(request, stats) >= reset - 0.05, "page \(request.parameters["page"] ?? "?") went before the reset")
        }
        let otherStats = try other.stats()
        #expect(Self.unix(otherStats.requests[0], otherStats) < reset - 0.5, "another host was held too")
        #expect(results["other"]?.held.isEmpty == true)
        #expect(results["2"]?.held.isEmpty == false && results["2"]?.retries == 0)
    }

    /// The IETF form on a 429: the retry waits `RateLimit-Reset` seconds.
    @Test func ietfRateLimitResetHoldsTheRetry() throws {
        let server = try LatencyServer(.init(faults: [
            .init(status: 429, headers: ["RateLimit-Limit": "5", "RateLimit-Remaining": "0", "RateLimit-Reset": "1"]),
        ]))
        let engine = try Self.engine(concurrency: 2)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "a", retries: 1, into: outcomes))
        let a = try #require(outcomes.wait(for: 1)?["a"])
        #expect(a.response?.status == 200 && a.retries == 1)
        let stats = try server.stats()
        #expect(stats.requests.count == 2)
        #expect(stats.requests[1].t - (stats.requests[0].tEnd ?? 0) >= 0.95)
    }

    /// A 5xx within the retries is retried; past them the job fails, its retries counted.
    @Test func serverErrorsAreRetriedWithinTheRetriesOnly() throws {
        let server = try LatencyServer(.init(faults: [.init(pathPrefix: "/pages", query: "page=1", times: 2, status: 502),
                                                      .init(pathPrefix: "/pages", query: "page=2", times: 0, status: 500)]))
        let engine = try Self.engine(concurrency: 2)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "ok", retries: 2, into: outcomes))
        engine.submit(Self.job(server.url("/pages?page=2"), name: "fails", retries: 2, into: outcomes))
        let results = try #require(outcomes.wait(for: 2))
        #expect(results["ok"]?.response?.status == 200 && results["ok"]?.retries == 2 && results["ok"]?.requests == 3)
        let failure = results["fails"]?.error as? HTTPError
        #expect(failure?.kind == .status(500) && results["fails"]?.retries == 2 && results["fails"]?.requests == 3)
    }

    // MARK: max_wait

    /// A server that asks for 30 s when the job may wait 1 s: it fails at once, naming the host
    /// and when the budget comes back, without a second request.
    @Test func aServersWaitPastMaxWaitFailsFastNamingTheHostAndTheTime() throws {
        let server = try LatencyServer(.init(faults: [.init(times: 0, status: 429, retryAfter: "30")]))
        let engine = try Self.engine(concurrency: 2)
        let outcomes = Outcomes()
        let started = Date()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "a", retries: 5, maxWait: 1, into: outcomes))
        let a = try #require(outcomes.wait(for: 1)?["a"])
        #expect(Date().timeIntervalSince(started) < 5)
        let failure = try #require(a.error as? HTTPBudgetExceeded, "\(String(describing: a.error))")
        #expect(failure.origin == "http://127.0.0.1:\(server.port)")
        let comesBack = failure.until.timeIntervalSince(started)
        #expect(comesBack > 28 && comesBack < 33, "\(comesBack)")
        #expect(failure.maxWait == 1)
        #expect(failure.description.contains("127.0.0.1:\(server.port)"))
        #expect(failure.description.contains(ISO8601DateFormatter().string(from: failure.until)))
        #expect(try server.stats().count == 1)
    }

    /// A bucket that gives a token every 10 s, to a job that may wait 1 s.
    @Test func aBucketWaitPastMaxWaitFails() throws {
        let server = try LatencyServer()
        let engine = try Self.engine(concurrency: 2)
        let outcomes = Outcomes()
        let bucket = TokenBucketSpec(key: "host:slow", tokensPerSecond: 0.1, burst: 1)
        engine.submit(Self.job(server.url("/pages?page=1"), name: "a", buckets: [bucket], maxWait: 1, into: outcomes))
        #expect(try #require(outcomes.wait(for: 1)?["a"]).response?.status == 200)
        let started = Date()
        engine.submit(Self.job(server.url("/pages?page=2"), name: "b", buckets: [bucket], maxWait: 1, into: outcomes))
        let b = try #require(outcomes.wait(for: 2)?["b"])
        #expect(Date().timeIntervalSince(started) < 5)
        let failure = try #require(b.error as? HTTPBudgetExceeded, "\(String(describing: b.error))")
        #expect(failure.origin == "http://127.0.0.1:\(server.port)")
        let comesBack = failure.until.timeIntervalSince(started)
        #expect(comesBack > 8 && comesBack < 11, "\(comesBack)")
        #expect(try server.stats().count == 1)
    }

    @Test func waitingBehindEarlierJobsOfTheBucketDoesNotCountAgainstMaxWait() throws {
        let server = try LatencyServer()
        let engine = try Self.engine(concurrency: 8)
        let outcomes = Outcomes()
        // 8 jobs at 4/s: the last waits ~1.75 s in all, but never more than 0.25 s first in line.
        let bucket = TokenBucketSpec(key: "host:four", tokensPerSecond: 4, burst: 1)
        for page in 1...8 {
            engine.submit(Self.job(server.url("/pages?page=\(page)"), name: "\(page)", priority: [page], buckets: [bucket],
                                   maxWait: 1, into: outcomes))
        }
        let results = try #require(outcomes.wait(for: 8))
        for page in 1...8 {
            #expect(results["\(page)"]?.response?.status == 200, "job \(page): \(String(describing: results["\(page)"]?.error))")
        }
        // The rate held: 8 requests spaced by a quarter second take at least 1.75 s at the server.
        let times = try server.stats().requests.map(\.t)
        #expect(times.count == 8 && (times.max() ?? 0) - (times.min() ?? 0) >= 1.7, "\(times)")
    }

    // MARK: Cancellation

    @Test func cancelledJobsCompleteWithHTTPJobCancelled() throws {
        let server = try LatencyServer(.init(faults: [.init(pathPrefix: "/pages", times: 0, hold: true)]))
        defer { try? server.release() }
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        let inFlight = engine.submit(Self.job(server.url("/pages?page=1"), name: "in flight", priority: [0], into: outcomes))
        let waiting = engine.submit(Self.job(server.url("/pages?page=2"), name: "waiting", priority: [1], into: outcomes))
        let kept = engine.submit(Self.job(server.url("/offset"), name: "kept", priority: [2], into: outcomes))
        #expect(try server.wait(requests: 1, held: 1))
        #expect(engine.inFlight == 1)
        engine.cancel([inFlight, waiting])
        let results = try #require(outcomes.wait(for: 3))
        #expect(results["in flight"]?.error is HTTPJobCancelled)
        #expect(results["waiting"]?.error is HTTPJobCancelled)
        // The slot of the held request, given back when its grace ends, goes to the next job.
        #expect(results["kept"]?.response?.status == 200)
        _ = kept
        let paths = try server.stats().requests.map { $0.path + "?" + $0.query }
        #expect(paths == ["/pages?page=1", "/offset?"], "\(paths)")
    }

    @Test func aCancelledRequestInFlightHoldsItsSlotUntilItsAnswerEnds() throws {
        let server = try LatencyServer(.init(delay: 0.3))
        defer { server.stop() }
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        let first = engine.submit(Self.job(server.url("/pages?page=1"), name: "cancelled", priority: [0], into: outcomes))
        engine.submit(Self.job(server.url("/pages?page=2"), name: "next", priority: [1], into: outcomes))
        #expect(try server.wait(requests: 1))
        engine.cancel([first])
        let results = try #require(outcomes.wait(for: 2))
        #expect(results["cancelled"]?.error is HTTPJobCancelled)
        #expect(results["next"]?.response?.status == 200)
        // The server never serves two of a one-request run at once, and the connection is kept.
        let stats = try server.stats()
        #expect(stats.maxInFlight == 1)
        let requests = stats.requests
        #expect(requests.count == 2 && requests[1].t >= (requests[0].tEnd ?? .infinity), "\(requests.map { ($0.t, $0.tEnd) })")
    }

    @Test func stoppingTheEngineCancelsWhatIsLeft() throws {
        let server = try LatencyServer(.init(faults: [.init(times: 0, hold: true)]))
        defer { try? server.release() }
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.url("/pages?page=1"), name: "a", into: outcomes))
        engine.submit(Self.job(server.url("/pages?page=2"), name: "b", into: outcomes))
        #expect(try server.wait(requests: 1, held: 1))
        engine.stop()
        let results = try #require(outcomes.wait(for: 2, timeout: 5))
        #expect(results.values.allSatisfy { $0.error is HTTPJobCancelled })
    }

    // MARK: Redirects and credentials

    @Test func redirectsAreFollowedHopByHop() throws {
        let landing = try LoopbackHTTPServer { _ in .json("[42]") }
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/start": .init(status: 302, headers: [("Location", "/middle")])
            case "/middle": .init(status: 301, headers: [("Location", landing.baseURL + "/end")])
            default: .json("[]", status: 404)
            }
        }
        let engine = try Self.engine(concurrency: 2)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.baseURL + "/start", name: "a", headers: { [HTTPHeader(name: "Authorization", value: "Bearer s3cret")] },
                               into: outcomes))
        let a = try #require(outcomes.wait(for: 1)?["a"])
        #expect(a.response?.status == 200 && a.text == "[42]")
        #expect(a.response?.effectiveURL == landing.baseURL + "/end")
        #expect(a.requests == 3 && a.retries == 0)
        #expect(server.requests.map(\.path) == ["/start", "/middle"])
        #expect(server.requests.allSatisfy { $0.headers["authorization"] == "Bearer s3cret" })
        // Another origin: the credential stays behind.
        #expect(landing.requests.map(\.path) == ["/end"] && landing.requests[0].headers["authorization"] == nil)
    }

    @Test func a401IsSentOnceMoreAfterTheCredentialsAreRenewed() throws {
        let server = try LoopbackHTTPServer { request in
            request.headers["authorization"] == "Bearer fresh" ? .json("[1]") : .json(#"{"error":"expired"}"#, status: 401)
        }
        let token = Shared("stale")
        let renewals = Shared(0)
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.baseURL + "/p", name: "a", headers: { [HTTPHeader(name: "Authorization", value: "Bearer " + token.withLock { $0 })] },
                               renew: {
                                   renewals.withLock { $0 += 1 }
                                   token.withLock { $0 = "fresh" }
                                   return true
                               }, into: outcomes))
        let a = try #require(outcomes.wait(for: 1)?["a"])
        #expect(a.response?.status == 200 && a.text == "[1]")
        #expect(renewals.withLock { $0 } == 1 && a.requests == 2 && a.retries == 0)
        #expect(server.requests.map { $0.headers["authorization"] } == ["Bearer stale", "Bearer fresh"])
    }

    @Test func a401AfterTheRenewalFails() throws {
        let server = try LoopbackHTTPServer { _ in .json(#"{"error":"no"}"#, status: 401) }
        let renewals = Shared(0)
        let engine = try Self.engine(concurrency: 1)
        let outcomes = Outcomes()
        engine.submit(Self.job(server.baseURL + "/p", name: "renewed", retries: 3, renew: {
            renewals.withLock { $0 += 1 }
            return true
        }, into: outcomes))
        engine.submit(Self.job(server.baseURL + "/q", name: "plain", retries: 3, into: outcomes))
        let results = try #require(outcomes.wait(for: 2))
        #expect((results["renewed"]?.error as? HTTPError)?.kind == .status(401))
        #expect(renewals.withLock { $0 } == 1 && results["renewed"]?.requests == 2)
        // Without a renewal a 401 is not retried at all.
        #expect((results["plain"]?.error as? HTTPError)?.kind == .status(401) && results["plain"]?.requests == 1)
        #expect(server.requests.count == 3)
    }
}

/// A value behind a lock, for closures the engine calls on its thread.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: LockedValue<Value>
    init(_ value: Value) { mutex = LockedValue(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

/// The results of an engine's jobs by name, told on the engine's thread.
final class Outcomes: Sendable {
    private let results = LockedValue<[String: HTTPJobResult]>([:])
    private let changed = NSCondition()

    func add(_ name: String, _ result: HTTPJobResult) {
        changed.lock()
        results.withLock { $0[name] = result }
        changed.broadcast()
        changed.unlock()
    }

    /// The results once `count` jobs completed; nil when `timeout` seconds passed first.
    func wait(for count: Int, timeout: Double = 20) -> [String: HTTPJobResult]? {
        let deadline = Date().addingTimeInterval(timeout)
        changed.lock()
        defer { changed.unlock() }
        while results.withLock({ $0.count }) < count {
            if !changed.wait(until: deadline) { break }
        }
        let now = results.withLock { $0 }
        return now.count >= count ? now : nil
    }
}

extension HTTPJobResult {
    var response: HTTPResponse? { try? outcome.get() }
    var error: (any Error)? {
        if case .failure(let error) = outcome { return error }
        return nil
    }
    var text: String { String(decoding: body, as: UTF8.self) }
}
