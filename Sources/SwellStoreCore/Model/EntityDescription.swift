/// An entity: a named kind of object with attributes, relationships and a uniqueness constraint.
///
/// The store keeps an entity's objects in a table named after it. The
/// uniqueness constraint (the entity's key) names the attributes whose values
/// together identify an object: two objects with the same key saved into one
/// parent become one object, resolved by the saving context's merge policy.
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name; also its table's name in the store.
    public var name: String
    /// The entity's attributes, in column order.
    public var attributes: [AttributeDescription]
    /// The entity's relationships to other entities (Store guarantees 28).
    public var relationships: [RelationshipDescription]
    /// The attributes whose values together identify an object (may be empty).
    public var uniquenessConstraint: [String]
    /// The name this entity had in the model a store was last opened with: a migration
    /// renames its table (and its join tables and indexes) and keeps its rows (Store guarantees 57).
    public var renamingIdentifier: String?
    /// Set on the coordinator's copy when a to-one relationship of the model points at
    /// this entity: its table then keeps its IDs in `_pk` (what `REFERENCES` names).
    package var isRelationshipDestination = false
    /// On the coordinator's copy: how many of the last attributes are to-manys kept in join
    /// tables (in memory only: the table's columns are the attributes before them).
    package var joinColumnCount = 0
    /// The entity's own validation (`validateForInsert` … in SwellContexts): in memory only,
    /// never stored with the model, and not part of an entity's equality.
    package var validators = EntityValidators()

    /// How many attributes are columns of the entity's table (those before the join-table ones).
    public var columnCount: Int { attributes.count - joinColumnCount }

    /// The indices of the entity's own attributes: not the columns the coordinator's copy
    /// adds for relationships (to-one IDs, join-table to-manys).
    package var ownAttributeIndices: [Int] {
        attributes.indices.filter { attributes[$0].destination == nil && attributes[$0].join == nil }
    }

    /// Creates an entity description.
    public init(name: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = [],
                uniquenessConstraint: [String] = [], renamingIdentifier: String? = nil) {
        self.renamingIdentifier = renamingIdentifier
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraint = uniquenessConstraint
    }

    /// The attribute named `name`, or nil.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship named `name`, or nil.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// The indices in `attributes` of the uniqueness constraint's attributes, in its order.
    public var keyIndices: [Int] {
        uniquenessConstraint.compactMap { name in attributes.firstIndex { $0.name == name } }
    }

    /// Attribute names by their index in `attributes`.
    public var attributesByName: [String: AttributeDescription] {
        Dictionary(attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private enum CodingKeys: String, CodingKey {
        case name, attributes, relationships, uniquenessConstraint, isRelationshipDestination, joinColumnCount, renamingIdentifier
    }

    /// Reads a description; one a store kept before relationships existed has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        attributes = try container.decode([AttributeDescription].self, forKey: .attributes)
        relationships = try container.decodeIfPresent([RelationshipDescription].self, forKey: .relationships) ?? []
        uniquenessConstraint = try container.decode([String].self, forKey: .uniquenessConstraint)
        isRelationshipDestination = try container.decodeIfPresent(Bool.self, forKey: .isRelationshipDestination) ?? false
        joinColumnCount = try container.decodeIfPresent(Int.self, forKey: .joinColumnCount) ?? 0
        renamingIdentifier = try container.decodeIfPresent(String.self, forKey: .renamingIdentifier)
    }
}
