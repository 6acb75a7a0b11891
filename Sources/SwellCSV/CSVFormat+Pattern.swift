import Foundation
import SwellLocks

extension CSVFormat {
    /// A Unicode (LDML) pattern like "yyyy-MM-dd" or "dd/MM/yyyy HH:mm", in UTC unless the pattern has a zone; via a cached DateFormatter (en_US_POSIX).
    ///
    /// The Gregorian calendar, locale en_US_POSIX, time zone UTC: a zone in the pattern (`Z`,
    /// `XXX`, …) prints the UTC offset. One formatter per pattern is kept for the process; calls
    /// from several threads take turns on it.
    public static func date(_ secondsSince1970: Double, pattern: String) -> String {
        PatternFormatters.shared.withLock { formatters in
            PatternFormatters.formatter(for: pattern, in: &formatters)
                .string(from: Date(timeIntervalSince1970: secondsSince1970))
        }
    }

    /// Parses a date with an LDML pattern (for sources' `dates:`), UTC unless the pattern has a zone; nil when it does not match.
    ///
    /// Parsing is strict (not lenient): the whole text must match the pattern. A zone in the
    /// text, read by a zone field of the pattern, wins over UTC.
    public static func parseDate(_ text: String, pattern: String) -> Double? {
        PatternFormatters.shared.withLock { formatters in
            PatternFormatters.formatter(for: pattern, in: &formatters)
                .date(from: text)?.timeIntervalSince1970
        }
    }
}

/// The process's DateFormatters, one per pattern, behind a mutex (a DateFormatter is not used by two threads at once).
private enum PatternFormatters {
    static let shared = LockedValue<[String: DateFormatter]>([:])

    static func formatter(for pattern: String, in formatters: inout [String: DateFormatter]) -> DateFormatter {
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
