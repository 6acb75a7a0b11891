import Foundation

/// Date formatters for Unicode (LDML) patterns such as "yyyy-MM-dd" or
/// "dd/MM/yyyy HH:mm", one per pattern, owned by one caller (an upsert worker,
/// an export): no lock and no sharing, so callers on several threads never
/// wait for each other.
///
/// The Gregorian calendar, locale en_US_POSIX, time zone UTC: a zone in the
/// pattern (`Z`, `XXX`, …) prints the UTC offset, and a zone in parsed text
/// wins over UTC. Parsing is strict (not lenient): the whole text must match.
///
/// Not `Sendable`: use an instance on one thread at a time (a `DateFormatter`
/// is not safe to share).
public final class DatePatterns {
    private var formatters: [String: DateFormatter] = [:]

    /// An empty set of formatters; each pattern's is made on its first use.
    public init() {}

    /// The date `secondsSince1970` written with `pattern`.
    public func string(fromSeconds secondsSince1970: Double, pattern: String) -> String {
        formatter(for: pattern).string(from: Date(timeIntervalSince1970: secondsSince1970))
    }

    /// Unix seconds of `text` read with `pattern`; nil when it does not match.
    public func seconds(from text: String, pattern: String) -> Double? {
        formatter(for: pattern).date(from: text)?.timeIntervalSince1970
    }

    private func formatter(for pattern: String) -> DateFormatter {
        if let formatter = formatters[pattern] {
            return formatter
        }
        let utc = TimeZone.gmt
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = calendar
        formatter.timeZone = utc
        formatter.isLenient = false
        formatter.dateFormat = pattern
        formatters[pattern] = formatter
        return formatter
    }
}

@available(*, unavailable)
extension DatePatterns: Sendable {}
