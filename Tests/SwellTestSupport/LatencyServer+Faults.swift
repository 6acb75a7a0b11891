extension LatencyServer {
    /// One fault rule of `latency_server.py` (its docstring says how rules match and fire):
    /// what the nth matching request gets instead of, or on top of, its page.
    ///
    /// Header values may hold `{unix+N}` (Unix seconds N from when it fires) and
    /// `{http_date+N}` (the same as an HTTP date).
    public struct FaultRule: Sendable, Encodable {
        /// Requests whose path starts with this (nil: every request).
        public var pathPrefix: String?
        /// Requests whose raw query contains this, e.g. `page=3`.
        public var query: String?
        /// The matching request it fires on, counted from 1 (default 1).
        public var nth: Int?
        /// How many times it fires (default 1; 0: on every match from the nth on).
        public var times: Int?
        /// Extra seconds before answering.
        public var delay: Double?
        /// Whether the request waits for ``LatencyServer/release()``.
        public var hold: Bool?
        /// The status answered instead of the page.
        public var status: Int?
        /// The body sent instead of the page (or the status's default error body).
        public var body: String?
        /// The `Retry-After` value.
        public var retryAfter: String?
        /// Extra response headers.
        public var headers: [String: String]?
        /// Send the head and half the body, then reset the connection.
        public var resetMidBody: Bool?
        /// Close the connection without answering.
        public var close: Bool?

        /// A rule; give what it matches and what it does.
        public init(pathPrefix: String? = nil, query: String? = nil, nth: Int? = nil, times: Int? = nil, delay: Double? = nil,
                    hold: Bool? = nil, status: Int? = nil, body: String? = nil, retryAfter: String? = nil,
                    headers: [String: String]? = nil, resetMidBody: Bool? = nil, close: Bool? = nil) {
            self.pathPrefix = pathPrefix
            self.query = query
            self.nth = nth
            self.times = times
            self.delay = delay
            self.hold = hold
            self.status = status
            self.body = body
            self.retryAfter = retryAfter
            self.headers = headers
            self.resetMidBody = resetMidBody
            self.close = close
        }

        enum CodingKeys: String, CodingKey {
            case pathPrefix = "path_prefix", query, nth, times, delay, hold, status, body
            case retryAfter = "retry_after", headers, resetMidBody = "reset_mid_body", close
        }
    }
}
