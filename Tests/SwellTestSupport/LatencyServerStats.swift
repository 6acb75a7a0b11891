/// What `latency_server.py` saw (`GET /_stats`): every request since the start or the last
/// reset, in arrival order, and the most it served at once.
public struct LatencyServerStats: Sendable, Decodable {
    /// One request as the server saw it.
    public struct Request: Sendable, Decodable {
        /// Seconds since the server started (monotonic) when it arrived.
        public let t: Double
        /// When its answer was written (nil while it is being served).
        public let tEnd: Double?
        /// `GET`, `POST`, ….
        public let method: String
        /// The path, e.g. `/items/a/offset`.
        public let path: String
        /// The raw query, e.g. `offset=20&limit=10`.
        public let query: String
        /// The request's header fields as sent (last one wins).
        public let headers: [String: String]
        /// The status answered (0 for a connection closed without answer; nil while in flight).
        public let status: Int?
        /// The index of the fault rule that fired on it.
        public let fault: Int?

        /// The query's parameters (the last of a repeated name).
        public var parameters: [String: String] {
            var result: [String: String] = [:]
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                result[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return result
        }

        /// The header `name`, in any case.
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        enum CodingKeys: String, CodingKey {
            case t, tEnd = "t_end", method, path, query, headers, status, fault
        }
    }

    /// How often a fault rule matched and fired.
    public struct FaultCount: Sendable, Decodable {
        /// Requests it matched.
        public let seen: Int
        /// Times it fired.
        public let fired: Int
    }

    /// The wall clock (Unix seconds) when the server started: `t` 0.
    public let startedUnix: Double
    /// Requests seen.
    public let count: Int
    /// The most requests it was serving at one moment.
    public let maxInFlight: Int
    /// Requests being served now.
    public let inFlight: Int
    /// Requests held by a `hold` rule now.
    public let held: Int
    /// The requests, in arrival order.
    public let requests: [Request]
    /// The fault rules' counts, in the rules' order.
    public let faults: [FaultCount]

    /// The requests whose path starts with `prefix`.
    public func requests(under prefix: String) -> [Request] {
        requests.filter { $0.path.hasPrefix(prefix) }
    }

    /// The largest number of requests that arrived within any `seconds` (a sliding window).
    public func maxArrivals(within seconds: Double) -> Int {
        Self.maxCount(of: requests.map(\.t), within: seconds)
    }

    /// The largest number of `times` inside any window of `seconds` (one that starts at one of them).
    public static func maxCount(of times: [Double], within seconds: Double) -> Int {
        let sorted = times.sorted()
        var best = 0
        var first = 0
        for last in sorted.indices {
            while sorted[last] - sorted[first] >= seconds { first += 1 }
            best = max(best, last - first + 1)
        }
        return best
    }

    enum CodingKeys: String, CodingKey {
        case startedUnix = "started_unix", count, maxInFlight = "max_in_flight", inFlight = "in_flight", held, requests, faults
    }
}
