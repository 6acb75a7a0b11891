import SwellStoreCore

/// An entity's own validation (Core Data's `validateForInsert`, `validateForUpdate` and
/// `validateForDelete` overrides, as closures): each runs for every object of the entity a
/// save moves with that change, and from the object's `validateFor…()` methods. A closure
/// throws to refuse the object; the save then fails listing it (`ValidationFailure.Rule.entity`)
/// with every other failure. It runs on the saving context's queue and may read the object's
/// values and relationships; it must not change objects or save.
///
/// The closures live in memory only: a store's copy of the model never keeps them, and two
/// entities compare equal whatever closures they carry. Batch requests do not run them (they
/// make no objects); attribute rules hold for batch requests too.
extension EntityDescription {
    /// A closure that refuses an object by throwing.
    public typealias ObjectValidation = @Sendable (ManagedObject) throws -> Void

    /// Creates an entity with its own validation for inserts (and, optionally, updates and deletes).
    public init(name: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = [],
                uniquenessConstraint: [String] = [], validateForInsert: ObjectValidation?,
                validateForUpdate: ObjectValidation? = nil, validateForDelete: ObjectValidation? = nil) {
        self.init(name: name, attributes: attributes, relationships: relationships, uniquenessConstraint: uniquenessConstraint)
        self.validateForInsert = validateForInsert
        self.validateForUpdate = validateForUpdate
        self.validateForDelete = validateForDelete
    }

    /// Creates an entity with its own validation for updates (and, optionally, deletes).
    public init(name: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = [],
                uniquenessConstraint: [String] = [], validateForUpdate: ObjectValidation?,
                validateForDelete: ObjectValidation? = nil) {
        self.init(name: name, attributes: attributes, relationships: relationships, uniquenessConstraint: uniquenessConstraint)
        self.validateForUpdate = validateForUpdate
        self.validateForDelete = validateForDelete
    }

    /// Creates an entity with its own validation for deletes.
    public init(name: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = [],
                uniquenessConstraint: [String] = [], validateForDelete: ObjectValidation?) {
        self.init(name: name, attributes: attributes, relationships: relationships, uniquenessConstraint: uniquenessConstraint)
        self.validateForDelete = validateForDelete
    }

    /// Runs for each inserted object a save moves, and from `ManagedObject.validateForInsert()`.
    public var validateForInsert: ObjectValidation? {
        get { validators.insert.map(Self.typed) }
        set { validators.insert = newValue.map(Self.erased) }
    }

    /// Runs for each changed object a save moves, and from `ManagedObject.validateForUpdate()`.
    public var validateForUpdate: ObjectValidation? {
        get { validators.update.map(Self.typed) }
        set { validators.update = newValue.map(Self.erased) }
    }

    /// Runs for each deleted object a save moves, and from `ManagedObject.validateForDelete()`.
    public var validateForDelete: ObjectValidation? {
        get { validators.delete.map(Self.typed) }
        set { validators.delete = newValue.map(Self.erased) }
    }

    private static func erased(_ validation: @escaping ObjectValidation) -> EntityValidators.Validator {
        { object in
            // Only contexts call validators, always with a managed object.
            guard let object = object as? ManagedObject else { return }
            try validation(object)
        }
    }

    private static func typed(_ validator: @escaping EntityValidators.Validator) -> ObjectValidation {
        { object in try validator(object) }
    }
}
