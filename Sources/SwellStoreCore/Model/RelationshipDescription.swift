/// What happens to a relationship's destinations when its source object is
/// deleted (applied when the delete is saved, at every level: Store guarantees 31).
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Remove the deleted object from its destinations' inverse (the default).
    case nullify
    /// Delete the destinations too (transitively).
    case cascade
    /// Fail the save while any destination remains.
    case deny
    /// Leave the other side as it is.
    case noAction
}

/// One relationship of an entity: a named link to objects of a destination
/// entity, to-one or to-many (to-many may be ordered), optional or required,
/// with an optional inverse and a delete rule (Store guarantees 28).
///
/// On disk (Store guarantees 35) a to-one is a column named after the relationship
/// holding the destination's primary key, declared `REFERENCES` the
/// destination's table and indexed; a to-many whose inverse is a to-one lives
/// in that to-one's column.
public struct RelationshipDescription: Sendable, Hashable, Codable {
    /// The relationship's name (a property name of its entity).
    public var name: String
    /// The entity the relationship points at.
    public var destination: String
    /// Whether it holds many destinations (a set, or an array when ordered).
    public var isToMany: Bool
    /// A to-many kept in order (read as an array).
    public var isOrdered: Bool
    /// Whether the relationship may be empty when its object is saved.
    public var isOptional: Bool
    /// The destination's relationship that names this one back, if any.
    public var inverse: String?
    /// What deleting the source does to the destinations.
    public var deleteRule: DeleteRule
    /// A to-many's fewest members when it has any (Core Data's `minCount`): checked by every save
    /// (Store guarantees 55). An optional to-many may still be empty.
    public var minCount: Int?
    /// A to-many's most members (Core Data's `maxCount`): checked by every save.
    public var maxCount: Int?
    /// The name this relationship had in the model a store was last opened with: a migration
    /// renames its column or join table and keeps its links (Store guarantees 57).
    public var renamingIdentifier: String?

    /// Creates a relationship description.
    public init(name: String, destination: String, toMany: Bool = false, isOrdered: Bool = false, isOptional: Bool = true,
                inverse: String? = nil, deleteRule: DeleteRule = .nullify, minCount: Int? = nil, maxCount: Int? = nil,
                renamingIdentifier: String? = nil) {
        self.renamingIdentifier = renamingIdentifier
        self.minCount = minCount
        self.maxCount = maxCount
        self.name = name
        self.destination = destination
        self.isToMany = toMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.inverse = inverse
        self.deleteRule = deleteRule
    }
}
