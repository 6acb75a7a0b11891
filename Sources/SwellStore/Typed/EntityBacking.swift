import Foundation
import SwellContexts
import SwellStoreCore

/// Where a typed object's values live: the managed object behind it once it is in a context,
/// and before that the values its initialiser set, applied when it is inserted.
///
/// `@Entity` gives every typed object one; its accessors call the methods here. It is not
/// used directly.
public final class EntityBacking {
    /// The managed object, once the typed object is inserted (or was fetched).
    public private(set) var object: ManagedObject?
    /// Values set before insertion, by property name.
    private var unsaved: [String: Any] = [:]

    public init() {}

    /// Makes `object` the managed object behind `model`; values set before are dropped
    /// (`init(backing:)` runs property initial values before it attaches).
    public func attach(_ object: ManagedObject, to model: some PersistentModel) {
        precondition(object.entity.name == type(of: model).entityDescription.name,
                     "SwellStore: a \(object.entity.name) cannot back a \(type(of: model).entityDescription.name)")
        self.object = object
        unsaved = [:]
        object.typedModel = model
    }

    /// Records an initial value. Init accessors run before `attach` (the backing is new), so
    /// the value waits for the insert; `init(backing:)` then drops it.
    public func setInitialValue<Value>(_ value: Value, forKey key: String) {
        unsaved[key] = value
    }

    // MARK: Attributes

    public func attribute<Value: EntityAttributeValue>(forKey key: String, as type: Value.Type) -> Value {
        guard let object else { return unsaved[key] as? Value ?? .unsetValue }
        return Value(managedValue: object.value(forKey: key)) ?? .unsetValue
    }

    public func setAttribute<Value: EntityAttributeValue>(_ value: Value, forKey key: String) {
        guard let object else {
            unsaved[key] = value
            return
        }
        object.setValue(value.managedValue, forKey: key)
    }

    // MARK: Relationships

    public func toOne<Destination: PersistentModel>(forKey key: String, as type: Destination.Type) -> Destination? {
        guard let object else { return unsaved[key] as? Destination }
        return (object.value(forKey: key) as? ManagedObject).map(Destination.model(for:))
    }

    public func setToOne<Destination: PersistentModel>(_ value: Destination?, forKey key: String) {
        guard let object else {
            unsaved[key] = value as Any
            return
        }
        object.setValue(value.map { $0._$backing.managedObject(for: $0, in: object.managedObjectContext) }, forKey: key)
    }

    public func toMany<Destination: PersistentModel>(forKey key: String, as type: Destination.Type) -> Set<Destination> {
        Set(orderedToMany(forKey: key, as: type))
    }

    public func orderedToMany<Destination: PersistentModel>(forKey key: String, as type: Destination.Type) -> [Destination] {
        guard let object else {
            if let set = unsaved[key] as? Set<Destination> { return Array(set) }
            return unsaved[key] as? [Destination] ?? []
        }
        guard let relationship = object.entity.relationship(named: key) else { return [] }
        object.managedObjectContext?.assertOnQueue("read \(object.entity.name).\(key)")
        return object.members(of: relationship).map(Destination.model(for:))
    }

    public func setToMany<Destination: PersistentModel>(_ value: Set<Destination>, forKey key: String) {
        setOrderedToMany(Array(value), forKey: key)
    }

    public func setOrderedToMany<Destination: PersistentModel>(_ value: [Destination], forKey key: String) {
        guard let object else {
            unsaved[key] = value
            return
        }
        let context = object.managedObjectContext
        object.setValue(value.map { $0._$backing.managedObject(for: $0, in: context) }, forKey: key)
    }

    // MARK: Insertion

    /// The managed object behind `model`, inserting it (and, through its unsaved values, the
    /// typed objects it points to) into `context` when it has none yet.
    func managedObject(for model: some PersistentModel, in context: ManagedObjectContext?) -> ManagedObject {
        let name = type(of: model).entityDescription.name
        if let object {
            guard let owner = object.managedObjectContext else {
                preconditionFailure("SwellStore: this \(name) is in no context any more (its insert was rolled back, its "
                    + "deletion saved, or its context reset): fetch it again, or make a new one")
            }
            if let context, owner !== context {
                preconditionFailure("SwellStore: a \(name) of context \(owner.displayName) cannot be used in context "
                    + "\(context.displayName); look it up there with object(with: objectID)")
            }
            return object
        }
        guard let context else {
            preconditionFailure("SwellStore: a \(name) that is in no context was related to an object that is in none "
                + "either (or no more): insert one of them into a context")
        }
        let values = unsaved
        let object = ManagedObject(entity: type(of: model).entityDescription, insertInto: context)
        attach(object, to: model)
        // Attributes first, then to-ones, then to-manys; relationships add to what inserting the
        // objects they point to already linked through inverses (a new object has nothing else),
        // so the order properties are named in cannot undo a link.
        let entity = object.entity
        func rank(_ key: String) -> Int {
            guard let relationship = entity.relationship(named: key) else { return 0 }
            return relationship.isToMany ? 2 : 1
        }
        for (key, value) in values.sorted(by: { (rank($0.key), $0.key) < (rank($1.key), $1.key) }) {
            let managed = Self.managedValue(of: value, insertingInto: context)
            guard let relationship = entity.relationship(named: key) else {
                object.setValue(managed, forKey: key)
                continue
            }
            if relationship.isToMany {
                let adding = managed as? [ManagedObject] ?? []
                if adding.isEmpty { continue }
                var members = object.members(of: relationship)
                for member in adding where !members.contains(where: { $0 === member }) { members.append(member) }
                object.setValue(members, forKey: key)
            } else if managed != nil {
                object.setValue(managed, forKey: key)
            }
        }
        return object
    }

    /// A value set before insertion as `setValue(_:forKey:)` takes it: typed objects become
    /// their managed objects (inserted into `context` when they are not yet).
    private static func managedValue(of value: Any, insertingInto context: ManagedObjectContext?) -> Any? {
        if let attribute = value as? any EntityAttributeValue { return attribute.managedValue }
        if let model = value as? any PersistentModel { return managedObject(of: model, in: context) }
        if let models = value as? any Sequence {
            return models.compactMap { ($0 as? any PersistentModel).map { managedObject(of: $0, in: context) } }
        }
        return nil
    }

    private static func managedObject(of model: some PersistentModel, in context: ManagedObjectContext?) -> ManagedObject {
        model._$backing.managedObject(for: model, in: context)
    }
}
