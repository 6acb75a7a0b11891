import Foundation

/// One rate budget as a token bucket (Pipeline file reference, `rate_limit`): it holds at
/// most `burst` tokens, gains `tokensPerSecond`, and a request takes one. `key` names it
/// among the run's buckets (and, shared, among every runner's: `SharedTokenBuckets`).
public struct TokenBucketSpec: Sendable, Hashable {
    /// The bucket's name, e.g. `host:https://api.github.com:443` or `source:issues`.
    public var key: String
    /// Tokens gained a second (`requests` ÷ `per`).
    public var tokensPerSecond: Double
    /// The most tokens it holds (requests at once after a pause); at least 1.
    public var burst: Double

    /// Creates a bucket spec; `burst` below 1 counts as 1.
    public init(key: String, tokensPerSecond: Double, burst: Double) {
        self.key = key
        self.tokensPerSecond = tokensPerSecond
        self.burst = max(1, burst)
    }
}

/// A token bucket's state: tokens at a time. A value; the engine keeps one per key.
struct TokenBucket: Sendable {
    private(set) var tokens: Double
    private(set) var updated: Double

    /// A full bucket at `now`.
    init(spec: TokenBucketSpec, now: Double) {
        tokens = spec.burst
        updated = now
    }

    /// The tokens it holds at `now`.
    func available(_ spec: TokenBucketSpec, at now: Double) -> Double {
        min(spec.burst, tokens + max(0, now - updated) * spec.tokensPerSecond)
    }

    /// Seconds from `now` until it holds a token (0: it holds one now).
    func wait(_ spec: TokenBucketSpec, at now: Double) -> Double {
        let have = available(spec, at: now)
        return have >= 1 ? 0 : (1 - have) / spec.tokensPerSecond
    }

    /// Takes one token at `now` (the caller checked `wait` is 0).
    mutating func take(_ spec: TokenBucketSpec, at now: Double) {
        tokens = available(spec, at: now) - 1
        updated = now
    }
}

/// Buckets every runner on one store shares (a PostgreSQL store: Pipeline file reference,
/// "One budget for many runners"): tokens are taken by the store's clock, so runners whose
/// clocks differ share one budget.
public protocol SharedTokenBuckets: Sendable {
    /// Takes one token from every bucket of `buckets` at once, or none. Returns 0 when taken,
    /// else the seconds until all of them would hold one.
    func take(_ buckets: [TokenBucketSpec]) throws -> Double
}

/// The run's own buckets, kept on the engine's thread.
struct LocalTokenBuckets {
    private var buckets: [String: TokenBucket] = [:]

    /// Takes a token from each of `specs` at `now`, or none: 0 when taken, else the seconds to wait.
    mutating func take(_ specs: [TokenBucketSpec], at now: Double) -> Double {
        var wait = 0.0
        for spec in specs {
            let bucket = buckets[spec.key] ?? TokenBucket(spec: spec, now: now)
            buckets[spec.key] = bucket
            wait = max(wait, bucket.wait(spec, at: now))
        }
        guard wait == 0 else { return wait }
        for spec in specs { buckets[spec.key]!.take(spec, at: now) }
        return 0
    }
}
