import Foundation

/// Relationships (store.md 28–30): a to-one is a column of the object's row
/// holding the destination's primary key, so it moves up the levels, merges and
/// rolls back exactly like an attribute; a to-many is read through its inverse
/// to-one (the destinations whose inverse column names this object), so both
/// sides are always in step in every context.
extension ManagedObject {
    /// The value of a relationship: the destination object (or nil) for a
    /// to-one, a `Set<ManagedObject>` for a to-many; nil when `key` is not one.
    func relationshipValue(forKey key: String) -> Any?? {
        if let index = attributeIndex[key], let destination = entity.attributes[index].destination {
            return .some(destinationObject(storeValue(at: index), entity: destination))
        }
        guard let relationship = entity.relationship(named: key), relationship.isToMany else { return nil }
        return .some(Set(members(of: relationship)))
    }

    /// The object a to-one column's value names, in this object's context.
    func destinationObject(_ value: StoreValue, entity destination: String) -> ManagedObject? {
        guard case .integer(let primaryKey) = value, let context = managedObjectContext else { return nil }
        return context.object(with: ObjectID(entityName: destination, primaryKey: primaryKey, storeIdentifier: objectID.storeIdentifier))
    }

    /// The destinations of a to-many: the objects whose inverse to-one names this one,
    /// as this context sees them (its unsaved changes and its parents' included).
    func members(of relationship: RelationshipDescription) -> [ManagedObject] {
        guard let context = managedObjectContext, let inverse = relationship.inverse else { return [] }
        var request = FetchRequest(entityName: relationship.destination)
        do {
            request.predicate = FetchPredicate(format: "%K == %@", inverse, objectID.primaryKey)
            return try context.fetch(request)
        } catch let error as StoreError {
            // A getter cannot throw: the read's failure makes the next save throw it.
            context.recordInvalidValue(error)
        } catch {
            context.recordInvalidValue(.invalidRelationshipValue(entity: entity.name, relationship: relationship.name,
                                                                 reason: "reading it failed: \(error)"))
        }
        return []
    }

    /// Sets a relationship from `setValue(_:forKey:)`; false when `key` is not a relationship.
    func setRelationship(_ value: Any?, forKey key: String, in context: ManagedObjectContext) -> Bool {
        if let index = attributeIndex[key], let destination = entity.attributes[index].destination {
            guard let target = destinationArgument(value, relationship: key, destination: destination, in: context) else { return true }
            setToOne(index: index, to: target.object, in: context)
            return true
        }
        guard let relationship = entity.relationship(named: key), relationship.isToMany else { return false }
        guard let targets = collectionArgument(value, relationship: relationship, in: context) else { return true }
        replaceMembers(of: relationship, with: targets, in: context)
        return true
    }

    /// A to-one's new value: `.some(object or nil)`, or nil (recorded as invalid) when it cannot be held.
    private func destinationArgument(_ value: Any?, relationship: String, destination: String,
                                     in context: ManagedObjectContext) -> (object: ManagedObject?, Void)? {
        guard let value, !isNilValue(value) else { return (nil, ()) }
        guard let object = value as? ManagedObject else {
            context.recordInvalidValue(.invalidRelationshipValue(entity: entity.name, relationship: relationship,
                                                                 reason: "expected a \(destination) object or nil, got a value of type \(type(of: value))"))
            return nil
        }
        guard object.entity.name == destination else {
            context.recordInvalidValue(.invalidRelationshipValue(entity: entity.name, relationship: relationship,
                                                                 reason: "expected a \(destination) object, got a \(object.entity.name)"))
            return nil
        }
        guard object.managedObjectContext === context else {
            context.recordInvalidValue(.invalidRelationshipValue(entity: entity.name, relationship: relationship,
                                                                 reason: "\(object.objectID) belongs to another context; use object(with:) on its objectID"))
            return nil
        }
        return (object, ())
    }

    /// A to-many's new members, or nil (recorded as invalid) when `value` is not a collection of destinations.
    private func collectionArgument(_ value: Any?, relationship: RelationshipDescription, in context: ManagedObjectContext) -> [ManagedObject]? {
        let items: [Any]
        switch value {
        case nil: items = []
        case let set as Set<ManagedObject>: items = Array(set)
        case let array as [ManagedObject]: items = array
        case let set as RelationshipSet: items = set.allObjects
        case let array as [Any]: items = array
        case let set as NSSet: items = set.allObjects
        default:
            if let value, isNilValue(value) {
                items = []
            } else {
                context.recordInvalidValue(.invalidRelationshipValue(
                    entity: entity.name, relationship: relationship.name,
                    reason: "expected a Set or an array of \(relationship.destination) objects, got a value of type \(type(of: value!))"))
                return nil
            }
        }
        var objects: [ManagedObject] = []
        for item in items {
            guard let target = destinationArgument(item, relationship: relationship.name, destination: relationship.destination, in: context) else {
                return nil
            }
            if let object = target.object, !objects.contains(where: { $0 === object }) { objects.append(object) }
        }
        return objects
    }

    /// Sets a to-one column and, for a one-to-one, keeps the inverse in step: the old
    /// destination lets go of this object, the new one lets go of its old partner.
    func setToOne(index: Int, to target: ManagedObject?, in context: ManagedObjectContext) {
        let attribute = entity.attributes[index]
        let old = destinationObject(storeValue(at: index), entity: attribute.destination!)
        context.recordChange(of: self, attribute: index, to: target.map { .integer($0.objectID.primaryKey) } ?? .null)
        guard let inverseName = entity.relationship(named: attribute.name)?.inverse, old !== target else { return }
        if let old, let oldIndex = old.attributeIndex[inverseName], old.entity.attributes[oldIndex].destination != nil,
           old.storeValue(at: oldIndex) == .integer(objectID.primaryKey) {
            context.recordChange(of: old, attribute: oldIndex, to: .null)
        }
        if let target, let targetIndex = target.attributeIndex[inverseName], target.entity.attributes[targetIndex].destination != nil {
            if let previous = target.destinationObject(target.storeValue(at: targetIndex), entity: entity.name), previous !== self,
               previous.storeValue(at: index) == .integer(target.objectID.primaryKey) {
                context.recordChange(of: previous, attribute: index, to: .null)
            }
            context.recordChange(of: target, attribute: targetIndex, to: .integer(objectID.primaryKey))
        }
    }

    /// Makes a to-many hold exactly `targets`: members not among them lose their inverse
    /// to-one, new ones point here.
    func replaceMembers(of relationship: RelationshipDescription, with targets: [ManagedObject], in context: ManagedObjectContext) {
        guard let inverse = relationship.inverse else { return }
        let current = members(of: relationship)
        for member in current where !targets.contains(where: { $0 === member }) {
            if let index = member.attributeIndex[inverse] { member.setToOne(index: index, to: nil, in: context) }
        }
        for target in targets where !current.contains(where: { $0 === target }) {
            if let index = target.attributeIndex[inverse] { target.setToOne(index: index, to: self, in: context) }
        }
    }

    /// The to-many relationship named `key` as a set that changes it (Core Data's
    /// `mutableSetValue(forKey:)`): inserting sets the member's inverse to this object,
    /// removing clears it.
    public func mutableSetValue(forKey key: String) -> RelationshipSet {
        managedObjectContext?.assertOnQueue("change \(entity.name).\(key)")
        guard let relationship = entity.relationship(named: key), relationship.isToMany else {
            preconditionFailure("SwellStore: \(entity.name) has no to-many relationship named '\(key)'")
        }
        return RelationshipSet(owner: self, relationship: relationship)
    }

    /// The ordered to-many relationship named `key` as an ordered set that changes it
    /// (Core Data's `mutableOrderedSetValue(forKey:)`).
    public func mutableOrderedSetValue(forKey key: String) -> RelationshipSet {
        managedObjectContext?.assertOnQueue("change \(entity.name).\(key)")
        guard let relationship = entity.relationship(named: key), relationship.isToMany else {
            preconditionFailure("SwellStore: \(entity.name) has no to-many relationship named '\(key)'")
        }
        return RelationshipSet(owner: self, relationship: relationship)
    }

    private func isNilValue(_ value: Any) -> Bool {
        if value is NSNull { return true }
        if let optional = value as? any OptionalRelationshipValue { return optional.isNilRelationshipValue }
        return false
    }
}

/// Lets the relationship setters see a nil boxed in `Any`.
private protocol OptionalRelationshipValue {
    var isNilRelationshipValue: Bool { get }
}

extension Optional: OptionalRelationshipValue {
    fileprivate var isNilRelationshipValue: Bool { self == nil }
}

/// A to-many relationship of one object, as a live collection that changes it
/// (what `mutableSetValue(forKey:)` returns): reads see the relationship as it is
/// now in the object's context; `insert`/`add` and `remove` change the members'
/// inverse to-one. Used on the object's context's queue only.
public final class RelationshipSet: Sequence {
    private let owner: ManagedObject
    private let relationship: RelationshipDescription

    init(owner: ManagedObject, relationship: RelationshipDescription) {
        self.owner = owner
        self.relationship = relationship
    }

    /// The members now.
    public var allObjects: [ManagedObject] { owner.members(of: relationship) }
    /// The members now, as a set.
    public var set: Set<ManagedObject> { Set(allObjects) }
    /// How many members there are.
    public var count: Int { allObjects.count }
    /// Whether there are none.
    public var isEmpty: Bool { allObjects.isEmpty }

    /// Whether `object` is a member.
    public func contains(_ object: ManagedObject) -> Bool { allObjects.contains { $0 === object } }

    /// Adds `object` (its inverse to-one now names the owner).
    public func insert(_ object: ManagedObject) {
        guard let context = owner.managedObjectContext else { return }
        guard let target = checked(object, in: context), let inverse = relationship.inverse,
              let index = target.attributeIndex[inverse] else { return }
        target.setToOne(index: index, to: owner, in: context)
    }

    /// Adds `object` (NSMutableSet's name).
    public func add(_ object: ManagedObject) { insert(object) }
    /// Adds `object` (NSMutableOrderedSet's name).
    public func append(_ object: ManagedObject) { insert(object) }

    /// Adds every object of `objects`.
    public func formUnion<S: Sequence>(_ objects: S) where S.Element == ManagedObject {
        for object in objects { insert(object) }
    }

    /// Removes `object` (its inverse to-one becomes nil) when it is a member.
    public func remove(_ object: ManagedObject) {
        guard let context = owner.managedObjectContext, let inverse = relationship.inverse,
              let index = object.attributeIndex[inverse], contains(object) else { return }
        object.setToOne(index: index, to: nil, in: context)
    }

    /// Removes every member.
    public func removeAll() {
        guard let context = owner.managedObjectContext else { return }
        owner.replaceMembers(of: relationship, with: [], in: context)
    }

    /// Removes every member (NSMutableSet's name).
    public func removeAllObjects() { removeAll() }

    public func makeIterator() -> IndexingIterator<[ManagedObject]> { allObjects.makeIterator() }

    private func checked(_ object: ManagedObject, in context: ManagedObjectContext) -> ManagedObject? {
        guard object.entity.name == relationship.destination, object.managedObjectContext === context else {
            context.recordInvalidValue(.invalidRelationshipValue(
                entity: owner.entity.name, relationship: relationship.name,
                reason: "expected a \(relationship.destination) object of the same context, got \(object.objectID)"))
            return nil
        }
        return object
    }
}

@available(*, unavailable, message: "a relationship set is confined to its object's context's queue")
extension RelationshipSet: Sendable {}
