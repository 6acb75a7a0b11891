import SwellCSV
import SwellJSON
import SwellContexts
import SwellCalendar

/// Turns JSON values into store values per the Values table of the pipeline
/// file contract; a value that does not fit gives a message for the rejects
/// file and the error (`expected integer, got "five"`). Date patterns are read
/// with the caller's own `DatePatterns` (one per worker: no shared formatter).
enum ValueConverter {
    /// The store value, or a message saying why the JSON value does not fit.
    static func convert(_ value: JSONValue, to type: AttributeType, dates: DateFormat,
                        patterns: DatePatterns) -> Result<StoreValue, ConversionFailure> {
        switch value {
        case .null:
            return .success(.null)
        case _ where type == .json:
            return .success(.text(value.jsonText))
        case .array, .object:
            return .failure(ConversionFailure(expected: type, got: value))
        default:
            break
        }
        switch type {
        case .string:
            switch value {
            case .string(let text): return .success(.text(text))
            case .number(let number): return .success(.text(number.text))
            case .bool(let flag): return .success(.text(flag ? "true" : "false"))
            default: break
            }
        case .integer:
            switch value {
            case .number(let number):
                if let int = number.int64 { return .success(.integer(int)) }
            case .string(let text):
                if let int = wholeNumber(text) { return .success(.integer(int)) }
            default: break
            }
        case .double:
            switch value {
            case .number(let number):
                if let double = number.double { return .success(.real(double)) }
            case .string(let text):
                if let double = decimal(text) { return .success(.real(double)) }
            default: break
            }
        case .boolean:
            switch value {
            case .bool(let flag): return .success(.integer(flag ? 1 : 0))
            case .number(let number) where number.int64 == 0 || number.int64 == 1: return .success(.integer(number.int64!))
            case .string("true"): return .success(.integer(1))
            case .string("false"): return .success(.integer(0))
            default: break
            }
        case .date:
            if let seconds = date(value, format: dates, patterns: patterns) { return .success(.real(seconds)) }
            return .failure(ConversionFailure(expected: type, got: value, dateFormat: dates))
        case .json:
            break  // every value was taken above
        }
        return .failure(ConversionFailure(expected: type, got: value))
    }

    /// "a string of digits": an optional minus sign and digits, within 64 bits.
    static func wholeNumber(_ text: String) -> Int64? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }

    /// A numeric string: a JSON-style number (no NaN or Infinity spellings, no hex).
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 43 || $0 == 46 || $0 == 101 || $0 == 69 }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    static func date(_ value: JSONValue, format: DateFormat, patterns: DatePatterns) -> Double? {
        switch (format, value) {
        case (.iso8601, .string(let text)):
            return ISODate.seconds(from: text)
        case (.unix, .number(let number)):
            return number.double
        case (.unix, .string(let text)):
            return decimal(text)
        case (.unixMilliseconds, .number(let number)):
            return number.double.map { $0 / 1000 }
        case (.unixMilliseconds, .string(let text)):
            return decimal(text).map { $0 / 1000 }
        case (.pattern(let pattern), .string(let text)):
            return patterns.seconds(from: text, pattern: pattern)
        default:
            return nil
        }
    }
}

/// Why a value did not convert.
struct ConversionFailure: Error {
    var expected: AttributeType
    var got: JSONValue
    var dateFormat: DateFormat?

    var message: String {
        var shown = got.jsonText
        if shown.count > 80 { shown = String(shown.prefix(77)) + "..." }
        switch dateFormat {
        case .pattern(let pattern)?: return "expected a date like \"\(pattern)\", got \(shown)"
        case .unix?: return "expected a date in Unix seconds, got \(shown)"
        case .unixMilliseconds?: return "expected a date in Unix milliseconds, got \(shown)"
        case .iso8601?: return "expected an ISO-8601 date, got \(shown)"
        case nil: return "expected \(expected.rawValue), got \(shown)"
        }
    }
}
