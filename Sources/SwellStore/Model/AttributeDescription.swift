/// One attribute of an entity: a name, a type and whether it may be nil.
///
/// The store keeps each attribute in a column of the same name. A required
/// (non-optional) attribute must have a value when its object is saved.
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name; also its column's name in the store.
    public var name: String
    /// What values the attribute holds.
    public var type: AttributeType
    /// Whether the attribute may be nil when its object is saved.
    public var isOptional: Bool
    /// Set on the store's column of a to-one relationship (the coordinator's copy of an
    /// entity lists them after its attributes): the destination entity's name. Its
    /// values are the destination's primary keys.
    var destination: String?

    /// Creates an attribute description.
    public init(name: String, type: AttributeType, isOptional: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
    }
}
