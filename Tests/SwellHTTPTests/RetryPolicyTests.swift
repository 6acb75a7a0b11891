import Foundation
import SwellHTTP
import SwellTestSupport
import Testing

/// Sun, 06 Nov 1994 08:49:37 GMT
private let now = Date(timeIntervalSince1970: 784_111_777)

@Test func jitteredDelayStaysWithinDoublingBounds() {
    let policy = RetryPolicy(retries: 8, baseDelay: 0.5, maxDelay: 30)
    var random = SeededGenerator(state: 42)
    for attempt in 1...8 {
        let bound = min(30, 0.5 * pow(2, Double(attempt - 1)))
        let draws = (0..<2000).map { _ in policy.delay(beforeRetry: attempt, retryAfter: nil, random: &random, now: now) }
        #expect(draws.allSatisfy { (0...bound).contains($0) }, "attempt \(attempt)")
        #expect((draws.max() ?? 0) > bound * 0.9, "attempt \(attempt) reaches its bound")
        #expect((draws.min() ?? bound) < bound * 0.1, "attempt \(attempt) is fully jittered")
    }
}

@Test func sameSeedGivesSameDelays() {
    let policy = RetryPolicy(retries: 3)
    var first = SeededGenerator(state: 7)
    var second = SeededGenerator(state: 7)
    let a = (1...3).map { policy.delay(beforeRetry: $0, retryAfter: nil, random: &first, now: now) }
    let b = (1...3).map { policy.delay(beforeRetry: $0, retryAfter: nil, random: &second, now: now) }
    #expect(a == b)
}

@Test func retryAfterSecondsAreHonouredAndCapped() {
    let policy = RetryPolicy(retries: 3, baseDelay: 0.5, maxDelay: 30)
    var random = SeededGenerator(state: 1)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "5", random: &random, now: now) == 5)
    #expect(policy.delay(beforeRetry: 1, retryAfter: " 0 ", random: &random, now: now) == 0)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "120", random: &random, now: now) == 30)
}

@Test func retryAfterHTTPDateIsHonouredInEachForm() {
    let policy = RetryPolicy(retries: 3, maxDelay: 60)
    var random = SeededGenerator(state: 1)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "Sun, 06 Nov 1994 08:49:47 GMT", random: &random, now: now) == 10)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "Sunday, 06-Nov-94 08:50:07 GMT", random: &random, now: now) == 30)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "Sun Nov  6 08:49:57 1994", random: &random, now: now) == 20)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "Sun, 06 Nov 1994 09:49:37 GMT", random: &random, now: now) == 60)
    #expect(policy.delay(beforeRetry: 1, retryAfter: "Sat, 05 Nov 1994 08:49:37 GMT", random: &random, now: now) == 0)
}

@Test func unreadableRetryAfterFallsBackToJitter() {
    let policy = RetryPolicy(retries: 3, baseDelay: 0.5, maxDelay: 30)
    var random = SeededGenerator(state: 3)
    let draws = (0..<200).map { _ in policy.delay(beforeRetry: 2, retryAfter: "soon", random: &random, now: now) }
    #expect(draws.allSatisfy { (0...1).contains($0) })
    #expect(Set(draws).count > 100)
}
