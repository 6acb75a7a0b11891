import Foundation
import SwellHTTP
import Testing

/// What a response says about its host's budget (Pipeline file reference, "Real networks",
/// point 2): `Retry-After` on a 429 or a 503 only (seconds or an HTTP date),
/// `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` as Unix seconds, and the IETF
/// `RateLimit-Remaining: 0` with `RateLimit-Reset` as seconds from now. Header names arrive
/// lowercased, as ``HTTPResponse/headers`` and ``HTTPError/headers`` hold them.
@Suite struct ServerHoldTests {
    /// A fixed clock: 2026-12-02T01:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_796_173_200)

    static func hold(_ status: Int?, _ headers: [(String, String)]) -> Double? {
        ServerHold.seconds(status: status, headers: headers.map { HTTPHeader(name: $0.0, value: $0.1) }, now: now)
    }

    /// RFC 9110's IMF-fixdate of `date`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    @Test(arguments: [429, 503])
    func retryAfterInSecondsHoldsThatLong(status: Int) {
        #expect(Self.hold(status, [("retry-after", "7")]) == 7)
        #expect(Self.hold(status, [("retry-after", " 120 ")]) == 120)
    }

    @Test(arguments: [429, 503])
    func retryAfterAsAnHTTPDateHoldsUntilThen(status: Int) {
        let date = Self.httpDate(Self.now.addingTimeInterval(30))
        #expect(Self.hold(status, [("retry-after", date)]) == 30, "\(date)")
        // RFC 850 and asctime, the other two forms a server may send.
        #expect(Self.hold(status, [("retry-after", "Wednesday, 02-Dec-26 01:00:45 GMT")]) == 45)
        #expect(Self.hold(status, [("retry-after", "Wed Dec  2 01:01:00 2026")]) == 60)
        // A date already past asks for no wait.
        #expect(Self.hold(status, [("retry-after", Self.httpDate(Self.now.addingTimeInterval(-5)))]) == nil)
    }

    /// `Retry-After` means "wait" only on a 429 or a 503: a page that carries it on a 200 (or
    /// another error) is not a reason to hold the host.
    @Test(arguments: [nil, 200, 304, 301, 500, 502, 404] as [Int?])
    func retryAfterOnAnyOtherStatusHoldsNothing(status: Int?) {
        #expect(Self.hold(status, [("retry-after", "30")]) == nil)
        #expect(Self.hold(status, [("retry-after", Self.httpDate(Self.now.addingTimeInterval(30)))]) == nil)
    }

    @Test func retryAfterThatCannotBeReadHoldsNothing() {
        for value in ["", "soon", "-5", "1.5", "Thu, 32 Dec 2026 01:00:00 GMT"] {
            #expect(Self.hold(429, [("retry-after", value)]) == nil, "\(value)")
        }
        #expect(Self.hold(429, []) == nil)
        #expect(Self.hold(429, [("retry-after", "0")]) == nil)
    }

    /// GitHub's form: the reset is a Unix time, and holds on any status (a 200 that spent the
    /// last request of the budget too).
    @Test(arguments: [nil, 200, 403, 429] as [Int?])
    func xRateLimitRemainingZeroHoldsUntilTheUnixReset(status: Int?) {
        let reset = String(Int(Self.now.timeIntervalSince1970) + 42)
        #expect(Self.hold(status, [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", reset)]) == 42)
        #expect(Self.hold(status, [("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-used", "5000"),
                                   ("x-ratelimit-reset", reset)]) == 42)
    }

    @Test func xRateLimitWithBudgetLeftOrWithoutAResetHoldsNothing() {
        let reset = String(Int(Self.now.timeIntervalSince1970) + 42)
        #expect(Self.hold(200, [("x-ratelimit-remaining", "1"), ("x-ratelimit-reset", reset)]) == nil)
        #expect(Self.hold(200, [("x-ratelimit-remaining", "4999"), ("x-ratelimit-reset", reset)]) == nil)
        #expect(Self.hold(200, [("x-ratelimit-remaining", "0")]) == nil)
        #expect(Self.hold(200, [("x-ratelimit-reset", reset)]) == nil)
        #expect(Self.hold(200, [("x-ratelimit-remaining", "none"), ("x-ratelimit-reset", reset)]) == nil)
        // A reset already past: the budget is back.
        #expect(Self.hold(200, [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", String(Int(Self.now.timeIntervalSince1970) - 3))]) == nil)
    }

    /// Some servers send the X- reset as seconds from now; no Unix time is that small.
    @Test func aSmallXRateLimitResetIsSecondsFromNow() {
        #expect(Self.hold(200, [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "15")]) == 15)
    }

    /// The IETF form (draft-ietf-httpapi-ratelimit-headers): the reset is seconds from now.
    @Test(arguments: [nil, 200, 429] as [Int?])
    func ietfRateLimitRemainingZeroHoldsForTheResetSeconds(status: Int?) {
        #expect(Self.hold(status, [("ratelimit-limit", "100"), ("ratelimit-remaining", "0"), ("ratelimit-reset", "9")]) == 9)
        #expect(Self.hold(status, [("ratelimit-remaining", "0"), ("ratelimit-reset", "2.5")]) == 2.5)
    }

    @Test func ietfRateLimitWithBudgetLeftOrWithoutAResetHoldsNothing() {
        #expect(Self.hold(200, [("ratelimit-remaining", "3"), ("ratelimit-reset", "9")]) == nil)
        #expect(Self.hold(200, [("ratelimit-remaining", "0")]) == nil)
        #expect(Self.hold(200, [("ratelimit-reset", "9")]) == nil)
        #expect(Self.hold(200, [("ratelimit-remaining", "0"), ("ratelimit-reset", "0")]) == nil)
    }

    /// Several forms in one answer (flask-limiter sends `Retry-After` and `X-RateLimit-*`
    /// together): the longest wait holds.
    @Test func theLongestOfSeveralFormsHolds() {
        let reset = String(Int(Self.now.timeIntervalSince1970) + 20)
        #expect(Self.hold(429, [("retry-after", "5"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", reset)]) == 20)
        #expect(Self.hold(429, [("retry-after", "50"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", reset)]) == 50)
        #expect(Self.hold(503, [("retry-after", "5"), ("ratelimit-remaining", "0"), ("ratelimit-reset", "8")]) == 8)
        // On a 200 the Retry-After does not count, the exhausted budget does.
        #expect(Self.hold(200, [("retry-after", "50"), ("ratelimit-remaining", "0"), ("ratelimit-reset", "8")]) == 8)
    }

    /// A repeated field: the last one is the answer's.
    @Test func theLastOfARepeatedFieldCounts() {
        #expect(Self.hold(429, [("retry-after", "50"), ("retry-after", "3")]) == 3)
        #expect(Self.hold(200, [("ratelimit-remaining", "0"), ("ratelimit-remaining", "4"), ("ratelimit-reset", "8")]) == nil)
    }
}
