import SwellCSV
import SwellCalendar
import SwellJSON
import SwellStore

/// A flat source's field mapping compiled for `JSONProjectionReader`: one projected
/// field per attribute, read as the JSON kind its type takes as it is (an integer
/// attribute reads integers, a string attribute strings, an ISO-8601 date a string
/// parsed in place, a Unix date a number).
///
/// A value the fast reading does not take as it is — a numeric string for an
/// integer, a number for a string attribute, a missing required value, a record
/// that is not an object — is not converted here: the record goes to
/// `RecordMapper` whole (`needsMapper`), which converts by the Values table or says
/// why the record is bad. So both ways give one answer for every record.
struct ProjectedMapping: Sendable {
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

    init(mapper: RecordMapper) {
        var fields: [JSONProjection.Field] = []
        var conversions: [Conversion] = []
        var needsValue: [Bool] = []
        for (index, attribute) in mapper.entity.attributes.enumerated() {
            let field = mapper.fields[index]
            let conversion: Conversion
            let kind: JSONProjection.Kind
            switch attribute.type {
            case .integer: (conversion, kind) = (.integer, .integer)
            case .double: (conversion, kind) = (.double, .double)
            case .boolean: (conversion, kind) = (.boolean, .boolean)
            case .string: (conversion, kind) = (.string, .string)
            case .json: (conversion, kind) = (.json, .json)
            case .date:
                switch field.dates {
                case .iso8601: (conversion, kind) = (.isoDate, .string)
                case .unix: (conversion, kind) = (.unixDate(divisor: 1), .double)
                case .unixMilliseconds: (conversion, kind) = (.unixDate(divisor: 1000), .double)
                case .pattern(let pattern): (conversion, kind) = (.patternDate(pattern), .string)
                }
            }
            fields.append(JSONProjection.Field(field.path, as: kind))
            conversions.append(conversion)
            needsValue.append(!attribute.isOptional || mapper.keyIndices.contains(index))
        }
        projection = JSONProjection(fields: fields)
        self.conversions = conversions
        self.needsValue = needsValue
    }
}
