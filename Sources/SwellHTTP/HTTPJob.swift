import Foundation

/// One request for ``HTTPEngine``: what to send (built when it is about to go), in which
/// order against the others, under which budgets, and whom to tell.
public struct HTTPJob: Sendable {
    /// Lower goes first, compared element by element: the order a sequential run would make
    /// the requests (item, then page), which budgets and caps keep.
    public var priority: [Int]
    /// `scheme://host:port` the request goes to: the server's holds and `hostCap` apply by it.
    public var origin: String
    /// At most this many of the engine's requests to `origin` at once; nil: no cap of its own.
    public var hostCap: Int?
    /// The budgets a request takes a token from, all at once (its host's and its source's).
    public var buckets: [TokenBucketSpec]
    /// Retries of connection failures, timeouts, 429 and 5xx.
    public var retry: RetryPolicy
    /// Seconds it may be held by budgets and server holds in all; a longer wait fails it
    /// with ``HTTPBudgetExceeded``.
    public var maxWait: Double
    /// Builds the request, on the engine's thread, when budgets let it go (credentials are
    /// fresh then); what it throws is the job's failure.
    public var prepare: @Sendable () throws -> HTTPRequest
    /// Asked after a 401: true means credentials were renewed and the request is built and sent
    /// once more (at most once a job); nil: a 401 is a failure like any other status.
    public var renewCredentials: (@Sendable () -> Bool)?
    /// Told the outcome, on the engine's thread (keep it short).
    public var completion: @Sendable (HTTPJobResult) -> Void

    /// Creates a job.
    public init(priority: [Int], origin: String, hostCap: Int? = nil, buckets: [TokenBucketSpec] = [], retry: RetryPolicy,
                maxWait: Double = 900, prepare: @escaping @Sendable () throws -> HTTPRequest,
                renewCredentials: (@Sendable () -> Bool)? = nil, completion: @escaping @Sendable (HTTPJobResult) -> Void) {
        self.priority = priority
        self.origin = origin
        self.hostCap = hostCap
        self.buckets = buckets
        self.retry = retry
        self.maxWait = maxWait
        self.prepare = prepare
        self.renewCredentials = renewCredentials
        self.completion = completion
    }

    /// A job's number, to cancel it.
    public typealias ID = Int
}

/// What became of an ``HTTPJob``.
public struct HTTPJobResult: Sendable {
    /// The response (2xx or 304), or the failure: an ``HTTPError``, ``HTTPBudgetExceeded``,
    /// ``HTTPJobCancelled`` or what `prepare` threw.
    public var outcome: Result<HTTPResponse, any Error>
    /// The response's body (decoded), whole.
    public var body: [UInt8]
    /// Retries it took (also when it failed after them).
    public var retries: Int
    /// HTTP requests it made: attempts and redirect hops.
    public var requests: Int
    /// When budgets and server holds held it: intervals of the engine's clock (``HTTPEngine/now``).
    public var held: [ClosedRange<Double>]
}

/// A job that would have waited past its `maxWait` for a budget or a server's reset.
public struct HTTPBudgetExceeded: Error, Sendable, CustomStringConvertible {
    /// The host whose budget (or the source's bucket) holds it, as `scheme://host:port`.
    public var origin: String
    /// When the budget comes back (wall clock).
    public var until: Date
    /// What holds it: "the server's reset" or "the rate limit".
    public var reason: String
    /// The longest wait allowed, in seconds.
    public var maxWait: Double

    /// Creates the error.
    public init(origin: String, until: Date, reason: String, maxWait: Double) {
        self.origin = origin
        self.until = until
        self.reason = reason
        self.maxWait = maxWait
    }

    public var description: String {
        let when = ISO8601DateFormatter().string(from: until)
        return "\(origin): \(reason) holds requests until \(when), longer than max_wait (\(Int(maxWait)) s)"
    }
}

/// A job cancelled before it completed (its source stopped).
public struct HTTPJobCancelled: Error, Sendable {}
