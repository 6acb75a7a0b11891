import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts

extension RecordMapper {
    /// The mapping compiled for the projection reader (see `Projected`), for the sinks that
    /// read records straight into batches.
    var projected: Projected { Projected(mapper: self) }

    /// A flat source's field mapping compiled for `JSONProjectionReader`: one projected
    /// field per attribute, read as the JSON kind its type takes as it is (an integer
    /// attribute reads integers, a string attribute strings, an ISO-8601 date a string
    /// parsed in place, a Unix date a number).
    ///
    /// A value the fast reading does not take as it is — a numeric string for an
    /// integer, a number for a string attribute, a missing required value, a record
    /// that is not an object — is not converted here: the record goes to
    /// `RecordMapper` whole (`needsMapper`), which converts by the Values table or says
    /// why the record is bad. So both ways give one answer for every record: the projected
    /// form is the mapper's own fast path, made by it (`RecordMapper.projected`), not a second
    /// mapper.
    struct Projected: Sendable {
        /// How a projected value becomes an attribute's value.
        enum Conversion: Sendable {
            case integer
            case double
            case boolean
            case string
            case json
            /// An ISO-8601 string, parsed from its bytes.
            case isoDate
            /// A number of seconds (or milliseconds: `divisor` 1000) since 1970.
            case unixDate(divisor: Double)
            /// A string in an LDML pattern.
            case patternDate(String)
        }

        let projection: JSONProjection
        /// Per attribute, in entity order (the projection's field order).
        let conversions: [Conversion]
        /// Per attribute: a null or missing value makes `RecordMapper` decide (a required or key attribute).
        let needsValue: [Bool]
        /// The attributes' rules: a value breaking one makes `RecordMapper` decide (and say why).
        let rules: AttributeRules

        init(mapper: RecordMapper) {
            var fields: [JSONProjection.Field] = []
            var conversions: [Conversion] = []
            var needsValue: [Bool] = []
            for (index, attribute) in mapper.entity.attributes.enumerated() {
                let field = mapper.fields[index]
                let (conversion, kind) = Self.conversion(of: attribute.type, dates: field.dates)
                fields.append(JSONProjection.Field(field.path, as: kind))
                conversions.append(conversion)
                needsValue.append(!attribute.isOptional || mapper.keyIndices.contains(index))
            }
            projection = JSONProjection(fields: fields)
            self.conversions = conversions
            self.needsValue = needsValue
            self.rules = mapper.rules
        }

        /// How an attribute of `type` is read and converted (`dates`: a date attribute's format).
        static func conversion(of type: AttributeType, dates: DateFormat) -> (Conversion, JSONProjection.Kind) {
            switch type {
            case .integer: (.integer, .integer)
            case .double: (.double, .double)
            case .boolean: (.boolean, .boolean)
            case .string: (.string, .string)
            case .json: (.json, .json)
            case .date:
                switch dates {
                case .iso8601: (.isoDate, .string)
                case .unix: (.unixDate(divisor: 1), .double)
                case .unixMilliseconds: (.unixDate(divisor: 1000), .double)
                case .pattern(let pattern): (.patternDate(pattern), .string)
                }
            }
        }
    }
}

/// A projected value after its conversion.
enum ProjectedValue {
    /// The path was not in the record.
    case missing
    case null
    /// The value as a batch column takes it (text valid only during the sink's call).
    case value(ColumnBatch.Value)
    /// Not taken as it is: `RecordMapper` (or `ElementMapper`) decides.
    case unconverted
}

extension RecordMapper.Projected.Conversion {
    /// `value` converted as the attribute takes it as it is; `patterns`: the thread's date formatters.
    func convert(_ value: JSONFieldValue, patterns: DatePatterns) -> ProjectedValue {
        switch value {
        case .missing: return .missing
        case .null: return .null
        case .integer(let int): return .value(.integer(int))
        case .double(let double):
            if case .unixDate(let divisor) = self, divisor != 1 { return .value(.double(double / divisor)) }
            return .value(.double(double))
        case .bool(let flag): return .value(.boolean(flag))
        case .string(let bytes):
            switch self {
            case .isoDate:
                guard let seconds = ISODate.seconds(fromUTF8: bytes.assumingMemoryBound(to: UInt8.self)) else { return .unconverted }
                return .value(.double(seconds))
            case .patternDate(let pattern):
                guard let seconds = patterns.seconds(from: String(decoding: bytes, as: UTF8.self), pattern: pattern) else { return .unconverted }
                return .value(.double(seconds))
            default:
                return .value(.text(bytes))
            }
        case .json(let bytes): return .value(.text(bytes))
        case .mismatch: return .unconverted
        }
    }
}
