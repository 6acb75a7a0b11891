/// A token bucket (`rate_limit: { requests, per, burst }`, Pipeline file reference version 4):
/// `requests` tokens every `per` seconds, at most `burst` saved up. A request takes one token,
/// and waits for it when there is none. With `burst: 1` (the default) requests are spaced
/// evenly, `per / requests` apart, so no window of `per` seconds holds more than
/// `requests + 1` of them.
public struct RateLimit: Sendable, Equatable {
    /// Tokens given every `per` seconds (`requests`, at least 1).
    public var requests: Int
    /// The period, in seconds (`per`: a duration such as `1s`, `1m`, `1h`).
    public var per: Double
    /// The most tokens the bucket holds (`burst`, at least 1; default 1): as many requests may
    /// go at once after a quiet spell.
    public var burst: Int

    /// A bucket of `requests` per `per` seconds holding at most `burst`.
    public init(requests: Int, per: Double, burst: Int = 1) {
        self.requests = requests
        self.per = per
        self.burst = burst
    }

    /// The rate the bucket fills at.
    public var tokensPerSecond: Double { Double(requests) / per }

    /// The seconds between two tokens.
    public var secondsPerToken: Double { per / Double(requests) }
}

/// What a `hosts:` entry gives the requests of the run that reach its host (version 4): a
/// cap on those in flight at once and a token bucket, for every source reaching it.
public struct HostBudget: Sendable, Equatable {
    /// Which requests it holds.
    public var key: HostKey
    /// At most this many of the run's requests to the host at once (`concurrency`); nil: the
    /// run's concurrency alone caps them.
    public var concurrency: Int?
    /// The host's bucket (`rate_limit`); nil: none.
    public var rateLimit: RateLimit?

    /// A budget for `key`.
    public init(key: HostKey, concurrency: Int? = nil, rateLimit: RateLimit? = nil) {
        self.key = key
        self.concurrency = concurrency
        self.rateLimit = rateLimit
    }
}

extension RunOptions {
    /// The requests a run of `pipeline` keeps in flight at once: `--concurrency` when given,
    /// else the file's `concurrency` (4 by default in a version-4 file, 1 in older ones).
    public func concurrency(for pipeline: PipelineFile) -> Int {
        concurrency ?? pipeline.concurrency
    }
}
