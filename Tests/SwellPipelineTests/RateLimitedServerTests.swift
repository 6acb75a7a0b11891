import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The real rate limiter the "Real networks" tests run against (Pipeline file reference,
/// "Real networks", point 2): Flask with flask-limiter (`Tests/servers/rate_limited_server.py`)
/// refuses what goes over its limit with 429, and its `X-RateLimit-*` and `Retry-After`
/// headers say when the budget comes back, in a form a client can read.
@Suite struct RateLimitedServerTests {
    @Test(arguments: [(RateLimitedServer.Strategy.fixedWindow, RateLimitedServer.RetryAfter.deltaSeconds),
                      (.movingWindow, .httpDate)])
    func aBurstOverTheLimitGets429sWithHeadersThatParse(strategy: RateLimitedServer.Strategy,
                                                        retryAfter: RateLimitedServer.RetryAfter) throws {
        let server = try RateLimitedServer(limit: "20 per 10 seconds", strategy: strategy, retryAfter: retryAfter, items: ["a"])
        let http = TestHTTP()
        // 25 requests at once (5 threads × 5): well inside the ten-second window even on a loaded
        // machine (the suite runs in parallel; a one-second window was missed there), so at most 20 pass.
        let answers = onThreads(5) { thread in
            (0..<5).map { page in try? http.send("GET", server.url("/items/a/pages?page=\(thread * 5 + page + 1)")) }
        }.flatMap { $0 }
        let now = Date().timeIntervalSince1970
        let statuses = answers.map { $0?.status ?? -1 }
        let refused = answers.compactMap { $0 }.filter { $0.status == 429 }
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(statuses)")
        let stats = try server.stats()
        let span = (stats.requests.map(\.t).max() ?? 0) - (stats.requests.map(\.t).min() ?? 0)
        #expect(span < 10, "the burst took \(span) s: too slow a machine to check a limit per ten seconds")
        #expect(refused.count >= 5, "\(statuses)")
        #expect(stats.count == 25 && stats.count429 == refused.count)
        #expect(stats.maxAccepted(within: 10) <= 20)
        for answer in refused {
            #expect(answer.header("X-RateLimit-Limit") == "20")
            #expect(answer.header("X-RateLimit-Remaining") == "0")
            let reset = Double(answer.header("X-RateLimit-Reset") ?? "") ?? 0  // Unix seconds
            #expect(reset >= now - 1 && reset <= now + 11, "X-RateLimit-Reset \(reset) at \(now)")
            let wait = answer.header("Retry-After") ?? ""
            switch retryAfter {
            case .deltaSeconds:
                #expect((0...11).contains(Int(wait) ?? -1), "Retry-After \(wait)")
            case .httpDate:
                let date = Self.httpDate(wait)?.timeIntervalSince1970 ?? 0
                #expect(date >= now - 1 && date <= now + 11, "Retry-After \(wait) at \(now)")
            }
        }
        // The budget comes back: after a reset of the limiter, a request passes again.
        try server.reset()
        let again = try server.get("/offset?offset=0&limit=5")
        #expect(again.status == 200 && again.header("X-RateLimit-Remaining") == "19")
        #expect(((again.json as? [String: Any])?["data"] as? [Any])?.count == 5)
    }

    /// RFC 9110's IMF-fixdate (`Wed, 02 Dec 2026 00:46:28 GMT`), as flask-limiter writes it.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
