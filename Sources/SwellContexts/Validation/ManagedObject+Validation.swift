import Foundation
import SwellStoreCore

/// Validation on demand (Store guarantees 55): the checks a save makes, for one object now.
/// Each method throws a `StoreError` listing every failure (`validationFailures`), as a save would.
extension ManagedObject {
    /// Checks the object as a save of its insertion would: every required value and
    /// relationship, every attribute rule, the to-many counts, the entity's `validateForInsert`.
    public func validateForInsert() throws {
        try throwIfFailed(failures(for: .insert))
    }

    /// Checks the object as a save of its changes would: every required value and
    /// relationship, every attribute rule, the to-many counts, the entity's `validateForUpdate`.
    public func validateForUpdate() throws {
        try throwIfFailed(failures(for: .update))
    }

    /// Checks whether the object may be deleted: no `deny` relationship still has
    /// destinations, and the entity's `validateForDelete` accepts it.
    public func validateForDelete() throws {
        try throwIfFailed(failures(for: .delete))
    }

    /// Checks whether `value` may be set for `key` (an attribute or relationship): its type,
    /// whether it may be nil, the attribute's rules, a to-many's counts. Changes nothing.
    ///
    /// - Throws: `StoreError.unknownAttribute` for a key that is neither; otherwise a
    ///   validation error listing the failures.
    public func validateValue(_ value: Any?, forKey key: String) throws {
        try throwIfFailed(failures(ofValue: value, forKey: key))
    }

    /// `validateValue(_:forKey:)` in Core Data's shape, for code that passes the value by reference.
    /// The value is never changed.
    public func validateValue(_ value: inout Any?, forKey key: String) throws {
        try throwIfFailed(failures(ofValue: value, forKey: key))
    }

    private func throwIfFailed(_ failures: [ValidationFailure]) throws {
        if !failures.isEmpty { throw StoreError.validationFailed(failures) }
    }

    private var validationPlan: EntityValidationPlan {
        managedObjectContext?.coordinator?.validationPlans[entity.name]
            ?? EntityValidationPlan(entity: entity, entities: [entity.name: entity], indices: attributeIndex)
    }

    private func failures(for operation: ValidationFailure.Operation) -> [ValidationFailure] {
        managedObjectContext?.assertOnQueue("validate a \(entity.name)")
        let plan = validationPlan
        var failures: [ValidationFailure] = []
        if operation == .delete {
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                let count = members(of: relationship).count
                if count > 0 {
                    failures.append(ValidationFailure(object: objectID, key: relationship.name, value: .integer(Int64(count)),
                                                      rule: .deleteDenied, isRelationship: true))
                }
            }
        } else {
            plan.valueFailures(currentValues(), at: nil, object: objectID, entity: entity, into: &failures)
            plan.countFailures(of: self, into: &failures)
        }
        if let failure = plan.closureFailure(operation, of: self) { failures.append(failure) }
        return failures
    }

    private func failures(ofValue value: Any?, forKey key: String) throws -> [ValidationFailure] {
        managedObjectContext?.assertOnQueue("validate \(entity.name).\(key)")
        let plan = validationPlan
        let value = value is NSNull ? nil : value
        if let relationship = entity.relationship(named: key) {
            if relationship.isToMany {
                let count: Int
                switch value {
                case nil: count = 0
                case let set as Set<ManagedObject>: count = set.count
                case let array as [ManagedObject]: count = array.count
                case let collection as RelationshipSet: count = collection.count
                default:
                    throw StoreError.invalidRelationshipValue(entity: entity.name, relationship: key,
                                                              reason: "a to-many takes a Set or an array of objects, not a \(type(of: value!))")
                }
                return EntityValidationPlan.countFailure(of: relationship, count: count, object: objectID).map { [$0] } ?? []
            }
            if value == nil && !relationship.isOptional {
                return [ValidationFailure(object: objectID, key: key, value: .null, rule: .required, isRelationship: true)]
            }
            return []
        }
        guard let index = attributeIndex[key], entity.attributes[index].destination == nil, entity.attributes[index].join == nil else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: key)
        }
        let type = entity.attributes[index].type
        guard let stored = StoreValue(swiftValue: value, for: type) else {
            return [ValidationFailure(object: objectID, key: key, value: nil, rule: .type(type))]
        }
        var values = currentValues()
        values[index] = stored
        var mask = AttributeMask.empty
        mask.insert(index)
        var failures: [ValidationFailure] = []
        plan.valueFailures(values, at: mask, object: objectID, entity: entity, into: &failures)
        return failures
    }
}
