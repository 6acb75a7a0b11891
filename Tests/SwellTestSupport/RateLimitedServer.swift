/// `Tests/servers/rate_limited_server.py`, started for a test: a paged JSON API behind
/// flask-limiter (Flask, from PyPI, in `.build/test-python`; served by waitress), with the
/// limiter's `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` and
/// `Retry-After` headers on every answer: a rate limiter that Swell's authors did not write.
///
/// Endpoints as ``LatencyServer``'s `/offset`, `/pages` and `/link` (also under
/// `/items/<item>/`), without latency or faults. Stops with the value (or at `stop()`).
public final class RateLimitedServer: Sendable {
    /// flask-limiter's strategies.
    public enum Strategy: String, Sendable {
        /// Windows of fixed length, starting at the first request of each.
        case fixedWindow = "fixed-window"
        /// At most the limit within any window of the period.
        case movingWindow = "moving-window"
        /// Fixed windows weighted by the previous one.
        case slidingWindowCounter = "sliding-window-counter"
    }

    /// How `Retry-After` is written.
    public enum RetryAfter: String, Sendable {
        /// Whole seconds.
        case deltaSeconds = "delta-seconds"
        /// An HTTP date.
        case httpDate = "http-date"
    }

    /// The running script.
    public let script: ScriptServer
    private let http = TestHTTP()

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { script.baseURL }

    /// Starts the server with `limit` in flask-limiter's notation (`"20 per second"`,
    /// `"100/minute"`). `key`: whose budget a request spends — `remote` (the client's
    /// address), `global` (one for all) or `header:NAME` (one per value of that header).
    public init(limit: String, strategy: Strategy = .fixedWindow, retryAfter: RetryAfter = .deltaSeconds, key: String = "remote",
                recordsPerPage: Int = 10, pages: Int = 10, items: [String] = []) throws {
        var arguments = ["--limit", limit, "--strategy", strategy.rawValue, "--retry-after", retryAfter.rawValue, "--key", key,
                         "--records-per-page", String(recordsPerPage), "--pages", String(pages)]
        if !items.isEmpty { arguments += ["--items", items.joined(separator: ",")] }
        script = try ScriptServer(script: "rate_limited_server.py", arguments: arguments, interpreter: .testEnvironment)
    }

    /// The URL of `pathAndQuery` on this server.
    public func url(_ pathAndQuery: String) -> String { baseURL + pathAndQuery }

    /// One request to the server, answered with any status.
    public func get(_ pathAndQuery: String, headers: [String: String] = [:]) throws -> TestHTTPResponse {
        try http.send("GET", url(pathAndQuery), headers: headers)
    }

    /// Every request since the start or the last ``reset()``.
    public func stats() throws -> Stats {
        try http.decode(Stats.self, "GET", url("/_stats"))
    }

    /// Forgets the requests and empties the limiter's windows.
    public func reset() throws {
        _ = try http.send("POST", url("/_reset"))
    }

    /// Stops the server.
    public func stop() { script.stop() }

    /// What the server saw (`GET /_stats`).
    public struct Stats: Sendable, Decodable {
        /// One request.
        public struct Request: Sendable, Decodable {
            /// Seconds since the server started (monotonic).
            public let t: Double
            /// The wall clock (Unix seconds) when it arrived.
            public let tUnix: Double
            /// The path.
            public let path: String
            /// The raw query.
            public let query: String
            /// The status answered (429 when the limiter refused it).
            public let status: Int
            /// The `X-RateLimit-Remaining` it was sent.
            public let remaining: String?

            enum CodingKeys: String, CodingKey {
                case t, tUnix = "t_unix", path, query, status, remaining
            }
        }

        /// The wall clock when the server started.
        public let startedUnix: Double
        /// Requests answered.
        public let count: Int
        /// Of them, refused with 429.
        public let count429: Int
        /// The most it served at once.
        public let maxInFlight: Int
        /// The requests, in the order they were answered.
        public let requests: [Request]

        /// The largest number of requests answered 200 within any `seconds`.
        public func maxAccepted(within seconds: Double) -> Int {
            LatencyServerStats.maxCount(of: requests.filter { $0.status != 429 }.map(\.t), within: seconds)
        }

        enum CodingKeys: String, CodingKey {
            case startedUnix = "started_unix", count, count429 = "count_429", maxInFlight = "max_in_flight", requests
        }
    }
}
