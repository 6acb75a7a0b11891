import Foundation

/// A value as the store keeps it: SQLite's storage classes.
///
/// Booleans are kept as integers 0/1 and dates as Unix seconds (UTC) in a
/// double, as in the store's columns. Values order the way SQLite orders them:
/// null first, then numbers by value, then text by its UTF-8 bytes.
public enum StoreValue: Sendable, Hashable, Codable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Converts a Swift value (`String`, `Int` and the other integer types,
    /// `Double`, `Float`, `Bool`, `Date`, nil) to the store's representation
    /// for an attribute of `type`. Returns nil when the value does not fit the type.
    ///
    /// A `.json` attribute takes a `String` holding JSON text (compact, as the
    /// pipeline writes it) and keeps it as TEXT unchanged; the store does not
    /// parse it, so a caller that wants valid JSON writes valid JSON. Any other
    /// Swift value (a dictionary, a number) does not fit a `.json` attribute.
    public init?(swiftValue value: Any?, for type: AttributeType) {
        guard let value else { self = .null; return }
        if let optional = value as? OptionalProtocol, optional.isNil { self = .null; return }
        switch type {
        case .string, .json:
            guard let string = value as? String else { return nil }
            self = .text(string)
        case .integer:
            if let int = value as? Int { self = .integer(Int64(int)) }
            else if let int = value as? Int64 { self = .integer(int) }
            else if let int = value as? Int32 { self = .integer(Int64(int)) }
            else if let int = value as? Int16 { self = .integer(Int64(int)) }
            else if let int = value as? UInt32 { self = .integer(Int64(int)) }
            else if let int = value as? UInt64, let exact = Int64(exactly: int) { self = .integer(exact) }
            else { return nil }
        case .double:
            if let double = value as? Double { self = .real(double) }
            else if let float = value as? Float { self = .real(Double(float)) }
            else if let int = value as? Int { self = .real(Double(int)) }
            else { return nil }
        case .boolean:
            guard let bool = value as? Bool else { return nil }
            self = .integer(bool ? 1 : 0)
        case .date:
            guard let date = value as? Date else { return nil }
            self = .real(date.timeIntervalSince1970)
        }
    }

    /// The Swift value for an attribute of `type`: `String`, `Int`, `Double`, `Bool`, `Date`, or nil.
    public func swiftValue(for type: AttributeType) -> Any? {
        switch (self, type) {
        case (.null, _): nil
        case (.text(let string), _): string
        case (.integer(let int), .boolean): int != 0
        case (.integer(let int), .date): Date(timeIntervalSince1970: Double(int))
        case (.integer(let int), .double): Double(int)
        case (.integer(let int), _): Int(int)
        case (.real(let double), .date): Date(timeIntervalSince1970: double)
        case (.real(let double), .integer): Int(exactly: double) ?? Int(double)
        case (.real(let double), .boolean): double != 0
        case (.real(let double), _): double
        }
    }

    /// The number this value holds, for numeric comparison.
    package var numericValue: Double? {
        switch self {
        case .integer(let int): Double(int)
        case .real(let double): double
        default: nil
        }
    }

    /// The value's SQLite storage-class rank: null < numbers < text.
    private var rank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        }
    }

    /// Orders two values as SQLite's BINARY collation does: null first,
    /// numbers by value, text by UTF-8 bytes. Returns -1, 0 or 1.
    public static func compare(_ lhs: StoreValue, _ rhs: StoreValue) -> Int {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)):
            return a < b ? -1 : (a > b ? 1 : 0)
        case (.text(let a), .text(let b)):
            return compareUTF8(a, b)
        case (.integer(let int), .real(let double)) where !double.isNaN:
            return compareExactly(int, double)
        case (.real(let double), .integer(let int)) where !double.isNaN:
            return -compareExactly(int, double)
        default:
            break
        }
        let (ra, rb) = (lhs.rank, rhs.rank)
        if ra != rb { return ra < rb ? -1 : 1 }
        if ra == 1, let a = lhs.numericValue, let b = rhs.numericValue {
            return a < b ? -1 : (a > b ? 1 : 0)
        }
        return 0
    }

    /// Compares an integer with a double without rounding either, as SQLite
    /// does (2^53 + 1 is greater than the double 2^53).
    package static func compareExactly(_ int: Int64, _ double: Double) -> Int {
        // 2^63 is exact as a double; every Int64 is below it and at or above -2^63.
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.towardZero)
        let truncated = Int64(whole)
        if int != truncated { return int < truncated ? -1 : 1 }
        let fraction = double - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    /// Compares two strings by their UTF-8 bytes, as SQLite's BINARY collation does.
    package static func compareUTF8(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { ua in
            b.withUTF8 { ub in
                let common = min(ua.count, ub.count)
                if common > 0 {
                    let result = memcmp(ua.baseAddress!, ub.baseAddress!, common)
                    if result != 0 { return result < 0 ? -1 : 1 }
                }
                return ua.count == ub.count ? 0 : (ua.count < ub.count ? -1 : 1)
            }
        }
    }
}

/// Lets `StoreValue(swiftValue:for:)` see through an `Optional` boxed in `Any`.
private protocol OptionalProtocol {
    var isNil: Bool { get }
}

extension Optional: OptionalProtocol {
    package var isNil: Bool { self == nil }
}
