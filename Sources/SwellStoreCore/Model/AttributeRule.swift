import Foundation

/// A rule an attribute's value must keep (Core Data's `minValue`, `maxValue`,
/// `minLength`, `maxLength` and regular-expression predicate, plus a list of
/// allowed values).
///
/// Rules are kept in the model (and in the store's copy of it). Every context `save()`
/// checks them on the objects it moves, and batch inserts and updates on their rows (Store
/// guarantees 55); `swell` checks them on every record it reads (a record breaking one is a
/// bad record).
///
/// A rule says nothing about nil: whether an attribute may be nil is
/// `AttributeDescription.isOptional`. A rule that does not fit a value's kind
/// (a length rule on a number) is not broken by it; `AttributeRule.fits(_:)`
/// says which rules make sense for which attribute types.
public enum AttributeRule: Sendable, Hashable, Codable {
    /// The value is at least this (numbers and dates).
    case minValue(Bound)
    /// The value is at most this (numbers and dates).
    case maxValue(Bound)
    /// The text has at least this many characters (as a reader counts them: Swift's `Character`s).
    case minLength(Int)
    /// The text has at most this many characters.
    case maxLength(Int)
    /// The whole text matches this regular expression (ICU syntax, as `NSRegularExpression`).
    case pattern(String)
    /// The value is one of these (compared as the store keeps them).
    case allowedValues([StoreValue])

    /// A bound of `minValue` or `maxValue`: a number, or a date.
    public enum Bound: Sendable, Hashable, Codable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
        case integer(Int64)
        case number(Double)
        case date(Date)

        public init(integerLiteral value: Int64) { self = .integer(value) }
        public init(floatLiteral value: Double) { self = .number(value) }

        /// The bound as the store keeps it (a date as Unix seconds).
        public var storeValue: StoreValue {
            switch self {
            case .integer(let int): .integer(int)
            case .number(let double): .real(double)
            case .date(let date): .real(date.timeIntervalSince1970)
            }
        }
    }

    // Swift values where the cases take the store's: `.minValue(someDate)`, `.maxValue(limit)`,
    // `.allowedValues(["open", "closed"])`.

    /// The value is at least `date`.
    public static func minValue(_ date: Date) -> AttributeRule { .minValue(.date(date)) }
    /// The value is at most `date`.
    public static func maxValue(_ date: Date) -> AttributeRule { .maxValue(.date(date)) }
    /// The value is at least `number`.
    public static func minValue(_ number: Int) -> AttributeRule { .minValue(.integer(Int64(number))) }
    /// The value is at most `number`.
    public static func maxValue(_ number: Int) -> AttributeRule { .maxValue(.integer(Int64(number))) }
    /// The value is at least `number`.
    public static func minValue(_ number: Double) -> AttributeRule { .minValue(.number(number)) }
    /// The value is at most `number`.
    public static func maxValue(_ number: Double) -> AttributeRule { .maxValue(.number(number)) }
    /// The text is one of `values`.
    public static func allowedValues(_ values: [String]) -> AttributeRule { .allowedValues(values.map(StoreValue.text)) }
    /// The number is one of `values`.
    public static func allowedValues(_ values: [Int]) -> AttributeRule { .allowedValues(values.map { .integer(Int64($0)) }) }
    /// The number is one of `values`.
    public static func allowedValues(_ values: [Double]) -> AttributeRule { .allowedValues(values.map(StoreValue.real)) }

    /// Whether the rule is a bound (`minValue`, `maxValue`).
    var isBound: Bool {
        switch self {
        case .minValue, .maxValue: true
        default: false
        }
    }

    /// Whether the rule makes sense on an attribute of `type`: bounds on numbers and
    /// dates, lengths and patterns on strings, allowed values on anything but JSON.
    public func fits(_ type: AttributeType) -> Bool {
        switch self {
        case .minValue, .maxValue: [.integer, .double, .date].contains(type)
        case .minLength, .maxLength, .pattern: type == .string
        case .allowedValues: type != .json
        }
    }
}

/// An attribute's rules ready to check values: a pattern compiled once. Immutable,
/// so one checker serves every thread.
public struct AttributeRuleChecker: Sendable {
    /// The rules, in the order they were given.
    public let rules: [AttributeRule]
    /// Per rule, its compiled pattern (nil for other rules).
    private let expressions: [NSRegularExpression?]

    /// Compiles `rules`. A pattern that is not a regular expression (see
    /// `patternProblem`) is broken by every text.
    public init(_ rules: [AttributeRule]) {
        self.rules = rules
        expressions = rules.map { rule in
            guard case .pattern(let pattern) = rule else { return nil }
            return Self.wholeMatch(pattern)
        }
    }

    /// Why a `.pattern` rule cannot use `pattern`, or nil when it can.
    public enum PatternProblem: Sendable {
        /// It does not compile.
        case notAnExpression
        /// It compiles alone but not anchored: it ends inside a `(?x)` comment or a `\Q` quote.
        case cannotBeAnchored
    }

    /// Why a `.pattern` rule cannot use `pattern`, or nil when it can.
    public static func patternProblem(_ pattern: String) -> PatternProblem? {
        guard (try? NSRegularExpression(pattern: pattern)) != nil else { return .notAnExpression }  // its error says no more
        return wholeMatch(pattern) == nil ? .cannotBeAnchored : nil
    }

    /// `pattern` anchored to match the whole text. The pattern must compile on its own
    /// first, so its parentheses balance and the wrapping cannot change what it means.
    private static func wholeMatch(_ pattern: String) -> NSRegularExpression? {
        // NSRegularExpression's error adds nothing to "not a regular expression".
        guard (try? NSRegularExpression(pattern: pattern)) != nil else { return nil }
        return try? NSRegularExpression(pattern: "\\A(?:\(pattern))\\z")  // fails only when it cannot be anchored: `patternProblem` says so
    }

    /// The first rule `value` breaks, or nil. Nil values break no rule.
    public func brokenRule(by value: StoreValue) -> AttributeRule? {
        if value.isNull { return nil }
        for (index, rule) in rules.enumerated() where !Self.keeps(value, rule, expressions[index]) {
            return rule
        }
        return nil
    }

    private static func keeps(_ value: StoreValue, _ rule: AttributeRule, _ expression: NSRegularExpression?) -> Bool {
        // NaN is within no bounds.
        if case .real(let double) = value, double.isNaN, rule.isBound { return false }
        return switch rule {
        case .minValue(let bound): compare(value, bound.storeValue).map { $0 >= 0 } ?? true
        case .maxValue(let bound): compare(value, bound.storeValue).map { $0 <= 0 } ?? true
        case .minLength(let length): text(value).map { $0.count >= length } ?? true
        case .maxLength(let length): text(value).map { $0.count <= length } ?? true
        case .pattern:
            text(value).map { text in
                expression?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            } ?? true
        case .allowedValues(let allowed): allowed.contains { compare(value, $0) == 0 || $0 == value }
        }
    }

    private static func text(_ value: StoreValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }

    /// -1, 0 or 1 for two numbers (an integer and a double compare by value, exactly
    /// for integers); nil when either is not a number.
    public static func compare(_ left: StoreValue, _ right: StoreValue) -> Int? {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.integer(let a), .real(let b)): return compare(a, b)
        case (.real(let a), .integer(let b)): return compare(b, a).map { -$0 }
        case (.real(let a), .real(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        default: return nil
        }
    }

    /// An integer against a double, without rounding the integer.
    private static func compare(_ integer: Int64, _ double: Double) -> Int? {
        guard !double.isNaN else { return nil }
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.down)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? -1 : 1 }
        return whole == double ? 0 : -1
    }
}
