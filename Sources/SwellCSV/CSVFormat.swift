/// The text forms of the Values table's CSV column.
///
/// All functions are pure and safe to call from any thread.
public enum CSVFormat {
    /// Decimal digits with a leading `-` for negatives: "42", "-3".
    public static func integer(_ value: Int64) -> String {
        String(value)
    }

    /// Whole numbers without a fraction ("100", "0", "-3", also 1e20 → "100000000000000000000"); otherwise the shortest decimal that reads back as the same Double ("0.1", "12.75"), in positional notation, never an exponent (1e-7 → "0.0000001").
    ///
    /// Large whole numbers are the shortest round-trip digits followed by zeros, so
    /// `Double.greatestFiniteMagnitude` gives "17976931348623157" and 292 zeros (it reads back as
    /// the same Double). Negative zero is a whole number and gives "0". NaN gives "nan", the
    /// infinities "inf" and "-inf": the spellings Swift's and Python's parsers read back.
    public static func double(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        // Every whole number below 2^53 is exact: its integer digits are its shortest form.
        if value.magnitude < 9_007_199_254_740_992, value.rounded(.towardZero) == value {
            return String(Int64(value))
        }
        return positional(shortest: value.description)
    }

    /// "true" / "false".
    public static func boolean(_ value: Bool) -> String {
        value ? "true" : "false"
    }

    /// Rewrites Swift's shortest round-trip text ("1e-07", "1.7976931348623157e+308", "12.75") without an exponent.
    private static func positional(shortest text: String) -> String {
        var negative = false
        var digits: [UInt8] = []
        digits.reserveCapacity(24)
        var pointPosition: Int?
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-") where inExponent:
                exponentNegative = true
            case UInt8(ascii: "-"):
                negative = true
            case UInt8(ascii: "+"):
                break
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            case UInt8(ascii: "."):
                pointPosition = digits.count
            case UInt8(ascii: "0")...UInt8(ascii: "9") where inExponent:
                exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte)
            default:
                break
            }
        }
        // The value is 0.d1d2d3… × 10^integerDigits.
        var integerDigits = (pointPosition ?? digits.count) + (exponentNegative ? -exponent : exponent)
        var leadingZeros = 0
        while leadingZeros < digits.count, digits[leadingZeros] == UInt8(ascii: "0") {
            leadingZeros += 1
        }
        digits.removeFirst(leadingZeros)
        integerDigits -= leadingZeros
        while let last = digits.last, last == UInt8(ascii: "0") {
            digits.removeLast()
        }
        guard !digits.isEmpty else { return "0" }

        let zero = UInt8(ascii: "0")
        var result: [UInt8] = []
        result.reserveCapacity(digits.count + abs(integerDigits) + 3)
        if negative { result.append(UInt8(ascii: "-")) }
        if integerDigits <= 0 {
            result.append(zero)
            result.append(UInt8(ascii: "."))
            result.append(contentsOf: repeatElement(zero, count: -integerDigits))
            result.append(contentsOf: digits)
        } else if integerDigits >= digits.count {
            result.append(contentsOf: digits)
            result.append(contentsOf: repeatElement(zero, count: integerDigits - digits.count))
        } else {
            result.append(contentsOf: digits[..<integerDigits])
            result.append(UInt8(ascii: "."))
            result.append(contentsOf: digits[integerDigits...])
        }
        return String(decoding: result, as: UTF8.self)
    }
}
