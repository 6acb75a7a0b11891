import Foundation
import SwellStoreCore

/// Relationships (Store guarantees 28–30): a to-one is a column of the object's row
/// holding the destination's primary key, so it moves up the levels, merges and
/// rolls back exactly like an attribute; a to-many is read through its inverse
/// to-one (the destinations whose inverse column names this object), so both
/// sides are always in step in every context.
extension ManagedObject {
    /// Where a relationship's value lives (see `ManagedObjectModel.storageModel`).
    enum RelationshipStorage {
        /// A to-one: a column of this object's row.
        case toOne(index: Int)
        /// A to-many read through its inverse, a to-one column of the destinations.
        /// When the to-many is ordered, `order` is the destinations' hidden position column.
        case inverseOfToOne(inverse: String, order: Int?)
        /// A to-many kept in a join table this object's entity owns: a column of its row.
        case joinOwner(index: Int, join: JoinTable)
        /// The other side of a many-to-many: the destinations whose join column (`index`
        /// in the destination's attributes) lists this object.
        case joinInverse(index: Int, join: JoinTable)
    }

    /// Where `relationship` (of this object's entity) keeps its value; nil for an unusable model.
    func storage(of relationship: RelationshipDescription) -> RelationshipStorage? {
        if let index = attributeIndex[relationship.name] {
            let attribute = entity.attributes[index]
            if attribute.destination != nil { return .toOne(index: index) }
            if let join = attribute.join { return .joinOwner(index: index, join: join) }
            return nil
        }
        guard let inverse = relationship.inverse, let coordinator = managedObjectContext?.coordinator,
              let destination = coordinator.entitiesByName[relationship.destination],
              let index = coordinator.attributeIndices[relationship.destination]?[inverse] else { return nil }
        let column = destination.attributes[index]
        if column.destination != nil {
            let order = destination.attributes.firstIndex { $0.orderOf == inverse }
            return .inverseOfToOne(inverse: inverse, order: order)
        }
        if let join = column.join { return .joinInverse(index: index, join: join) }
        return nil
    }

    /// The value of a relationship: the destination object (or nil) for a to-one, a
    /// `Set<ManagedObject>` for a to-many (an array for an ordered one); nil when `key` is not one.
    func relationshipValue(forKey key: String) -> Any?? {
        guard let relationship = entity.relationship(named: key), let storage = storage(of: relationship) else { return nil }
        if case .toOne(let index) = storage {
            return .some(destinationObject(storeValue(at: index), entity: relationship.destination))
        }
        let objects = members(of: relationship)
        return relationship.isOrdered ? .some(objects) : .some(Set(objects))
    }

    /// The object a to-one column's value names, in this object's context.
    func destinationObject(_ value: StoreValue, entity destination: String) -> ManagedObject? {
        guard case .integer(let primaryKey) = value, let context = managedObjectContext else { return nil }
        return context.object(with: ObjectID(entityName: destination, primaryKey: primaryKey, storeIdentifier: objectID.storeIdentifier))
    }

    /// The destinations of a to-many (of a to-one: it, if any) as this context sees them
    /// (its unsaved changes and its parents' included); an ordered one in its order.
    package func members(of relationship: RelationshipDescription) -> [ManagedObject] {
        guard let context = managedObjectContext, let storage = storage(of: relationship) else { return [] }
        let destination = relationship.destination
        func objects(_ keys: [Int64]) -> [ManagedObject] {
            keys.map { context.object(with: ObjectID(entityName: destination, primaryKey: $0, storeIdentifier: objectID.storeIdentifier)) }
        }
        do {
            switch storage {
            case .toOne(let index):
                return destinationObject(storeValue(at: index), entity: destination).map { [$0] } ?? []
            case .joinOwner(let index, _):
                return objects(JoinTable.decode(storeValue(at: index)))
            case .joinInverse(let index, let join):
                return objects(try context.owners(in: join, column: index, linking: objectID.primaryKey))
            case .inverseOfToOne(let inverse, let order):
                if let cached = cachedMembers(of: relationship.name) { return cached.map { context.object(with: $0) } }
                var request = FetchRequest(entityName: destination)
                request.predicate = FetchPredicate(format: "%K == %@", inverse, objectID.primaryKey)
                if let order, let column = context.coordinator?.entitiesByName[destination]?.attributes[order].name {
                    request.sortDescriptors = [FetchSortDescriptor(key: column)]
                }
                return try context.fetch(request)
            }
        } catch let error as StoreError {
            // A getter cannot throw: the read's failure makes the next save throw it.
            context.recordInvalidValue(error)
        } catch {
            context.recordInvalidValue(.invalidRelationshipValue(entity: entity.name, relationship: relationship.name,
                                                                 reason: "reading it failed: \(error)"))
        }
        return []
    }

    /// Adds `target` to a to-many (at `position` of an ordered one kept here; at the end otherwise).
    func link(_ target: ManagedObject, to relationship: RelationshipDescription, at position: Int? = nil, in context: ManagedObjectContext) {
        switch storage(of: relationship) {
        case .inverseOfToOne(let inverse, let order)?:
            guard let index = target.attributeIndex[inverse] else { return }
            guard let order, let position else {
                target.setToOne(index: index, to: self, in: context)
                return
            }
            // Ordered: the target goes to `position`, and the members' positions are renumbered.
            var list = members(of: relationship).filter { $0 !== target }
            list.insert(target, at: min(max(0, position), list.count))
            target.setToOne(index: index, to: self, in: context)
            for (number, member) in list.enumerated() where member.storeValue(at: order) != .integer(Int64(number)) {
                context.recordChange(of: member, attribute: order, to: .integer(Int64(number)))
            }
        case .joinOwner(let index, let join)?:
            var list = JoinTable.decode(storeValue(at: index))
            guard !list.contains(target.objectID.primaryKey) else { return }
            list.insert(target.objectID.primaryKey, at: min(max(0, position ?? list.count), list.count))
            context.recordChange(of: self, attribute: index, to: JoinTable.encode(list, ordered: join.isOrdered))
        case .joinInverse(let index, let join)?:
            var list = JoinTable.decode(target.storeValue(at: index))
            guard !list.contains(objectID.primaryKey) else { return }
            list.append(objectID.primaryKey)
            context.recordChange(of: target, attribute: index, to: JoinTable.encode(list, ordered: join.isOrdered))
        case .toOne?, nil:
            return
        }
    }

    /// Removes `target` from a to-many.
    func unlink(_ target: ManagedObject, from relationship: RelationshipDescription, in context: ManagedObjectContext) {
        switch storage(of: relationship) {
        case .inverseOfToOne(let inverse, _)?:
            if let index = target.attributeIndex[inverse], target.storeValue(at: index) == .integer(objectID.primaryKey) {
                target.setToOne(index: index, to: nil, in: context)
            }
        case .joinOwner(let index, let join)?:
            let list = JoinTable.decode(storeValue(at: index))
            guard list.contains(target.objectID.primaryKey) else { return }
            context.recordChange(of: self, attribute: index, to: JoinTable.encode(list.filter { $0 != target.objectID.primaryKey }, ordered: join.isOrdered))
        case .joinInverse(let index, let join)?:
            let list = JoinTable.decode(target.storeValue(at: index))
            guard list.contains(objectID.primaryKey) else { return }
            context.recordChange(of: target, attribute: index, to: JoinTable.encode(list.filter { $0 != objectID.primaryKey }, ordered: join.isOrdered))
        case .toOne?, nil:
            return
        }
    }

    /// Sets a relationship from `setValue(_:forKey:)`; false when `key` is not a relationship.
    func setRelationship(_ value: Any?, forKey key: String, in context: ManagedObjectContext) -> Bool {
        guard let relationship = entity.relationship(named: key) else { return false }
        if !relationship.isToMany, let index = attributeIndex[key] {
            guard let target = destinationArgument(value, relationship: key, destination: relationship.destination, in: context) else { return true }
            setToOne(index: index, to: target.object, in: context)
            return true
        }
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
        if let order = entity.attributes.firstIndex(where: { $0.orderOf == attribute.name }) {
            // A member of an ordered to-many: it leaves its position, or joins at the end.
            var position: StoreValue = .null
            if let target, let owner = target.entity.relationship(named: inverseName) {
                let others = target.members(of: owner).filter { $0 !== self }
                let last = others.compactMap { member -> Int64? in
                    if case .integer(let value) = member.storeValue(at: order) { return value }
                    return nil
                }.max() ?? -1
                position = .integer(max(last + 1, Int64(others.count)))
            }
            context.recordChange(of: self, attribute: order, to: position)
        }
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

    /// Makes a to-many hold exactly `targets` (an ordered one in their order): members not
    /// among them are unlinked, new ones linked, each inverse kept in step.
    func replaceMembers(of relationship: RelationshipDescription, with targets: [ManagedObject], in context: ManagedObjectContext) {
        let storage = storage(of: relationship)
        if case .joinOwner(let index, let join)? = storage {
            context.recordChange(of: self, attribute: index, to: JoinTable.encode(targets.map(\.objectID.primaryKey), ordered: join.isOrdered))
            return
        }
        if case .inverseOfToOne(let inverse, let order?)? = storage {
            for member in members(of: relationship) where !targets.contains(where: { $0 === member }) { unlink(member, from: relationship, in: context) }
            for (number, target) in targets.enumerated() {
                if let index = target.attributeIndex[inverse], target.storeValue(at: index) != .integer(objectID.primaryKey) {
                    target.setToOne(index: index, to: self, in: context)
                }
                if target.storeValue(at: order) != .integer(Int64(number)) {
                    context.recordChange(of: target, attribute: order, to: .integer(Int64(number)))
                }
            }
            return
        }
        let current = members(of: relationship)
        for member in current where !targets.contains(where: { $0 === member }) { unlink(member, from: relationship, in: context) }
        for target in targets where !current.contains(where: { $0 === target }) { link(target, to: relationship, in: context) }
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

    /// Adds `object` (at the end of an ordered one); its inverse names the owner.
    public func insert(_ object: ManagedObject) {
        guard let context = owner.managedObjectContext, let target = checked(object, in: context) else { return }
        owner.link(target, to: relationship, in: context)
    }

    /// Inserts `object` at `index` of an ordered to-many (moving it there if it is a member).
    public func insert(_ object: ManagedObject, at index: Int) {
        guard let context = owner.managedObjectContext, let target = checked(object, in: context) else { return }
        owner.unlink(target, from: relationship, in: context)
        owner.link(target, to: relationship, at: index, in: context)
    }

    /// Adds `object` (NSMutableSet's name).
    public func add(_ object: ManagedObject) { insert(object) }
    /// Adds `object` at the end (NSMutableOrderedSet's name).
    public func append(_ object: ManagedObject) { insert(object) }

    /// Adds every object of `objects`.
    public func formUnion<S: Sequence>(_ objects: S) where S.Element == ManagedObject {
        for object in objects { insert(object) }
    }

    /// The members in order (an unordered to-many: in no particular order).
    public var array: [ManagedObject] { allObjects }

    /// The member at `index` (ordered to-manys).
    public subscript(index: Int) -> ManagedObject { allObjects[index] }

    /// The member at `index` (NSOrderedSet's name).
    public func object(at index: Int) -> ManagedObject { allObjects[index] }

    /// Removes `object` when it is a member (its inverse lets go of the owner).
    public func remove(_ object: ManagedObject) {
        guard let context = owner.managedObjectContext else { return }
        owner.unlink(object, from: relationship, in: context)
    }

    /// Removes every member of `objects`.
    public func subtract<S: Sequence>(_ objects: S) where S.Element == ManagedObject {
        for object in objects { remove(object) }
    }

    /// Removes `object` (NSMutableSet's and NSMutableOrderedSet's name).
    public func removeObject(_ object: ManagedObject) { remove(object) }

    /// Removes the member at `index` of an ordered to-many.
    public func remove(at index: Int) {
        let members = allObjects
        guard members.indices.contains(index) else { return }
        remove(members[index])
    }

    /// Removes the member at `index` (NSMutableOrderedSet's name).
    public func removeObject(at index: Int) { remove(at: index) }

    /// The position of `object` among the members (ordered to-manys), or nil.
    public func firstIndex(of object: ManagedObject) -> Int? { allObjects.firstIndex { $0 === object } }

    /// The position of `object` (NSOrderedSet's name; nil instead of NSNotFound).
    public func index(of object: ManagedObject) -> Int? { firstIndex(of: object) }

    /// The first member (ordered: the first in order).
    public var first: ManagedObject? { allObjects.first }

    /// The last member (ordered: the last in order).
    public var last: ManagedObject? { allObjects.last }

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
