import Foundation
import SwellStoreCore

/// An object in a managed object context: an instance of an entity whose
/// attribute values the context tracks.
///
/// An object belongs to one context and is used only on that context's queue;
/// pass its `objectID` to reach it from another context. Reading a value gives
/// the context's view: its own unsaved changes, and changes saved into it by
/// children, over the values it loaded from its parent.
public final class ManagedObject: Hashable, CustomStringConvertible {
    /// The object's permanent ID. It changes only when a save merges this new
    /// object into an existing one with the same key: it then names the survivor.
    public internal(set) var objectID: ObjectID
    /// The object's entity.
    public let entity: EntityDescription
    /// The context the object belongs to; nil once it was reset or its deletion was saved.
    public internal(set) weak var managedObjectContext: ManagedObjectContext?

    /// The values as the parent saw them when the object was loaded (or last saved), by attribute index.
    var snapshot: [StoreValue]
    /// Loads the snapshot of a fault (an object from a batched fetch whose batch is not in memory).
    var faultLoader: BatchFaultLoader?
    var faultIndex = 0
    /// To-many members loaded by a fetch's prefetching, with the context version they hold for.
    var prefetchedMembers: [String: (version: UInt64, members: [ObjectID])] = [:]
    /// Destinations a fetch prefetched for this object, kept alive with it (until `reset()`).
    var prefetchedObjects: [ManagedObject] = []
    let attributeIndex: [String: Int]
    /// The `@Entity` object handed out for this object, while someone holds it.
    package weak var typedModel: AnyObject?
    /// The object's row is gone where its context can see it — another context deleted it and
    /// saved, or a reset parent never had it — found when it was faulted, refreshed or looked up
    /// (Store guarantees 62): it reads as deleted, with nil values, and a save carrying an edit
    /// to it fails naming it.
    var isGone = false

    /// Creates an object of `entity` and inserts it into `context`. Its ID is permanent at once.
    ///
    /// The context must be connected to a coordinator (directly or through its
    /// parents) whose model has the entity; anything else is a programming error
    /// and stops the program with a message.
    public convenience init(entity: EntityDescription, insertInto context: ManagedObjectContext) {
        context.assertOnQueue("insert a \(entity.name)")
        guard let coordinator = context.coordinator else {
            preconditionFailure("SwellStore: context \(context.displayName) has no coordinator; cannot insert a \(entity.name)")
        }
        guard let known = coordinator.entitiesByName[entity.name], let indices = coordinator.attributeIndices[entity.name] else {
            preconditionFailure("SwellStore: the model has no entity named '\(entity.name)'")
        }
        var failure: StoreError?
        let id = ObjectID(entityName: known.name, primaryKey: context.nextPrimaryKey(for: known.name, from: coordinator, failure: &failure),
                          storeIdentifier: context.storeIdentifier(of: coordinator))
        // A new object starts with its attributes' default values (Core Data's `defaultValue`).
        self.init(id: id, entity: known, attributeIndex: indices, snapshot: known.attributes.map { $0.defaultValue ?? .null })
        context.insert(self)
        if let failure { context.recordInvalidValue(failure) }
    }

    init(id: ObjectID, entity: EntityDescription, attributeIndex: [String: Int], snapshot: [StoreValue]) {
        self.objectID = id
        self.entity = entity
        self.attributeIndex = attributeIndex
        self.snapshot = snapshot
    }

    // MARK: Values

    /// The value of an attribute in this object's context: `String`, `Int`,
    /// `Double`, `Bool`, `Date`, or nil (also for a name that is not an attribute);
    /// of a relationship: the destination `ManagedObject` (or nil) for a to-one,
    /// a `Set<ManagedObject>` for a to-many.
    public func value(forKey key: String) -> Any? {
        managedObjectContext?.assertOnQueue("read \(entity.name).\(key)")
        if isGone { return nil }
        if !entity.relationships.isEmpty, let relationship = relationshipValue(forKey: key) { return relationship }
        guard let index = attributeIndex[key] else { return nil }
        return storeValue(at: index).swiftValue(for: entity.attributes[index].type)
    }

    /// Sets an attribute, or a relationship (a to-one to an object of its
    /// destination or nil, a to-many to a `Set` or array of them; the inverse is
    /// kept in step at once). A value of the wrong type, or a name that is not an
    /// attribute or relationship, makes the next `save()` throw
    /// (`StoreError.typeMismatch`, `.invalidRelationshipValue`, `.unknownAttribute`)
    /// and is otherwise ignored.
    public func setValue(_ value: Any?, forKey key: String) {
        guard let context = managedObjectContext else { return }
        context.assertOnQueue("set \(entity.name).\(key)")
        if !entity.relationships.isEmpty, setRelationship(value, forKey: key, in: context) { return }
        guard let index = attributeIndex[key] else {
            context.recordInvalidValue(.unknownAttribute(entity: entity.name, attribute: key))
            return
        }
        let attribute = entity.attributes[index]
        guard let converted = StoreValue(swiftValue: value, for: attribute.type) else {
            context.recordInvalidValue(.typeMismatch(entity: entity.name, attribute: key, expected: attribute.type,
                                                     value: value.map { "a value of type \(type(of: $0))" } ?? "nil"))
            return
        }
        context.recordChange(of: self, attribute: index, to: converted)
    }

    /// Reads or sets an attribute, like `value(forKey:)` and `setValue(_:forKey:)`.
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// The current value of the attribute at `index`, as the store keeps it.
    func storeValue(at index: Int) -> StoreValue {
        if let pending = managedObjectContext?.pendingRow(for: objectID), pending.kind != .deleted,
           pending.kind == .inserted || pending.mask.contains(index) {
            return pending.values[index]
        }
        return loadedSnapshot()[index]
    }

    /// All current values, by attribute index.
    func currentValues() -> [StoreValue] {
        var values = loadedSnapshot()
        if let pending = managedObjectContext?.pendingRow(for: objectID) {
            switch pending.kind {
            case .inserted: values = pending.values
            case .updated: pending.mask.overlay(pending.values, onto: &values)
            case .deleted: break
            }
        }
        return values
    }

    /// Marks the object gone (`isGone`): its values read as nil from now on.
    func markGone() {
        isGone = true
        faultLoader = nil
        snapshot = Array(repeating: .null, count: entity.attributes.count)
    }

    func loadedSnapshot() -> [StoreValue] {
        if let loader = faultLoader, snapshot.isEmpty {
            loader.load(self)
            // A batch that could not be read (the context logged why) leaves the object a fault.
            if snapshot.isEmpty { return Array(repeating: .null, count: entity.attributes.count) }
        }
        return snapshot
    }

    /// Whether the object's values are not in memory (a batched fetch's object outside the current batch).
    public var isFault: Bool { faultLoader != nil && snapshot.isEmpty }

    // MARK: State

    /// Inserted into its context and not yet saved from it.
    public var isInserted: Bool { managedObjectContext?.pendingRow(for: objectID)?.kind == .inserted }
    /// Changed in its context and not yet saved from it.
    public var isUpdated: Bool { managedObjectContext?.pendingRow(for: objectID)?.kind == .updated }
    /// Deleted in its context and not yet saved from it, or found gone: deleted elsewhere and
    /// saved, or never saved where its context can see it (Store guarantees 62).
    public var isDeleted: Bool { isGone || managedObjectContext?.pendingRow(for: objectID)?.kind == .deleted }
    /// Inserted, updated or deleted and not yet saved.
    public var hasChanges: Bool { managedObjectContext?.pendingRow(for: objectID) != nil }

    /// The attributes changed since the object was loaded or last saved, with
    /// their new values (`NSNull()` for nil). All set attributes for an inserted object.
    public func changedValues() -> [String: Any] {
        managedObjectContext?.assertOnQueue("read the changes of a \(entity.name)")
        guard let pending = managedObjectContext?.pendingRow(for: objectID), pending.kind != .deleted else { return [:] }
        var result: [String: Any] = [:]
        for index in pending.mask.indices(below: entity.attributes.count) {
            result[entity.attributes[index].name] = publicValue(pending.values[index], at: index) ?? NSNull()
        }
        return result
    }

    /// The values as last loaded from the parent or saved, for the given keys (all when nil).
    public func committedValues(forKeys keys: [String]? = nil) -> [String: Any] {
        let values = loadedSnapshot()
        var result: [String: Any] = [:]
        for (index, attribute) in entity.attributes.enumerated() where keys?.contains(attribute.name) ?? true {
            result[attribute.name] = publicValue(values[index], at: index) ?? NSNull()
        }
        return result
    }

    /// A stored value as `value(forKey:)` gives it: a to-one column's as its destination object.
    func publicValue(_ value: StoreValue, at index: Int) -> Any? {
        let attribute = entity.attributes[index]
        if let destination = attribute.destination { return destinationObject(value, entity: destination) }
        if let join = attribute.join, let context = managedObjectContext {
            let members = JoinTable.decode(value).map {
                context.object(with: ObjectID(entityName: join.destination, primaryKey: $0, storeIdentifier: objectID.storeIdentifier))
            }
            return join.isOrdered ? members : Set(members)
        }
        return value.swiftValue(for: attribute.type)
    }

    public var description: String {
        let values = entity.attributes.indices.map { "\(entity.attributes[$0].name)=\(describe(storeValue(at: $0)))" }
        return "<\(entity.name) \(objectID) \(values.joined(separator: " "))>"
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

@available(*, unavailable, message: "a managed object is confined to its context's queue: pass its objectID")
extension ManagedObject: Sendable {}

extension ManagedObject: PredicateObjectArgument {
    /// The object's ID, which a predicate's `%@` compares (`SELF == %@`, `spot == %@`).
    public var predicateObjectID: ObjectID? { objectID }
}
