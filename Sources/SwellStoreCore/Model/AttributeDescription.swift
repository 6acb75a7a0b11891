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
    public var destination: String?
    /// Set on the in-memory column of a to-many kept in a join table (the owning side): its
    /// value is the members' primary keys as text (`JoinTable.encode`); the store has no
    /// such column, it reads and writes the join table instead.
    public var join: JoinTable?
    /// Set on the hidden column (`_<to-one>_order`) that keeps an object's position in the
    /// ordered to-many whose inverse is the to-one named here.
    public var orderOf: String?
    /// The rules (nil when there are none, so a description without rules is kept
    /// in the store's model as it always was).
    private var rules: [AttributeRule]?
    /// The name this attribute had in the model a store was last opened with (Core Data's
    /// `renamingIdentifier`): a migration renames that column and keeps its values
    /// (Store guarantees 57; DocC "Migrating a store").
    public var renamingIdentifier: String?
    /// The value a required attribute takes where a migration finds none: in the rows of a
    /// table it is added to, and in rows that held nil when it becomes required. Also the
    /// value a newly inserted object starts with (as in Core Data). Kept as the store keeps
    /// it (`StoreValue`); `init` converts a Swift value for the attribute's type.
    public var defaultValue: StoreValue?

    /// The rules the attribute's values must keep (`AttributeRule`); empty by default.
    public var validation: [AttributeRule] {
        get { rules ?? [] }
        set { rules = newValue.isEmpty ? nil : newValue }
    }

    /// Creates an attribute description.
    ///
    /// `defaultValue` is a Swift value of the attribute's type (`String`, `Int`, `Double`,
    /// `Bool`, `Date`); one that does not fit the type makes `ManagedObjectModel.validate()`
    /// fail naming the attribute.
    public init(name: String, type: AttributeType, isOptional: Bool = false, validation: [AttributeRule] = [],
                renamingIdentifier: String? = nil, defaultValue: Any? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.validation = validation
        self.renamingIdentifier = renamingIdentifier
        if let defaultValue {
            if let value = StoreValue(swiftValue: defaultValue, for: type), !value.isNull {
                self.defaultValue = value
            } else {
                unfitDefault = String(describing: defaultValue)
            }
        }
    }

    /// A default given to `init` that does not fit the type (what `validate()` reports).
    package private(set) var unfitDefault: String?
}

/// A to-many relationship kept in a join table `<Entity>_<relationship>` (Store guarantees 35):
/// one row per member, a column for each side (named after the owning entity and after
/// the relationship), plus `_order` when the relationship is ordered.
public struct JoinTable: Sendable, Hashable, Codable {
    /// The table's name, `<Entity>_<relationship>`.
    public var table: String
    /// The owning entity (its column holds the owner's `_pk`).
    public var owner: String
    /// The relationship's name (its column holds the member's `_pk`).
    public var relationship: String
    /// The members' entity.
    public var destination: String
    public var isOrdered: Bool

    /// A list of members as the column's value: `.null` when empty, otherwise their primary
    /// keys joined by commas (unordered: ascending, so equal sets have equal values).
    public static func encode(_ members: [Int64], ordered: Bool) -> StoreValue {
        guard !members.isEmpty else { return .null }
        let list = ordered ? members : members.sorted()
        return .text(list.map(String.init).joined(separator: ","))
    }

    /// The members a column value lists.
    public static func decode(_ value: StoreValue) -> [Int64] {
        guard case .text(let text) = value else { return [] }
        return text.split(separator: ",").compactMap { Int64($0) }
    }

    /// The members of `survivor` then those of `newcomer` it lacks (unordered: ascending).
    package static func union(_ survivor: StoreValue, _ newcomer: StoreValue, ordered: Bool) -> StoreValue {
        var members = decode(survivor)
        var seen = Set(members)
        for member in decode(newcomer) where seen.insert(member).inserted { members.append(member) }
        return encode(members, ordered: ordered)
    }

    /// The value with members renamed by `map` (merged objects → survivors), each kept once.
    package static func renaming(_ value: StoreValue, _ map: [Int64: Int64], ordered: Bool) -> StoreValue {
        var seen = Set<Int64>()
        let members = decode(value).map { map[$0] ?? $0 }.filter { seen.insert($0).inserted }
        return encode(members, ordered: ordered)
    }

    /// The SQL that reads the column's value for the row of the outer query on `owner`'s table.
    package var selectExpression: String {
        let joinTable = quoteIdentifier(table)
        let member = quoteIdentifier(relationship)
        let order = isOrdered ? "\(joinTable).\"_order\"" : "\(joinTable).\(member)"
        return "(SELECT group_concat(m, ',') FROM (SELECT \(joinTable).\(member) AS m FROM \(joinTable) WHERE \(joinTable).\(quoteIdentifier(owner)) = \(quoteIdentifier(owner)).\"_pk\" ORDER BY \(order)))"
    }
}

