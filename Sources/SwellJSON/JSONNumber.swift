/// A JSON number, kept as its text so that every conversion is exact.
///
/// Two numbers are equal when their texts are equal: `1.0` and `1` differ.
public struct JSONNumber: Sendable, Equatable {
    /// The number exactly as in the input, e.g. "-12", "1e2", "10.50".
    public let text: String

    /// Wraps text that the parser has checked against the JSON number grammar.
    init(text: String) {
        self.text = text
    }

    /// The number `value`, written in decimal.
    public init(_ value: Int64) {
        self.text = String(value)
    }

    /// The exact integer value when the number is whole and fits `Int64`; nil otherwise.
    ///
    /// "1e2" gives 100, "10.0" gives 10, "-0" gives 0, "1.5" and
    /// "9223372036854775808" give nil.
    public var int64: Int64? {
        var text = text
        return text.withUTF8 { JSONNumber.exactInt64($0) }
    }

    /// The nearest `Double`, or nil when it is not finite (e.g. 1e400).
    public var double: Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// Reads `-? digits (. digits)? ([eE] [+-]? digits)?` as an exact whole number.
    ///
    /// Keeps the significant digits (first to last non-zero digit) in a
    /// `UInt64`; more than 19 of them can only be a fraction or a value
    /// beyond `Int64`, so an overflow there means nil.
    static func exactInt64(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let count = bytes.count
        var negative = false
        if index < count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var mantissa: UInt64 = 0
        var pendingZeros = 0
        var exponent = 0
        var sawDigit = false
        var inFraction = false
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard !inFraction else { return nil }
                inFraction = true
                index += 1
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            sawDigit = true
            if inFraction { exponent -= 1 }
            let digit = UInt64(byte - UInt8(ascii: "0"))
            if digit == 0 {
                if mantissa != 0 { pendingZeros += 1 }
            } else {
                for _ in 0...pendingZeros {
                    let (scaled, overflow) = mantissa.multipliedReportingOverflow(by: 10)
                    guard !overflow else { return nil }
                    mantissa = scaled
                }
                let (sum, overflow) = mantissa.addingReportingOverflow(digit)
                guard !overflow else { return nil }
                mantissa = sum
                pendingZeros = 0
            }
            index += 1
        }
        guard sawDigit else { return nil }
        if index < count {
            guard bytes[index] | 0x20 == UInt8(ascii: "e") else { return nil }
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            var sawExponentDigit = false
            while index < count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                written = min(written * 10 + Int(bytes[index] - UInt8(ascii: "0")), 1_000_000)
                sawExponentDigit = true
                index += 1
            }
            guard sawExponentDigit else { return nil }
            exponent += exponentNegative ? -written : written
        }
        guard index == count else { return nil }
        if mantissa == 0 { return 0 }
        let scale = exponent + pendingZeros
        guard scale >= 0, scale <= 19 else { return nil }
        for _ in 0..<scale {
            let (scaled, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            mantissa = scaled
        }
        if negative {
            guard mantissa <= UInt64(Int64.max) + 1 else { return nil }
            return mantissa == UInt64(Int64.max) + 1 ? Int64.min : -Int64(mantissa)
        }
        guard mantissa <= UInt64(Int64.max) else { return nil }
        return Int64(mantissa)
    }
}
