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
