/// A parsed JSON value. Numbers keep their text so conversions are exact.
///
/// Values compare member by member, objects in member order, numbers by their text.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its text.
    case number(JSONNumber)
    /// A string, with its escapes decoded.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in input order.
    case object(JSONObject)

    /// Parses one whole document (for small documents and tests).
    ///
    /// The input must be exactly one RFC 8259 value, optionally surrounded by
    /// whitespace, in UTF-8 without a byte-order mark. The parser is iterative;
    /// nesting deeper than `maxDepth` arrays and objects is an error, not a crash.
    ///
    /// - Throws: `JSONError` naming the first invalid byte.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        let parsed: Result<JSONValue, JSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            parseContiguous(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
        }
        if let parsed {
            return try parsed.get()
        }
        return try Array(bytes).withUnsafeBytes { parseContiguous($0, maxDepth: maxDepth) }.get()
    }

    private static func parseContiguous(_ buffer: UnsafeRawBufferPointer, maxDepth: Int) -> Result<JSONValue, JSONError> {
        var machine = JSONMachine(mode: .document, recordsPath: nil, capturePaths: [], maxDepth: maxDepth)
        return parseContiguous(buffer, with: &machine)
    }

    /// Parses `buffer` as one document with `machine` (in document mode, at its start).
    fileprivate static func parseContiguous(_ buffer: UnsafeRawBufferPointer, with machine: inout JSONMachine) -> Result<JSONValue, JSONError> {
        var position = 0
        var result: JSONValue?
        do {
            while case .record(let value) = try machine.step(buffer, &position, base: 0, isFinal: true) {
                result = value
            }
            try machine.checkComplete(at: buffer.count)
        } catch {
            return .failure(error)
        }
        guard let result else {
            return .failure(machine.error("expected a value", at: buffer.count))
        }
        return .success(result)
    }

    /// What kind of value this is, for messages: "null", "a boolean", "a number",
    /// "a string", "an array", "an object".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value at a dot path of object keys (e.g. ["meta", "next_cursor"]); nil when any step is missing or not an object.
    ///
    /// The empty path gives the value itself. With duplicate keys the last one wins.
    public func value(at path: [String]) -> JSONValue? {
        var current = self
        for key in path {
            guard case .object(let object) = current, let next = object[key] else { return nil }
            current = next
        }
        return current
    }
}

extension JSONValue {
    /// Parses one document after another with the same stacks, as `JSONValue.parse` does
    /// each: for many small documents — records read again from their bytes — where a
    /// parser made per document would allocate its stacks each time.
    public struct Parser: Sendable {
        private var machine: JSONMachine

        /// A parser refusing nesting deeper than `maxDepth` (as `JSONValue.parse`).
        public init(maxDepth: Int = 512) {
            machine = JSONMachine(mode: .document, recordsPath: nil, capturePaths: [], maxDepth: maxDepth)
        }

        /// The one value `bytes` hold (see `JSONValue.parse`).
        ///
        /// - Throws: `JSONError` naming the first invalid byte.
        public mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> JSONValue {
            machine.restartDocument()
            return try JSONValue.parseContiguous(bytes, with: &machine).get()
        }
    }
}
