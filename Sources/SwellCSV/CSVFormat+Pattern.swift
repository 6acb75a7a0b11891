import SwellCalendar

extension CSVFormat {
    /// A Unicode (LDML) pattern like "yyyy-MM-dd" or "dd/MM/yyyy HH:mm", in UTC unless the pattern has a zone.
    ///
    /// For one date: it makes a formatter for the call. A caller writing many dates keeps
    /// its own `DatePatterns` (see there for the calendar, locale and zone rules).
    public static func date(_ secondsSince1970: Double, pattern: String) -> String {
        DatePatterns().string(fromSeconds: secondsSince1970, pattern: pattern)
    }

    /// Parses a date with an LDML pattern (for sources' `dates:`), UTC unless the pattern has a zone; nil when it does not match.
    ///
    /// Strict: the whole text must match. For one date, like `date(_:pattern:)`; a caller
    /// reading many keeps its own `DatePatterns`.
    public static func parseDate(_ text: String, pattern: String) -> Double? {
        DatePatterns().seconds(from: text, pattern: pattern)
    }
}
