import Foundation
import SwellCalendar
import SwellJSON
import SwellContexts

/// An entity's attribute rules (pipeline-file "Attribute rules", README) compiled once,
/// and the bad-record message for a value breaking one, in the pipeline file's words.
struct AttributeRules: Sendable {
    /// Per attribute index: its rules, or nil when it has none.
    private let checkers: [AttributeRuleChecker?]
    private let types: [AttributeType]

    init(_ entity: EntityDescription) {
        checkers = entity.attributes.map { $0.validation.isEmpty ? nil : AttributeRuleChecker($0.validation) }
        types = entity.attributes.map(\.type)
    }

    /// Whether any attribute has rules.
    var isEmpty: Bool { !checkers.contains { $0 != nil } }

    /// Whether attribute `index` has rules.
    func hasRules(_ index: Int) -> Bool { checkers[index] != nil }

    /// Why `value` (read from `raw`) breaks a rule of attribute `index`, or nil when it keeps them.
    func breach(attribute index: Int, value: StoreValue, raw: JSONValue) -> String? {
        guard let checker = checkers[index], let rule = checker.brokenRule(by: value) else { return nil }
        var shown = raw.jsonText
        if shown.count > 80 { shown = String(shown.prefix(77)) + "..." }
        return "\(shown) breaks the rule \(Self.describe(rule, type: types[index]))"
    }

    /// Whether `value` keeps attribute `index`'s rules (true when it has none).
    func keeps(attribute index: Int, _ value: StoreValue) -> Bool {
        checkers[index]?.brokenRule(by: value) == nil
    }

    /// A rule as the pipeline file writes it: `max: 5`, `in: [open, closed]`.
    static func describe(_ rule: AttributeRule, type: AttributeType) -> String {
        switch rule {
        case .minValue(let bound): "min: \(describe(bound))"
        case .maxValue(let bound): "max: \(describe(bound))"
        case .minLength(let length): "min_length: \(length)"
        case .maxLength(let length): "max_length: \(length)"
        case .pattern(let pattern): "pattern: \"\(pattern)\""
        case .allowedValues(let values): "in: [\(values.map { describe($0, type: type) }.joined(separator: ", "))]"
        }
    }

    private static func describe(_ bound: AttributeRule.Bound) -> String {
        switch bound {
        case .integer(let int): String(int)
        case .number(let double): String(double)
        case .date(let date): ISODate.string(fromSeconds: date.timeIntervalSince1970)
        }
    }

    private static func describe(_ value: StoreValue, type: AttributeType) -> String {
        switch (value, type) {
        case (.null, _): "null"
        case (.integer(let int), .boolean): int != 0 ? "true" : "false"
        case (.integer(let int), _): String(int)
        case (.real(let seconds), .date): ISODate.string(fromSeconds: seconds)
        case (.real(let double), _): String(double)
        case (.text(let text), _): text
        }
    }
}
