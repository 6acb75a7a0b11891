/// A string token that `RecordProjector.scanString` read.
struct ScannedString {
    /// The index after the closing quote.
    var end: Int
    /// When the string has escapes: where its decoded bytes start in `strings`
    /// (they run to the end); nil when its content is the input as it is.
    var decodedStart: Int?
}

/// Scalars, read with a `JSONScanner` at the current line, and errors.
extension RecordProjector {
    /// A scanner for a token on the current line.
    var scanner: JSONScanner { JSONScanner(line: line, lineStart: lineStart) }

    /// An error at an absolute byte offset on the current line.
    func error(_ message: String, at offset: Int) -> JSONError {
        scanner.error(message, at: offset)
    }

    /// The error for an unexpected byte, worded by what the parser expected there.
    func unexpected(_ byte: UInt8, at offset: Int) -> JSONError {
        let expected = switch state {
        case .value: inArray ? "expected a value after ','" : "expected a value after ':'"
        case .valueOrArrayEnd: "expected a value or ']'"
        case .keyOrObjectEnd: "expected a string key or '}'"
        case .key: "expected a string key after ','"
        case .colon: "expected ':' after an object key"
        case .afterElement: "expected ',' or ']' after an array element"
        case .afterMember: "expected ',' or '}' after an object member"
        }
        return error(expected, at: offset)
    }

    /// Scans a string whose opening quote is at `start`, decoding escapes onto `strings`; nil when the buffer ends inside it.
    mutating func scanString(_ buffer: UnsafeRawBufferPointer, from start: Int, base: Int) throws(JSONError) -> ScannedString? {
        let decodedStart = strings.count
        guard let (end, escaped) = try scanner.string(buffer, from: start, base: base, decodingInto: &strings) else { return nil }
        return ScannedString(end: end, decodedStart: escaped ? decodedStart : nil)
    }

    /// Scans a number starting at `start`; the index after it, or nil when the buffer ends where it could go on.
    func scanNumber(_ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool) throws(JSONError) -> Int? {
        try scanner.number(buffer, from: start, base: base, isFinal: isFinal)
    }

    /// Checks `true`, `false` or `null` at `start`; false when the buffer ends inside it.
    func scanLiteral(
        _ literal: StaticString, _ buffer: UnsafeRawBufferPointer, from start: Int, base: Int, isFinal: Bool
    ) throws(JSONError) -> Bool {
        try scanner.literal(literal, buffer, from: start, base: base, isFinal: isFinal)
    }
}
