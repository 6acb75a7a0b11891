import Foundation

/// One way an object failed validation (Store guarantees 55): which object, which attribute or
/// relationship, the value it held, and the rule it broke.
///
/// A save that finds failures throws one `StoreError` listing **every** failure in
/// `StoreError.validationFailures`, and moves nothing:
///
/// ```swift
/// do {
///     try context.save()
/// } catch let error as StoreError where !error.validationFailures.isEmpty {
///     for failure in error.validationFailures {
///         print(failure.object, failure.key ?? "-", failure.value ?? .null, failure.rule)
///     }
/// }
/// ```
public struct ValidationFailure: Sendable, CustomStringConvertible {
    /// What was checked when an entity's own validation ran.
    public enum Operation: String, Sendable, Hashable {
        case insert, update, delete
    }

    /// The rule an object broke.
    public enum Rule: Sendable, Hashable, CustomStringConvertible {
        /// A required attribute or to-one has no value, or a required to-many is empty.
        case required
        /// A value does not fit the attribute's type (`validateValue(_:forKey:)` only: a save
        /// reports a wrong type as `StoreError.Kind.typeMismatch` when it is set).
        case type(AttributeType)
        /// One of the attribute's rules (`AttributeDescription.validation`).
        case attribute(AttributeRule)
        /// A to-many holds fewer objects than its `minCount`.
        case minCount(Int)
        /// A to-many holds more objects than its `maxCount`.
        case maxCount(Int)
        /// A `deny` relationship still has destinations (`validateForDelete()`).
        case deleteDenied
        /// The entity's own validation for the operation threw (`ValidationFailure.error`).
        case entity(Operation)

        public var description: String {
            switch self {
            case .required: "required"
            case .type(let type): "type \(type.rawValue)"
            case .attribute(let rule): rule.description
            case .minCount(let count): "minCount \(count)"
            case .maxCount(let count): "maxCount \(count)"
            case .deleteDenied: "delete rule deny"
            case .entity(let operation): "validateFor\(operation.rawValue.prefix(1).uppercased() + operation.rawValue.dropFirst())"
            }
        }
    }

    /// The object that failed.
    public var object: ObjectID
    /// The attribute or relationship that failed; nil when the entity's own validation threw.
    public var key: String?
    /// The value as the store keeps it (a to-many's member count for a count rule); nil for the
    /// entity's own validation.
    public var value: StoreValue?
    /// The rule it broke.
    public var rule: Rule
    /// Whether `key` names a relationship (not an attribute).
    public var isRelationship: Bool
    /// What the entity's validation closure threw (`rule` is `.entity`).
    public var error: (any Error)?

    /// A failure of `object`'s `key` holding `value` under `rule`.
    public init(object: ObjectID, key: String?, value: StoreValue?, rule: Rule, isRelationship: Bool = false,
                error: (any Error)? = nil) {
        self.object = object
        self.isRelationship = isRelationship
        self.key = key
        self.value = value
        self.rule = rule
        self.error = error
    }

    /// The entity's name.
    public var entityName: String { object.entityName }

    /// One line: `Spot.rating = 7 breaks maxValue 5 (object …)`.
    public var description: String {
        let subject = key.map { "\(object.entityName).\($0)" } ?? object.entityName
        switch rule {
        case .required:
            return "\(subject) is required but has no value (object \(object))"
        case .entity:
            return "\(subject) failed \(rule) (object \(object)): \(error.map { String(describing: $0) } ?? "no reason given")"
        case .minCount, .maxCount:
            return "\(subject) holds \(value.map(Self.describe) ?? "?") object(s), breaking \(rule) (object \(object))"
        case .deleteDenied:
            return "\(subject) still has \(value.map(Self.describe) ?? "?") object(s) under the delete rule deny (object \(object))"
        case .type, .attribute:
            return "\(subject) = \(value.map(Self.describe) ?? "nil") breaks \(rule) (object \(object))"
        }
    }

    private static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let int): String(int)
        case .real(let double): String(double)
        case .text(let text): "\"\(text.count > 80 ? String(text.prefix(80)) + "…" : text)\""
        }
    }
}

extension AttributeRule: CustomStringConvertible {
    /// The rule in the API's words: `maxValue 5`, `pattern [A-Z]{2}`, `allowedValues [open, closed]`.
    public var description: String {
        switch self {
        case .minValue(let bound): "minValue \(bound)"
        case .maxValue(let bound): "maxValue \(bound)"
        case .minLength(let length): "minLength \(length)"
        case .maxLength(let length): "maxLength \(length)"
        case .pattern(let pattern): "pattern \(pattern)"
        case .allowedValues(let values): "allowedValues [\(values.map(Self.describe).joined(separator: ", "))]"
        }
    }

    private static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let int): String(int)
        case .real(let double): String(double)
        case .text(let text): text
        }
    }
}

extension AttributeRule.Bound: CustomStringConvertible {
    /// The bound as written: `5`, `2.5`, or an ISO-8601 date.
    public var description: String {
        switch self {
        case .integer(let int): String(int)
        case .number(let double): String(double)
        case .date(let date): date.formatted(.iso8601)
        }
    }
}
