/// A change of an attribute's type that keeps every value's meaning (Store guarantees 57;
/// pipeline schema drift's `types: widen`): integer → double → string, boolean → string.
///
/// The one rule for what a value becomes: the in-memory store calls `apply`, the SQLite store
/// calls it from SQL (`swell_widen`), and the PostgreSQL store's `USING` expression writes the
/// same text (DocC "Migrating a store").
public struct Widening: Sendable, Hashable, CustomStringConvertible {
    /// The type the values had.
    public let from: AttributeType
    /// The type they have now.
    public let to: AttributeType

    /// The widenings, in words (for messages).
    public static let rule = "integer → double → string, boolean → string"

    /// The widening from `from` to `to`, or nil when that change is not one (narrowing, or
    /// between unrelated types: a date, json).
    public init?(from: AttributeType, to: AttributeType) {
        switch (from, to) {
        case (.integer, .double), (.integer, .string), (.double, .string), (.boolean, .string):
            self.from = from
            self.to = to
        default:
            return nil
        }
    }

    public var description: String { "\(from.rawValue) → \(to.rawValue)" }

    /// `value` (as the store kept it for `from`) as the store keeps it for `to`: an integer
    /// becomes the same number as a double, or its decimal text; a double its text (a whole
    /// number below 2^53 without a fraction, `1.0` → `"1"`; otherwise the shortest text that
    /// reads back as the same double, `0.1`, `1e-07`); a boolean `"true"` or `"false"`.
    /// Nil stays nil.
    public func apply(_ value: StoreValue) -> StoreValue {
        switch (value, to) {
        case (.null, _): return .null
        case (.integer(let integer), .double): return .real(Double(integer))
        case (.real, .double): return value
        case (.integer(let integer), .string) where from == .boolean:
            return .text(integer == 0 ? "false" : integer == 1 ? "true" : String(integer))
        case (.integer(let integer), .string): return .text(String(integer))
        case (.real(let double), .string): return .text(Self.text(of: double))
        default: return value
        }
    }

    /// A double's text when a widening makes it a string: a whole number below 2^53 its digits;
    /// otherwise the shortest digits that read back as the same double, with an exponent when it
    /// is below -4 or at least 15 (`1e-05`, `1.2345678901234565e+15`) — the text PostgreSQL's
    /// `float8` output gives, so every store writes the same.
    public static func text(of double: Double) -> String {
        if double.magnitude < 9_007_199_254_740_992, double.rounded(.towardZero) == double {
            return String(Int64(double))
        }
        let text = double.description
        // Swift writes 1e15 ≤ |x| < 2^53 without an exponent; PostgreSQL with one.
        guard double.isFinite, double.magnitude >= 1e15, double.magnitude < 1e16, !text.contains("e") else { return text }
        let sign = double < 0 ? "-" : ""
        var digits = text.filter(\.isNumber)
        while digits.count > 1, digits.last == "0" { digits.removeLast() }
        let rest = digits.dropFirst()
        return "\(sign)\(digits.first!)\(rest.isEmpty ? "" : "." + rest)e+15"
    }
}
