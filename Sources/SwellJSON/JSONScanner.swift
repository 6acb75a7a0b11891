/// The scanning of strings, numbers and literals that `JSONMachine` and
/// `RecordProjector` share: RFC 8259's grammar for each, strict UTF-8, and
/// the error messages and positions of both parsers.
///
/// A scanner is made for each token with the parser's current line, which
/// its errors name. Every scan reads the buffer in place; one whose token
/// runs past the buffer's end returns nil (the caller carries the token over
/// to the next chunk), unless `isFinal`.
struct JSONScanner {
    /// The current 1-based line and the page offset of its first byte.
    let line: Int
    let lineStart: Int

    /// An error at an absolute byte offset on the current line.
    func error(_ message: String, at offset: Int) -> JSONError {
        JSONError(message, byteOffset: offset, line: line, column: max(1, offset - lineStart + 1))
    }

    /// Scans a number starting at `start`; returns the index after it, or nil when
    /// the buffer ends where the number could go on (and not `isFinal`).
    func number(
        _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Int? {
        let end = buffer.count
        var index = start
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end else {
            if isFinal { throw error("expected a digit", at: base + index) }
            return nil
        }
        let first = buffer[index]
        if first == UInt8(ascii: "0") {
            index += 1
            if index < end, isDigit(buffer[index]) {
                throw error("leading zero in a number", at: base + start)
            }
        } else if isDigit(first) {
            index += 1
            while index < end, isDigit(buffer[index]) { index += 1 }
        } else {
            throw error("expected a digit", at: base + index)
        }
        if index < end, buffer[index] == UInt8(ascii: ".") {
            index += 1
            guard index < end else {
                if isFinal { throw error("expected a digit after '.'", at: base + index) }
                return nil
            }
            guard isDigit(buffer[index]) else { throw error("expected a digit after '.'", at: base + index) }
            while index < end, isDigit(buffer[index]) { index += 1 }
        }
        if index < end, buffer[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < end, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < end else {
                if isFinal { throw error("expected a digit in the exponent", at: base + index) }
                return nil
            }
            guard isDigit(buffer[index]) else { throw error("expected a digit in the exponent", at: base + index) }
            while index < end, isDigit(buffer[index]) { index += 1 }
        }
        if index == end, !isFinal { return nil }
        return index
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// Checks `true`, `false` or `null` at `start`; false when the buffer ends inside it (and not `isFinal`).
    func literal(
        _ literal: StaticString, _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        let length = literal.utf8CodeUnitCount
        let available = min(length, buffer.count - start)
        let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: length)
        for offset in 0..<available where buffer[start + offset] != expected[offset] {
            throw error("invalid literal, expected '\(literal)'", at: base + start)
        }
        if available < length {
            if isFinal { throw error("invalid literal, expected '\(literal)'", at: base + start) }
            return false
        }
        return true
    }

    /// Scans a string whose opening quote is at `start`: the index after its
    /// closing quote, and whether it had escapes, decoded then onto the end
    /// of `output` (which is left as it was when the string is unfinished).
    /// Nil when the buffer ends inside the string.
    ///
    /// Eight bytes at a time until a quote, backslash or control character;
    /// the content is checked as UTF-8 only when a byte has its high bit set.
    @inline(__always)
    func string(
        _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, decodingInto output: inout [UInt8]
    ) throws(JSONError) -> (end: Int, escaped: Bool)? {
        let contentStart = start &+ 1
        var highBits: UInt64 = 0
        let index = Self.special(buffer, from: contentStart, highBits: &highBits)
        guard index < buffer.count else { return nil }
        let byte = buffer[index]
        if byte == UInt8(ascii: "\"") {
            if highBits & 0x8080_8080_8080_8080 != 0 {
                try validateUTF8(UnsafeRawBufferPointer(rebasing: buffer[contentStart..<index]), base: base &+ contentStart)
            }
            return (index &+ 1, false)
        }
        if byte < 0x20 {
            throw error("unescaped control character in a string", at: base + index)
        }
        let decodedStart = output.count
        guard let end = try escapedString(buffer, contentStart: contentStart, escape: index, highBits: highBits, base: base, into: &output) else {
            output.removeSubrange(decodedStart...)
            return nil
        }
        return (end, true)
    }

    /// The index of the first quote, backslash or control character from
    /// `start` on (the buffer's end if none); ORs the bytes before it into
    /// `highBits`, whose high bits then say whether any is not ASCII.
    ///
    /// Eight bytes at a time: the lowest flagged byte of a word is the first
    /// special one (flags above it may be false).
    @inline(__always)
    static func special(_ buffer: UnsafeRawBufferPointer, from start: Int, highBits: inout UInt64) -> Int {
        let end = buffer.count
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index &+ 8 <= end {
            let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let special = (((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word)) & highs
            if special != 0 {
                let before = special.trailingZeroBitCount & ~7
                highBits |= word & ((1 &<< UInt64(before)) &- 1)
                return index &+ before &>> 3
            }
            highBits |= word
            index &+= 8
        }
        while index < end {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
            highBits |= UInt64(byte)
            index &+= 1
        }
        return end
    }

    /// The slow path of `string` for a string with escapes, decoded onto
    /// `output`; returns the index after the closing quote.
    private func escapedString(
        _ buffer: UnsafeRawBufferPointer, contentStart: Int, escape: Int, highBits: UInt64, base: Int, into output: inout [UInt8]
    ) throws(JSONError) -> Int? {
        let end = buffer.count
        var runStart = contentStart
        var index = escape
        // Whether the run before `index` has a byte that is not ASCII.
        var highBits = highBits
        while index < end {
            let byte = buffer[index]
            guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                throw error("unescaped control character in a string", at: base + index)
            }
            if index > runStart {
                let run = UnsafeRawBufferPointer(rebasing: buffer[runStart..<index])
                if highBits & 0x8080_8080_8080_8080 != 0 {
                    try validateUTF8(run, base: base + runStart)
                }
                output.append(contentsOf: run)
            }
            if byte == UInt8(ascii: "\"") {
                return index + 1
            }
            guard let next = try decodeEscape(buffer, at: index, base: base, into: &output) else { return nil }
            runStart = next
            highBits = 0
            index = Self.special(buffer, from: next, highBits: &highBits)
        }
        return nil
    }

    /// Decodes the escape at `start` (a backslash) onto `output`; returns the
    /// index after it, or nil when the buffer ends before it is complete.
    private func decodeEscape(
        _ buffer: UnsafeRawBufferPointer, at start: Int, base: Int, into output: inout [UInt8]
    ) throws(JSONError) -> Int? {
        let end = buffer.count
        guard start + 1 < end else { return nil }
        let simple: UInt8
        switch buffer[start + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            guard let unit = try hexUnit(buffer, at: start, base: base) else { return nil }
            var scalarValue = UInt32(unit)
            var next = start + 6
            if unit >= 0xDC00, unit < 0xE000 {
                throw error("lone surrogate in a \\u escape", at: base + start)
            }
            if unit >= 0xD800, unit < 0xDC00 {
                if next < end, buffer[next] != UInt8(ascii: "\\") {
                    throw error("lone surrogate in a \\u escape", at: base + start)
                }
                if next + 1 < end, buffer[next + 1] != UInt8(ascii: "u") {
                    throw error("lone surrogate in a \\u escape", at: base + start)
                }
                guard let low = try hexUnit(buffer, at: next, base: base) else { return nil }
                guard low >= 0xDC00, low < 0xE000 else {
                    throw error("lone surrogate in a \\u escape", at: base + start)
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                next += 6
            }
            Self.appendUTF8(scalarValue, to: &output)
            return next
        default:
            throw error("invalid escape in a string", at: base + start)
        }
        output.append(simple)
        return start + 2
    }

    /// Appends a scalar value (never a surrogate) as UTF-8.
    private static func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
        switch value {
        case 0..<0x80:
            output.append(UInt8(value))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | value >> 6))
            output.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | value >> 12))
            output.append(UInt8(0x80 | value >> 6 & 0x3F))
            output.append(UInt8(0x80 | value & 0x3F))
        default:
            output.append(UInt8(0xF0 | value >> 18))
            output.append(UInt8(0x80 | value >> 12 & 0x3F))
            output.append(UInt8(0x80 | value >> 6 & 0x3F))
            output.append(UInt8(0x80 | value & 0x3F))
        }
    }

    /// Reads the four hex digits of `\uXXXX` at `start`; nil when the buffer ends first.
    private func hexUnit(_ buffer: UnsafeRawBufferPointer, at start: Int, base: Int) throws(JSONError) -> UInt16? {
        var unit: UInt16 = 0
        for index in (start + 2)..<(start + 6) {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape", at: base + start)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Throws at the first byte of `bytes` (at page offset `base`) that is not valid UTF-8.
    func validateUTF8(_ bytes: UnsafeRawBufferPointer, base: Int) throws(JSONError) {
        if let offset = UTF8Validation.firstInvalidOffset(bytes) {
            throw error("invalid UTF-8", at: base + offset)
        }
    }
}
