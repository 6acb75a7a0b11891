import SwellCalendar
import SwellJSON
import SwellContexts

/// What the non-null values of one JSON key look like, and the attribute type
/// (or nesting) that fits them all, with the reason written beside it.
///
/// - all `true`/`false`: boolean; all whole numbers within 64 bits: integer;
///   all numbers, some with a fraction: double; all strings that parse as
///   ISO-8601 (`ISODate`, the parser records are read with): date; other
///   strings, or strings mixed with numbers or booleans: string (the contract
///   turns numbers and booleans into their text);
/// - all objects: a to-one candidate; all arrays of objects (empty arrays
///   allowed): a to-many candidate;
/// - arrays of scalars, objects mixed with anything else, only empty arrays,
///   or only nulls: json (keeps any value).
struct FieldShape {
    enum Kind {
        case attribute
        case nested(objects: [JSONObject], many: Bool)

        var isNested: Bool { if case .nested = self { true } else { false } }
        var isMany: Bool { if case .nested(_, true) = self { true } else { false } }
    }

    var kind: Kind = .attribute
    /// The attribute type (nil for a nested candidate, which becomes `json` if it has no key).
    var type: AttributeType?
    var reason: String

    init(type: AttributeType, reason: String) {
        self.type = type
        self.reason = reason
    }

    init(_ field: FieldStats) {
        let values = field.values
        let count = values.count
        guard let first = values.first else {
            self.init(type: .json, reason: "json: only null seen, so any value is kept")
            return
        }
        let example = Self.example(first)
        if values.allSatisfy({ if case .bool = $0 { true } else { false } }) {
            self.init(type: .boolean, reason: "boolean: true/false in all \(count) values")
        } else if values.allSatisfy({ if case .number = $0 { true } else { false } }) {
            self.init(numbers: values)
        } else if values.allSatisfy(\.isString) {
            self.init(strings: values, example: example)
        } else if values.allSatisfy({ if case .object = $0 { true } else { false } }) {
            let objects = values.compactMap { if case .object(let object) = $0 { object } else { nil } }
            self.init(type: .json, reason: "")
            kind = .nested(objects: objects, many: false)
            type = nil
        } else if values.allSatisfy({ if case .array = $0 { true } else { false } }) {
            self.init(arrays: values)
        } else if values.allSatisfy({ !$0.isContainer }) {
            self.init(type: .string, reason: "string: a mix of \(Self.kinds(values)), kept as text")
        } else {
            self.init(type: .json, reason: "json: mixed shapes (\(Self.kinds(values))), kept whole")
        }
    }

    private init(numbers values: [JSONValue]) {
        let numbers = values.compactMap { if case .number(let number) = $0 { number } else { nil } }
        if numbers.allSatisfy({ $0.int64 != nil }) {
            self.init(type: .integer, reason: "integer: whole numbers in all \(numbers.count) values")
        } else if let fraction = numbers.first(where: { $0.int64 == nil && $0.text.contains(where: { ".eE".contains($0) }) }) {
            self.init(type: .double, reason: "double: numbers with a fraction or exponent (e.g. \(fraction.text))")
        } else {
            self.init(type: .string, reason: "string: whole numbers beyond 64 bits, kept exactly as text")
        }
    }

    private init(strings values: [JSONValue], example: String) {
        let texts = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        if texts.allSatisfy({ ISODate.seconds(from: $0) != nil }) {
            self.init(type: .date, reason: "date: every value is an ISO-8601 date (e.g. \(example))")
        } else if let date = texts.first(where: { ISODate.seconds(from: $0) != nil }),
                  let other = texts.first(where: { ISODate.seconds(from: $0) == nil }) {
            self.init(type: .string, reason: "string: some values are ISO-8601 dates (\(Self.example(.string(date)))), not all (\(Self.example(.string(other))))")
        } else {
            self.init(type: .string, reason: "string: text (e.g. \(example))")
        }
    }

    private init(arrays values: [JSONValue]) {
        let elements: [JSONValue] = values.flatMap { value -> [JSONValue] in if case .array(let items) = value { items } else { [] } }
        if elements.isEmpty {
            self.init(type: .json, reason: "json: only empty arrays seen, kept whole")
        } else if elements.allSatisfy({ if case .object = $0 { true } else { false } }) {
            self.init(type: .json, reason: "")
            kind = .nested(objects: elements.compactMap { if case .object(let object) = $0 { object } else { nil } }, many: true)
            type = nil
        } else if elements.allSatisfy({ !$0.isContainer }) {
            self.init(type: .json, reason: "json: arrays of scalars (\(Self.kinds(elements))), kept whole")
        } else {
            self.init(type: .json, reason: "json: arrays of mixed shapes (\(Self.kinds(elements))), kept whole")
        }
    }

    /// A value as a short example on one line.
    static func example(_ value: JSONValue) -> String {
        var text = value.jsonText
        if text.count > 40 { text = String(text.prefix(37)) + "..." }
        return text
    }

    /// The kinds of values seen, in a fixed order: "numbers and strings".
    static func kinds(_ values: [JSONValue]) -> String {
        var seen: [String] = []
        for value in values {
            let kind = switch value {
            case .null: "nulls"
            case .bool: "booleans"
            case .number: "numbers"
            case .string: "strings"
            case .array: "arrays"
            case .object: "objects"
            }
            if !seen.contains(kind) { seen.append(kind) }
        }
        return seen.sorted().joined(separator: " and ")
    }
}
