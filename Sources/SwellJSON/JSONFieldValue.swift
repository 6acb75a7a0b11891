/// What a `JSONProjectionReader` found for one field of one record.
///
/// The byte buffers point into the reader's own storage or into the chunk
/// being fed: they are valid only during the `JSONProjectionSink` call that
/// receives them. Copy what must outlive it.
public enum JSONFieldValue {
    /// The record has no value at the field's path.
    case missing
    /// The value is an explicit `null` (for every kind).
    case null
    /// An `.integer` field's value.
    case integer(Int64)
    /// A `.double` field's value.
    case double(Double)
    /// A `.boolean` field's value.
    case bool(Bool)
    /// A `.string` field's UTF-8 bytes (escapes decoded), or a `.text` field's text.
    case string(UnsafeRawBufferPointer)
    /// A `.json` field's compact JSON text.
    case json(UnsafeRawBufferPointer)
    /// A value that the field's kind does not take: what was there instead.
    case mismatch(JSONFieldMismatch)
}

@available(*, unavailable)
extension JSONFieldValue: Sendable {}

/// A value that does not fit where it was found: its kind, the start of its
/// text, and where it starts in the page.
///
/// The excerpt is valid only during the `JSONProjectionSink` call that receives it.
public struct JSONFieldMismatch {
    /// The most bytes an excerpt holds.
    public static let excerptLimit = 40

    /// What the value is.
    public let found: JSONValueKind
    /// The value's JSON text, cut after at most `excerptLimit` bytes (at a
    /// character boundary): a string with its quotes and escapes as written,
    /// an array or object in compact form.
    public let excerpt: UnsafeRawBufferPointer
    /// Where the value starts.
    public let position: JSONPosition

    /// A mismatch (made by the reader; public for sinks' tests).
    public init(found: JSONValueKind, excerpt: UnsafeRawBufferPointer, position: JSONPosition) {
        self.found = found
        self.excerpt = excerpt
        self.position = position
    }
}

@available(*, unavailable)
extension JSONFieldMismatch: Sendable {}

/// The kind of a JSON value.
public enum JSONValueKind: Sendable, Hashable, CustomStringConvertible {
    case null, boolean, number, string, array, object

    /// As `JSONValue.kindDescription` words it: "null", "a boolean", "a number",
    /// "a string", "an array", "an object".
    public var description: String {
        switch self {
        case .null: "null"
        case .boolean: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A place in a page: the 0-based byte offset and the 1-based line and byte
/// column, counted as `JSONError` counts them.
public struct JSONPosition: Sendable, Hashable {
    /// The 0-based byte offset from the start of the page.
    public var byteOffset: Int
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in bytes from the start of the line.
    public var column: Int

    /// A position.
    public init(byteOffset: Int, line: Int, column: Int) {
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
    }
}
