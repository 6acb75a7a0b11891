import Foundation
@testable import SwellHTTP
import SwellTestSupport
import Testing

/// A `rate_limit` as a token bucket (Pipeline file reference, "Real networks"): `requests`
/// per `per`, at most `burst` saved up; with `burst: 1` requests are spaced `per / requests`
/// apart, so no window of `per` holds more than `requests + 1`. On a clock given by the test.
@Suite struct TokenBucketTests {
    /// Takes tokens as soon as there is one, from `start` on, `count` times; the times taken.
    static func takeAsSoonAsPossible(_ specs: [TokenBucketSpec], count: Int, start: Double = 1000,
                                     buckets: inout LocalTokenBuckets) -> [Double] {
        var now = start
        var times: [Double] = []
        while times.count < count {
            let wait = buckets.take(specs, at: now)
            if wait == 0 {
                times.append(now)
            } else {
                #expect(wait > 0)
                // A wait below the clock's resolution at `now` (rounding) still moves it.
                now += max(wait, 1e-9)
            }
        }
        return times
    }

    @Test func aBurstBelowOneCountsAsOne() {
        #expect(TokenBucketSpec(key: "k", tokensPerSecond: 5, burst: 0).burst == 1)
        #expect(TokenBucketSpec(key: "k", tokensPerSecond: 5, burst: -3).burst == 1)
        #expect(TokenBucketSpec(key: "k", tokensPerSecond: 5, burst: 4).burst == 4)
    }

    @Test func aFreshBucketIsFullAndThenWaitsOneTokensTime() {
        let spec = TokenBucketSpec(key: "k", tokensPerSecond: 20, burst: 1)
        var bucket = TokenBucket(spec: spec, now: 10)
        #expect(bucket.available(spec, at: 10) == 1 && bucket.wait(spec, at: 10) == 0)
        bucket.take(spec, at: 10)
        #expect(abs(bucket.wait(spec, at: 10) - 0.05) < 1e-9)
        #expect(abs(bucket.wait(spec, at: 10.02) - 0.03) < 1e-9)
        #expect(bucket.wait(spec, at: 10.05) == 0)
        // Never more than the burst, however long the pause.
        #expect(bucket.available(spec, at: 1_000_000) == 1)
    }

    /// `burst: 1`: evenly spaced, `requests + 1` at most in any window of `per`, and n requests
    /// take (n - 1) × per / requests.
    @Test func burstOneSpacesRequestsEvenly() {
        var buckets = LocalTokenBuckets()
        let spec = TokenBucketSpec(key: "source:s", tokensPerSecond: 20, burst: 1)
        let times = Self.takeAsSoonAsPossible([spec], count: 60, buckets: &buckets)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { abs($0 - 0.05) < 1e-6 }, "\(gaps)")
        #expect(LatencyServerStats.maxCount(of: times, within: 1) <= 21)
        #expect(abs((times.last! - times.first!) - 59.0 / 20) < 1e-6)
    }

    /// `burst: b`: b at once after a quiet spell, then one per token's time.
    @Test func aBurstGoesAtOnceThenTheRate() {
        var buckets = LocalTokenBuckets()
        let spec = TokenBucketSpec(key: "host:h", tokensPerSecond: 10, burst: 5)
        let times = Self.takeAsSoonAsPossible([spec], count: 8, start: 50, buckets: &buckets)
        #expect(times.prefix(5).allSatisfy { $0 == 50 }, "\(times)")
        let rest = times.dropFirst(4).map { $0 - 50 }
        for (index, time) in rest.enumerated() { #expect(abs(time - Double(index) * 0.1) < 1e-6, "\(times)") }
        // After a pause of 2 s the bucket is full again: 5 more at once, not 20.
        let later = Self.takeAsSoonAsPossible([spec], count: 6, start: times.last! + 2, buckets: &buckets)
        #expect(later.prefix(5).allSatisfy { $0 == later[0] } && later[5] > later[0], "\(later)")
        // Within any second: the burst plus the rate, never more.
        #expect(LatencyServerStats.maxCount(of: times + later, within: 1) <= 5 + 10)
    }

    /// A request takes from its host's bucket and its source's at once, or from neither: the
    /// bucket that has a token keeps it while the other is empty.
    @Test func twoBucketsGiveATokenTogetherOrNotAtAll() {
        var buckets = LocalTokenBuckets()
        let host = TokenBucketSpec(key: "host:h", tokensPerSecond: 1, burst: 3)
        let source = TokenBucketSpec(key: "source:s", tokensPerSecond: 2, burst: 1)
        #expect(buckets.take([host, source], at: 0) == 0)
        // The source's bucket is empty for 0.5 s: the host keeps its two tokens.
        #expect(abs(buckets.take([host, source], at: 0) - 0.5) < 1e-9)
        #expect(abs(buckets.take([host, source], at: 0.25) - 0.25) < 1e-9)
        #expect(buckets.take([host], at: 0.25) == 0)
        #expect(buckets.take([host], at: 0.25) == 0)
        // The host holds 0.25 of a token now (3 taken); the wait is the longer of the two.
        #expect(abs(buckets.take([host, source], at: 0.5) - 0.5) < 1e-9)
        #expect(buckets.take([host, source], at: 1.0) == 0)
    }

    @Test func bucketsAreKeptByKey() {
        var buckets = LocalTokenBuckets()
        let a = TokenBucketSpec(key: "source:a", tokensPerSecond: 1, burst: 1)
        let b = TokenBucketSpec(key: "source:b", tokensPerSecond: 1, burst: 1)
        #expect(buckets.take([a], at: 0) == 0)
        #expect(buckets.take([b], at: 0) == 0)
        #expect(buckets.take([a], at: 0) == 1)
        // The same key is the same bucket, whoever asks.
        #expect(buckets.take([TokenBucketSpec(key: "source:a", tokensPerSecond: 1, burst: 1)], at: 0.5) == 0.5)
    }

    /// Two sources sharing one host budget: together they stay within it.
    @Test func aSharedHostBucketSpacesEveryoneTogether() {
        var buckets = LocalTokenBuckets()
        let host = TokenBucketSpec(key: "host:h", tokensPerSecond: 10, burst: 1)
        var now = 0.0
        var taken: [Double] = []
        var turn = 0
        while taken.count < 30 {
            let own = TokenBucketSpec(key: "source:\(turn % 2)", tokensPerSecond: 100, burst: 1)
            let wait = buckets.take([host, own], at: now)
            if wait == 0 {
                taken.append(now)
                turn += 1
            } else {
                now += max(wait, 1e-9)
            }
        }
        #expect(LatencyServerStats.maxCount(of: taken, within: 1) <= 11)
        #expect(abs(taken.last! - 2.9) < 1e-6)
    }
}
