/// A store that many runners write at once keeps their rate budgets, so that together they
/// stay within a `rate_limit` (Pipeline file reference, "One budget for many runners"): a
/// token bucket per key, whose tokens are counted by the store's clock, not the runners'.
/// A file store has no such budgets: each run keeps its own.
package protocol RateBudgetSharing: Sendable {
    /// A session on the shared buckets for one run: its own connection, opened at the first
    /// take and closed by ``RateBudgetSession/close()`` (or when the session goes).
    func openRateBudget() -> any RateBudgetSession
}

/// One bucket of a take: `tokensPerSecond` gained, at most `burst` held (at least 1).
package struct RateBucketSpec: Sendable, Hashable {
    package var key: String
    package var tokensPerSecond: Double
    package var burst: Double

    package init(key: String, tokensPerSecond: Double, burst: Double) {
        self.key = key
        self.tokensPerSecond = tokensPerSecond
        self.burst = max(1, burst)
    }
}

/// A run's session on the shared buckets (`RateBudgetSharing`). Used from one thread at a time.
package protocol RateBudgetSession: AnyObject, Sendable {
    /// Takes one token from every bucket of `buckets` at once, or none: 0 when taken, else
    /// the seconds until every one of them would hold a token. A bucket seen for the first
    /// time starts full.
    ///
    /// - Throws: `StoreError` when the store cannot be reached or refuses the take.
    func takeToken(from buckets: [RateBucketSpec]) throws -> Double
    /// Ends the session (later takes throw `StoreError.noPersistentStore`).
    func close()
}
