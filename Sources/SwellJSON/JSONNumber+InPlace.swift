extension JSONNumber {
    /// The exact `Int64` of number text checked against the JSON grammar (as
    /// `int64`: "1e2" gives 100, "1.5" and "9223372036854775808" nil), read in place.
    static func int64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        let count = bytes.count
        var index = 0
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        // Up to 18 digits and nothing else: the common case, which cannot overflow.
        if count - index <= 18 {
            var value: Int64 = 0
            while index < count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                value = value &* 10 &+ Int64(digit)
                index += 1
            }
            if index == count {
                return negative ? -value : value
            }
        }
        return exactInt64(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// The nearest `Double` of number text checked against the JSON grammar, or
    /// nil when it is not finite (as `double`), read in place.
    ///
    /// Exact inputs with at most 19 significant digits, a mantissa up to 2^53
    /// and a decimal exponent within ±22 take one correctly rounded product or
    /// quotient of exact doubles (Clinger's fast path); the rest go through the
    /// standard library's parser, as `double` does.
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let count = bytes.count
        var index = 0
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var exact = true
        var inFraction = false
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
                index += 1
                continue
            }
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            if significant < 19 {
                mantissa = mantissa &* 10 &+ UInt64(digit)
                if mantissa != 0 { significant += 1 }
                if inFraction { exponent -= 1 }
            } else {
                if digit != 0 { exact = false }
                if !inFraction { exponent += 1 }
            }
            index += 1
        }
        if index < count {
            index += 1
            var exponentNegative = false
            if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            while index < count {
                written = min(written * 10 + Int(bytes[index] &- UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            exponent += exponentNegative ? -written : written
        }
        if exact, mantissa <= 1 << 53, exponent >= -22, exponent <= 22 {
            var value = Double(mantissa)
            if exponent < 0 {
                value /= powersOfTen[-exponent]
            } else if exponent > 0 {
                value *= powersOfTen[exponent]
            }
            return negative ? -value : value
        }
        guard let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// 10^0 … 10^22, every one exact in a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
