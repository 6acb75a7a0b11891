/// The schema of a store: its entities.
///
/// A model is a value: it crosses queues freely and is compared by content.
/// `validate()` checks names and constraints; a coordinator validates the model
/// it is given.
public struct ManagedObjectModel: Sendable, Hashable, Codable {
    /// The entities, in the order they were given.
    public var entities: [EntityDescription]
    /// The model's version (Core Data's `versionIdentifiers`, SwiftData's `versionIdentifier`):
    /// the store records the version it was last opened with, and a `MigrationPlan` finds a
    /// store's place by it (Store guarantees 58). Nil: an unversioned model.
    public var versionIdentifier: String?

    /// Creates a model from its entities.
    public init(entities: [EntityDescription], versionIdentifier: String? = nil) {
        self.entities = entities
        self.versionIdentifier = versionIdentifier
    }

    /// Entities by name.
    public var entitiesByName: [String: EntityDescription] {
        Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The model as the store keeps it: each entity's to-one relationships follow its
    /// attributes as integer columns (holding the destination's primary key, marked
    /// with their destination), then each to-many it keeps in a join table as an
    /// in-memory column (marked with its `JoinTable`; the store reads and writes the
    /// join table). Entities that a foreign key points at are marked as destinations
    /// (their tables keep IDs in `_pk`). Contexts and the store work on this copy; a
    /// to-many with a to-one inverse is read through that column, the other side of a
    /// many-to-many through the owning side's join table.
    package var storageModel: ManagedObjectModel {
        let byName = entitiesByName
        var destinations = Set<String>()
        for entity in entities {
            for relationship in entity.relationships {
                if !relationship.isToMany {
                    destinations.insert(relationship.destination)
                } else if Self.keptInJoinTable(relationship, entities: byName) {
                    destinations.formUnion([relationship.destination, entity.name])
                }
            }
        }
        return ManagedObjectModel(entities: entities.map { entity in
            var stored = entity
            for relationship in entity.relationships where !relationship.isToMany {
                var column = AttributeDescription(name: relationship.name, type: .integer, isOptional: relationship.isOptional)
                column.destination = relationship.destination
                column.renamingIdentifier = relationship.renamingIdentifier
                stored.attributes.append(column)
            }
            // An ordered to-many whose inverse is one of these to-ones keeps each member's
            // position in a hidden column beside it (`_<to-one>_order`, as Core Data's Z_FOK_).
            for relationship in entity.relationships where !relationship.isToMany {
                guard let inverse = relationship.inverse,
                      let owner = byName[relationship.destination]?.relationship(named: inverse), owner.isToMany, owner.isOrdered else { continue }
                var column = AttributeDescription(name: Self.orderColumn(of: relationship.name), type: .integer, isOptional: true)
                column.orderOf = relationship.name
                column.renamingIdentifier = relationship.renamingIdentifier.map(Self.orderColumn(of:))
                stored.attributes.append(column)
            }
            for relationship in entity.relationships where Self.ownsJoinTable(relationship, of: entity, entities: byName) {
                var column = AttributeDescription(name: relationship.name, type: .string, isOptional: true)
                column.join = JoinTable(table: "\(entity.name)_\(relationship.name)", owner: entity.name, relationship: relationship.name,
                                        destination: relationship.destination, isOrdered: relationship.isOrdered)
                column.renamingIdentifier = relationship.renamingIdentifier
                stored.attributes.append(column)
                stored.joinColumnCount += 1
            }
            stored.isRelationshipDestination = destinations.contains(entity.name)
            return stored
        }, versionIdentifier: versionIdentifier)
    }

    /// The hidden column that keeps a member's position in the ordered to-many whose inverse is `toOne`.
    package static func orderColumn(of toOne: String) -> String { "_\(toOne)_order" }

    /// Whether a to-many lives in a join table: it has no inverse, or its inverse is a to-many too.
    package static func keptInJoinTable(_ relationship: RelationshipDescription, entities: [String: EntityDescription]) -> Bool {
        guard relationship.isToMany else { return false }
        guard let inverse = relationship.inverse else { return true }
        return entities[relationship.destination]?.relationship(named: inverse)?.isToMany ?? true
    }

    /// Whether `relationship` is the side of a join table that owns it (whose name it
    /// bears): the only side, the ordered side, or of two the one whose
    /// `<Entity>_<relationship>` sorts first.
    package static func ownsJoinTable(_ relationship: RelationshipDescription, of entity: EntityDescription,
                              entities: [String: EntityDescription]) -> Bool {
        guard keptInJoinTable(relationship, entities: entities) else { return false }
        guard let inverseName = relationship.inverse,
              let inverse = entities[relationship.destination]?.relationship(named: inverseName) else { return true }
        if relationship.isOrdered != inverse.isOrdered { return relationship.isOrdered }
        return "\(entity.name)_\(relationship.name)" <= "\(relationship.destination)_\(inverseName)"
    }

    /// Checks that entity and attribute names are usable as SQLite identifiers, unique and
    /// not reserved, that every key attribute exists, that relationships fit, and that no
    /// entity has more stored columns than a row holds (256). Every rule about a model's
    /// shape lives here: the coordinator and `swell validate` both call it.
    public func validate() throws(ModelError) {
        var seenEntities = Set<String>()
        for entity in entities {
            guard Self.isIdentifier(entity.name), !Self.isReserved(entity.name) else {
                throw .invalidName(entity: entity.name, attribute: nil)
            }
            guard seenEntities.insert(entity.name.lowercased()).inserted else {
                throw .duplicateEntity(entity.name)
            }
            guard !entity.attributes.isEmpty else { throw .noAttributes(entity: entity.name) }
            var seenAttributes = Set<String>()
            for attribute in entity.attributes {
                guard Self.isIdentifier(attribute.name), !Self.isReserved(attribute.name) else {
                    throw .invalidName(entity: entity.name, attribute: attribute.name)
                }
                guard seenAttributes.insert(attribute.name.lowercased()).inserted else {
                    throw .duplicateAttribute(entity: entity.name, attribute: attribute.name)
                }
                try Self.validateRules(of: attribute, in: entity)
                if let value = attribute.unfitDefault {
                    throw .invalidDefault(entity: entity.name, attribute: attribute.name, value: value, type: attribute.type)
                }
            }
            for relationship in entity.relationships {
                try validate(relationship, of: entity, seen: &seenAttributes)
            }
            var seenKeys = Set<String>()
            for key in entity.uniquenessConstraint {
                guard entity.attribute(named: key) != nil else {
                    throw .unknownKeyAttribute(entity: entity.name, attribute: key)
                }
                guard seenKeys.insert(key).inserted else {
                    throw .unknownKeyAttribute(entity: entity.name, attribute: key)
                }
            }
        }
        for entity in storageModel.entities where entity.attributes.count > AttributeMask.capacity {
            throw .tooManyAttributes(entity: entity.name, count: entity.attributes.count, limit: AttributeMask.capacity)
        }
    }

    /// Checks one relationship: its name, destination, inverse and shape.
    private func validate(_ relationship: RelationshipDescription, of entity: EntityDescription,
                          seen: inout Set<String>) throws(ModelError) {
        let name = "\(entity.name).\(relationship.name)"
        guard Self.isIdentifier(relationship.name), !Self.isReserved(relationship.name) else {
            throw .invalidName(entity: entity.name, attribute: relationship.name)
        }
        guard seen.insert(relationship.name.lowercased()).inserted else {
            throw .duplicateAttribute(entity: entity.name, attribute: relationship.name)
        }
        guard let destination = entitiesByName[relationship.destination] else {
            throw .invalidRelationship(name, "its destination '\(relationship.destination)' is not an entity of the model")
        }
        if relationship.isOrdered && !relationship.isToMany {
            throw .invalidRelationship(name, "a to-one relationship cannot be ordered")
        }
        if let inverseName = relationship.inverse {
            guard let found = destination.relationship(named: inverseName) else {
                throw .invalidRelationship(name, "its inverse '\(inverseName)' is not a relationship of \(destination.name)")
            }
            guard found.destination == entity.name, found.inverse == relationship.name else {
                throw .invalidRelationship(name, "its inverse \(destination.name).\(inverseName) does not name \(name) back")
            }
        }
        if !relationship.isToMany && (relationship.minCount != nil || relationship.maxCount != nil) {
            throw .invalidRelationship(name, "minCount and maxCount apply to to-many relationships only")
        }
        if let minimum = relationship.minCount, minimum < 0 { throw .invalidRelationship(name, "its minCount \(minimum) is negative") }
        if let maximum = relationship.maxCount, maximum < 0 { throw .invalidRelationship(name, "its maxCount \(maximum) is negative") }
        if let minimum = relationship.minCount, let maximum = relationship.maxCount, minimum > maximum {
            throw .invalidRelationship(name, "its minCount \(minimum) is above its maxCount \(maximum)")
        }
        if Self.keptInJoinTable(relationship, entities: entitiesByName) && entity.name.lowercased() == relationship.name.lowercased() {
            throw .invalidRelationship(name, "its join table would have two columns named '\(entity.name)': rename the relationship")
        }
    }

    /// Checks an attribute's rules: each fits the type, a pattern compiles and can be anchored,
    /// an allowed value has the attribute's type, a length is not negative.
    private static func validateRules(of attribute: AttributeDescription, in entity: EntityDescription) throws(ModelError) {
        for rule in attribute.validation {
            func refuse(_ reason: String) -> ModelError {
                .invalidAttributeRule(entity: entity.name, attribute: attribute.name, rule: rule.description, reason: reason)
            }
            guard rule.fits(attribute.type) else { throw refuse("it does not apply to a \(attribute.type.rawValue) attribute") }
            switch rule {
            case .minLength(let length), .maxLength(let length):
                if length < 0 { throw refuse("a length cannot be negative") }
            case .pattern(let pattern):
                switch AttributeRuleChecker.patternProblem(pattern) {
                case .notAnExpression?: throw refuse("it is not a regular expression")
                case .cannotBeAnchored?: throw refuse("it cannot be anchored to the whole text (it ends inside a comment or a \\Q quote)")
                case nil: break
                }
            case .allowedValues(let values):
                for value in values {
                    let fits = switch (value, attribute.type) {
                    case (.text, .string), (.integer, .integer), (.integer, .boolean), (.integer, .double), (.real, .double),
                         (.integer, .date), (.real, .date): true
                    default: false
                    }
                    if !fits { throw refuse("the allowed value \(value) is not a \(attribute.type.rawValue) as the store keeps it") }
                }
            case .minValue, .maxValue:
                break
            }
        }
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`.
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        func isLetter(_ c: Unicode.Scalar) -> Bool { (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c == "_" }
        guard isLetter(first) else { return false }
        return name.unicodeScalars.allSatisfy { isLetter($0) || ($0 >= "0" && $0 <= "9") }
    }

    /// Names that start with `swell_` or `_` belong to Swell's own tables and columns.
    /// Whether `name` may name an entity, attribute or relationship: the one rule every
    /// reader of names (pipeline files included) asks, so what validates also opens.
    public static func isValidName(_ name: String) -> Bool {
        isIdentifier(name) && !isReserved(name)
    }

    /// The naming rule, as messages state it.
    public static let nameRule = "must match [A-Za-z_][A-Za-z0-9_]* and not start with '_', 'swell_' or 'sqlite_'"

    package static func isReserved(_ name: String) -> Bool {
        name.hasPrefix("_") || name.lowercased().hasPrefix("swell_") || name.lowercased().hasPrefix("sqlite_")
    }
}

/// Why a model cannot be used.
public enum ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A name is not `[A-Za-z_][A-Za-z0-9_]*`, or starts with `_`, `swell_` or `sqlite_` (reserved for the store).
    case invalidName(entity: String, attribute: String?)
    /// Two entities share a name (names compare case-insensitively, as SQLite tables do).
    case duplicateEntity(String)
    /// Two attributes of one entity share a name.
    case duplicateAttribute(entity: String, attribute: String)
    /// An entity has no attributes.
    case noAttributes(entity: String)
    /// A uniqueness constraint names an attribute the entity does not have, or names one twice.
    case unknownKeyAttribute(entity: String, attribute: String)
    /// A relationship (`Entity.name`) cannot be used, and why.
    case invalidRelationship(String, String)
    /// An entity has more columns (attributes, plus one per to-one relationship and per
    /// join table it owns) than a store row holds.
    case tooManyAttributes(entity: String, count: Int, limit: Int)
    /// An attribute's rule (`AttributeDescription.validation`) cannot be used, and why.
    case invalidAttributeRule(entity: String, attribute: String, rule: String, reason: String)
    /// An attribute's `defaultValue` is not a value of its type.
    case invalidDefault(entity: String, attribute: String, value: String, type: AttributeType)

    public var description: String {
        switch self {
        case .invalidName(let entity, nil):
            "entity name '\(entity)' is not usable: names are [A-Za-z_][A-Za-z0-9_]* and may not start with '_', 'swell_' or 'sqlite_'"
        case .invalidName(let entity, let attribute?):
            "attribute name '\(entity).\(attribute)' is not usable: names are [A-Za-z_][A-Za-z0-9_]* and may not start with '_', 'swell_' or 'sqlite_'"
        case .duplicateEntity(let name): "entity '\(name)' is defined twice"
        case .duplicateAttribute(let entity, let attribute): "attribute '\(entity).\(attribute)' is defined twice"
        case .noAttributes(let entity): "entity '\(entity)' has no attributes"
        case .unknownKeyAttribute(let entity, let attribute):
            "the uniqueness constraint of '\(entity)' names '\(attribute)', which is not an attribute of it (or is named twice)"
        case .invalidRelationship(let relationship, let reason): "relationship '\(relationship)' is not usable: \(reason)"
        case .invalidAttributeRule(let entity, let attribute, let rule, let reason):
            "the rule '\(rule)' of '\(entity).\(attribute)' is not usable: \(reason)"
        case .invalidDefault(let entity, let attribute, let value, let type):
            "the default value \(value) of '\(entity).\(attribute)' is not a \(type.rawValue)"
        case .tooManyAttributes(let entity, let count, let limit):
            "entity '\(entity)' has \(count) attributes and relationships; a store row holds at most \(limit)"
        }
    }
}
