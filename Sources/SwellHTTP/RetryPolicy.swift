import Foundation
import SwellCalendar

/// Exponential backoff with full jitter, honouring Retry-After; a pure function.
///
/// Retry `n` (1-based) waits a random time in `0...min(maxDelay, baseDelay * 2^(n-1))`,
/// unless the server said how long to wait with `Retry-After` (seconds or an HTTP-date),
/// which is honoured up to `maxDelay`.
public struct RetryPolicy: Sendable {
    /// Further attempts after the first: at most `retries + 1` attempts in all.
    public var retries: Int
    /// Seconds: the upper bound of the first retry's delay, doubled for each further retry.
    public var baseDelay: Double = 0.5
    /// Seconds: no delay is longer, Retry-After included.
    public var maxDelay: Double = 30

    /// Creates a policy; a negative `retries` counts as 0.
    public init(retries: Int, baseDelay: Double = 0.5, maxDelay: Double = 30) {
        self.retries = max(0, retries)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Delay before retry number `attempt` (1-based): Retry-After (seconds or HTTP-date) when given (capped at maxDelay), else random in 0...min(maxDelay, baseDelay * 2^(attempt-1)).
    ///
    /// A Retry-After date in the past gives 0; one that cannot be read is ignored.
    public func delay(beforeRetry attempt: Int, retryAfter: String?, random: inout some RandomNumberGenerator, now: Date = Date()) -> Double {
        let ceiling = max(0, maxDelay)
        if let retryAfter, let seconds = Self.seconds(inRetryAfter: retryAfter, now: now) {
            return min(max(0, seconds), ceiling)
        }
        let exponent = Double(min(max(attempt, 1) - 1, 64))
        let bound = min(ceiling, max(0, baseDelay) * pow(2, exponent))
        guard bound > 0 else { return 0 }
        return Double.random(in: 0...bound, using: &random)
    }

    /// Seconds to wait per a Retry-After value: delay-seconds, or an HTTP-date minus `now`.
    static func seconds(inRetryAfter value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) {
            return Double(text)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return date.timeIntervalSince(now)
    }
}

/// The three HTTP-date forms of RFC 9110 §5.6.7: IMF-fixdate, RFC 850 and asctime.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays: Set<String> = [
        "mon", "tue", "wed", "thu", "fri", "sat", "sun",
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT` or `Sun Nov  6 08:49:37 1994`.
    static func parse(_ text: String) -> Date? {
        var tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" }).map { $0.lowercased() }
        guard let first = tokens.first, weekdays.contains(first) else { return nil }
        tokens.removeFirst()
        if tokens.last == "gmt" { tokens.removeLast() }
        guard tokens.count == 6 else { return nil }
        let day: Int?, month: Int?, year: Int?, clock: ArraySlice<String>
        if let asctimeMonth = months.firstIndex(of: tokens[0]) {
            (month, day, year, clock) = (asctimeMonth + 1, Int(tokens[1]), Int(tokens[5]), tokens[2...4])
        } else {
            (day, month, year, clock) = (Int(tokens[0]), months.firstIndex(of: tokens[1]).map { $0 + 1 }, Int(tokens[2]), tokens[3...5])
        }
        let time = clock.compactMap { Int($0) }
        guard let day, let month, var year, time.count == 3, (1...31).contains(day),
              (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]) else { return nil }
        if year < 100 { year += year >= 70 ? 1900 : 2000 }
        let seconds = Int(CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day))) * 86_400 + time[0] * 3600 + time[1] * 60 + time[2]
        return Date(timeIntervalSince1970: Double(seconds))
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
