import SwellStoreCore

/// What validating an object of one entity checks (Store guarantees 55), worked out once per
/// coordinator from its copy of the model: the one place the rules are applied, by a save
/// and by the on-demand `validateFor…()` methods alike.
struct EntityValidationPlan: Sendable {
    /// Required columns: attributes, and to-one relationship columns (`isRelationship`).
    let required: [(index: Int, isRelationship: Bool)]
    /// Columns with rules, each with its compiled checker.
    let checked: [(index: Int, checker: AttributeRuleChecker)]
    /// To-manys that must not be empty or have a count rule.
    let counted: [RelationshipDescription]
    /// Columns that hold another entity's counted to-many: a to-one whose inverse is a counted
    /// to-many, or the owning side of a join table whose inverse is counted. Changing one changes
    /// the count of the destinations it left and joined, which have no row of their own to check.
    let countedThroughColumn: [(index: Int, destination: String, isJoin: Bool)]
    /// The entity's own validation closures.
    let validators: EntityValidators

    init(entity: EntityDescription, entities: [String: EntityDescription], indices: [String: Int]) {
        required = entity.attributes.indices.compactMap { index in
            let attribute = entity.attributes[index]
            guard !attribute.isOptional, attribute.join == nil, attribute.orderOf == nil else { return nil }
            return (index, attribute.destination != nil)
        }
        checked = entity.attributes.indices.compactMap { index in
            entity.attributes[index].validation.isEmpty ? nil : (index, AttributeRuleChecker(entity.attributes[index].validation))
        }
        counted = entity.relationships.filter { $0.isToMany && Self.isCounted($0) }
        countedThroughColumn = entity.relationships.compactMap { relationship in
            guard let inverseName = relationship.inverse,
                  let inverse = entities[relationship.destination]?.relationship(named: inverseName),
                  inverse.isToMany, Self.isCounted(inverse), let index = indices[relationship.name] else { return nil }
            let attribute = entity.attributes[index]
            guard attribute.destination != nil || attribute.join != nil else { return nil }
            return (index, relationship.destination, attribute.join != nil)
        }
        validators = entity.validators
    }

    /// Whether a to-many has something to check: it is required, or has a count rule.
    private static func isCounted(_ relationship: RelationshipDescription) -> Bool {
        !relationship.isOptional || relationship.minCount != nil || relationship.maxCount != nil
    }

    /// Whether a save has nothing to check for the entity's rows.
    var checksNothing: Bool { required.isEmpty && checked.isEmpty && counted.isEmpty && countedThroughColumn.isEmpty && validators.isEmpty }

    // MARK: The rules, one place each

    /// The failures of the values at `indices` (all columns when nil): required columns without
    /// a value, values breaking their attribute's rules.
    func valueFailures(_ values: [StoreValue], at indices: AttributeMask?, object: ObjectID,
                       entity: EntityDescription, into failures: inout [ValidationFailure]) {
        for (index, isRelationship) in required where (indices?.contains(index) ?? true) && values[index].isNull {
            failures.append(ValidationFailure(object: object, key: entity.attributes[index].name, value: .null, rule: .required,
                                              isRelationship: isRelationship))
        }
        for (index, checker) in checked where indices?.contains(index) ?? true {
            if let rule = checker.brokenRule(by: values[index]) {
                failures.append(ValidationFailure(object: object, key: entity.attributes[index].name, value: values[index],
                                                  rule: .attribute(rule)))
            }
        }
    }

    /// The failure, if any, of a to-many holding `count` members.
    static func countFailure(of relationship: RelationshipDescription, count: Int, object: ObjectID) -> ValidationFailure? {
        let rule: ValidationFailure.Rule
        if count == 0 {
            // An optional to-many may be empty whatever its minimum (as in Core Data).
            guard !relationship.isOptional else { return nil }
            rule = .required
        } else if let minimum = relationship.minCount, count < minimum {
            rule = .minCount(minimum)
        } else if let maximum = relationship.maxCount, count > maximum {
            rule = .maxCount(maximum)
        } else {
            return nil
        }
        return ValidationFailure(object: object, key: relationship.name, value: .integer(Int64(count)), rule: rule, isRelationship: true)
    }

    /// The failures of `object`'s counted to-manys.
    func countFailures(of object: ManagedObject, into failures: inout [ValidationFailure]) {
        for relationship in counted {
            if let failure = Self.countFailure(of: relationship, count: object.members(of: relationship).count, object: object.objectID) {
                failures.append(failure)
            }
        }
    }

    /// The failure, if any, of the entity's own validation for `operation`.
    func closureFailure(_ operation: ValidationFailure.Operation, of object: ManagedObject) -> ValidationFailure? {
        let validator = switch operation {
        case .insert: validators.insert
        case .update: validators.update
        case .delete: validators.delete
        }
        guard let validator else { return nil }
        do {
            try validator(object)
            return nil
        } catch {
            return ValidationFailure(object: object.objectID, key: nil, value: nil, rule: .entity(operation), error: error)
        }
    }
}
