import Foundation
import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts
import Yams

/// An entity's attribute: the short form `rating: integer?`, or (version 3) the long
/// form with rules, `rating: { type: integer, optional: true, min: 1, max: 5 }`
/// (README, "Attribute rules"). A rule is checked on every record by `RecordMapper`
/// and `ElementMapper`; a record breaking one is a bad record.
extension PipelineFileReader {
    static let attributeTypesHelp = "string, integer, double, boolean, date, json; a trailing ? makes it optional"

    func readAttribute(_ attribute: String, of entity: String, _ node: Node) throws(PipelineFileError) -> AttributeDescription {
        let what = "\(entity).\(attribute)"
        guard case .mapping = node else {
            let (type, optional) = try attributeType(node, what)
            return AttributeDescription(name: attribute, type: type, isOptional: optional)
        }
        try requireVersion3(node, "the long form of attribute \(what)")
        let keys = try keyedMapping(node, "attribute \(what)", allowed: ["type", "optional", "min", "max", "min_length", "max_length", "pattern", "in"],
                                    required: ["type"])
        var (type, optional) = try attributeType(keys["type"]!, what)
        if let node = keys["optional"] {
            let said = try boolean(node, "optional of \(what)")
            guard said || !optional else { throw error(node, "optional: false of \(what) contradicts its type \(type.rawValue)?") }
            optional = said
        }
        var rules: [AttributeRule] = []
        var bounds: [AttributeRule.Bound] = []
        for (key, make) in [("min", AttributeRule.minValue), ("max", AttributeRule.maxValue)] {
            guard let node = keys[key] else { continue }
            try requireRule(key, fits: make(.integer(0)), type, node, what)
            bounds.append(try bound(node, type: type, "\(key) of \(what)"))
            rules.append(make(bounds.last!))
        }
        if keys["min"] != nil, keys["max"] != nil, let order = AttributeRuleChecker.compare(bounds[0].storeValue, bounds[1].storeValue), order > 0 {
            throw error(keys["max"], "max of \(what) is below its min")
        }
        var lengths: [Int] = []
        for (key, make) in [("min_length", AttributeRule.minLength), ("max_length", AttributeRule.maxLength)] {
            guard let node = keys[key] else { continue }
            try requireRule(key, fits: make(0), type, node, what)
            lengths.append(try integer(node, "\(key) of \(what)", in: 0...Int(Int32.max)))
            rules.append(make(lengths.last!))
        }
        if lengths.count == 2, lengths[0] > lengths[1] {
            throw error(keys["max_length"], "max_length of \(what) is below its min_length")
        }
        if let node = keys["pattern"] {
            let pattern = try string(node, "pattern of \(what)")
            try requireRule("pattern", fits: .pattern(pattern), type, node, what)
            switch AttributeRuleChecker.patternProblem(pattern) {
            case .notAnExpression?: throw error(node, "pattern of \(what) is not a regular expression: \"\(pattern)\"")
            case .cannotBeAnchored?:
                throw error(node, "pattern of \(what) cannot be made to match the whole text: \"\(pattern)\" ends inside a (?x) comment or a \\Q quote")
            case nil: break
            }
            rules.append(.pattern(pattern))
        }
        if let node = keys["in"] {
            try requireRule("in", fits: .allowedValues([] as [StoreValue]), type, node, what)
            guard case .sequence(let items) = node, !items.isEmpty else {
                throw error(node, "in of \(what) must be a list of allowed values, not \(written(node))")
            }
            var allowed: [StoreValue] = []
            for item in items { allowed.append(try allowedValue(item, type: type, "in of \(what)")) }
            rules.append(.allowedValues(allowed))
        }
        return AttributeDescription(name: attribute, type: type, isOptional: optional, validation: rules)
    }

    /// `integer?` → (.integer, optional).
    private func attributeType(_ node: Node, _ what: String) throws(PipelineFileError) -> (AttributeType, Bool) {
        var typeName = try string(node, "the type of \(what)")
        let optional = typeName.hasSuffix("?")
        if optional { typeName.removeLast() }
        guard let type = AttributeType(rawValue: typeName) else {
            throw error(node, "unknown type \"\(typeName)\" for \(what) (\(Self.attributeTypesHelp))")
        }
        if type == .json { try requireVersion2(node, "the json type of \(what)") }
        return (type, optional)
    }

    private func requireRule(_ key: String, fits rule: AttributeRule, _ type: AttributeType, _ node: Node, _ what: String) throws(PipelineFileError) {
        guard rule.fits(type) else {
            let takes = switch key {
            case "min", "max": "integer, double and date"
            case "in": "every type but json"
            default: "string"
            }
            throw error(node, "\(key) of \(what) does not apply to an attribute of type \(type.rawValue) (it applies to \(takes) attributes)")
        }
    }

    /// A `min`/`max`: a number for a number attribute, an ISO-8601 date for a date.
    private func bound(_ node: Node, type: AttributeType, _ what: String) throws(PipelineFileError) -> AttributeRule.Bound {
        let text = try string(node, what)
        if type == .date {
            guard case .success(.real(let seconds)) = ValueConverter.convert(.string(text), to: .date, dates: .iso8601, patterns: DatePatterns()) else {
                throw error(node, "\(what) must be an ISO-8601 date (like 2024-01-01 or 2024-01-01T00:00:00Z), not \(written(node))")
            }
            return .date(Date(timeIntervalSince1970: seconds))
        }
        switch ValueConverter.convert(.string(text), to: .double, dates: .iso8601, patterns: DatePatterns()) {
        case .success(.real(let number)) where number.isFinite:
            if let whole = Int64(text) { return .integer(whole) }
            return .number(number)
        default:
            throw error(node, "\(what) must be a number, not \(written(node))")
        }
    }

    /// One value of `in`, converted as a JSON string of it would be for the attribute.
    private func allowedValue(_ node: Node, type: AttributeType, _ what: String) throws(PipelineFileError) -> StoreValue {
        let text = try string(node, what)
        switch ValueConverter.convert(.string(text), to: type, dates: .iso8601, patterns: DatePatterns()) {
        case .success(let value) where !value.isNull: return value
        default: throw error(node, "\(what): \(written(node)) is not a value of type \(type.rawValue)")
        }
    }
}
