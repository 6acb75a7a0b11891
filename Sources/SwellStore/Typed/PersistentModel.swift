import Foundation
import SwellContexts
import SwellStoreCore

/// A class made an entity by `@Entity`: typed properties over a `ManagedObject`.
///
/// The macro writes every requirement. A typed object is a view of its managed object:
/// reading `entry.rating` reads the context's value (its unsaved changes, its parent's
/// saves), setting it records a change exactly as `setValue(_:forKey:)` does, so every
/// guarantee of contexts, saves, merges and faults holds for typed objects. A context hands
/// out one typed object per managed object while you hold it, so `===` and `==` mean the
/// same object.
public protocol PersistentModel: FetchRequestResult, Hashable, PredicateObjectArgument {
    /// The entity's description, generated from the class's stored properties.
    static var entityDescription: EntityDescription { get }
    /// The stored name of a key path of this class (`\JournalEntry.rating` → "rating"), or nil.
    static func _$storedName(for keyPath: AnyKeyPath) -> String?
    /// Where the object's values live: its managed object, or the values set before insertion.
    var _$backing: EntityBacking { get }
    /// Wraps a managed object of this entity.
    init(backing object: ManagedObject)
}

extension PersistentModel {
    /// Typed objects are equal when they are the same object.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The object's ID, which a predicate's `%@` compares (`SELF == %@`); nil until the object
    /// is inserted into a context.
    public var predicateObjectID: ObjectID? { _$backing.object?.objectID }

    /// The managed object behind this typed object; nil until it is inserted into a context.
    public var managedObject: ManagedObject? { _$backing.object }

    /// The context the object belongs to; nil before it is inserted, after `reset()`, or once
    /// its deletion was saved.
    public var managedObjectContext: ManagedObjectContext? { _$backing.object?.managedObjectContext }

    /// The object's permanent ID, given when it is inserted. Reading it before the object is
    /// inserted into a context is a programming error.
    public var objectID: ObjectID {
        guard let object = _$backing.object else {
            preconditionFailure("SwellStore: this \(Self.entityDescription.name) has no ID yet: insert it into a context first")
        }
        return object.objectID
    }

    /// Checks the object as a save of its insertion would (Store guarantees 55); see
    /// `ManagedObject.validateForInsert()`. An object not inserted yet has nothing to check.
    public func validateForInsert() throws { try _$backing.object?.validateForInsert() }

    /// Checks the object as a save of its changes would; see `ManagedObject.validateForUpdate()`.
    public func validateForUpdate() throws { try _$backing.object?.validateForUpdate() }

    /// Checks whether the object may be deleted; see `ManagedObject.validateForDelete()`.
    public func validateForDelete() throws { try _$backing.object?.validateForDelete() }

    /// Checks whether `value` may be set for the property stored as `key`; see
    /// `ManagedObject.validateValue(_:forKey:)`.
    public func validateValue(_ value: Any?, forKey key: String) throws { try _$backing.object?.validateValue(value, forKey: key) }

    /// The typed object for a managed object of this entity: the one already handed out, or a new one.
    static func model(for object: ManagedObject) -> Self {
        if let model = object.typedModel as? Self { return model }
        return Self(backing: object)
    }
}

extension ManagedObject {
    /// This object as the `@Entity` class `type`, or nil when it is of another entity.
    public func model<T: PersistentModel>(as type: T.Type = T.self) -> T? {
        guard entity.name == T.entityDescription.name else { return nil }
        return T.model(for: self)
    }
}

/// Marks, by being initialised, that an initialiser set a non-optional attribute. Zero-size;
/// `@Entity` declares one per such attribute so the compiler checks every initialiser sets it.
public struct _EntityValueSet: Sendable {
    public init() {}
}
