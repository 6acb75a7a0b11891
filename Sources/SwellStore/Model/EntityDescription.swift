/// An entity: a named kind of object with attributes and a uniqueness constraint.
///
/// The store keeps an entity's objects in a table named after it. The
/// uniqueness constraint (the entity's key) names the attributes whose values
/// together identify an object: two objects with the same key saved into one
/// parent become one object, resolved by the parent's merge policy.
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name; also its table's name in the store.
    public var name: String
    /// The entity's attributes, in column order.
    public var attributes: [AttributeDescription]
    /// The attributes whose values together identify an object (may be empty).
    public var uniquenessConstraint: [String]

    /// Creates an entity description.
    public init(name: String, attributes: [AttributeDescription], uniquenessConstraint: [String] = []) {
        self.name = name
        self.attributes = attributes
        self.uniquenessConstraint = uniquenessConstraint
    }

    /// The attribute named `name`, or nil.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The indices in `attributes` of the uniqueness constraint's attributes, in its order.
    public var keyIndices: [Int] {
        uniquenessConstraint.compactMap { name in attributes.firstIndex { $0.name == name } }
    }

    /// Attribute names by their index in `attributes`.
    public var attributesByName: [String: AttributeDescription] {
        Dictionary(attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
