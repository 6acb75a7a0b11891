#if Macros
// The macros of typed entities. Their expansions live in the `SwellMacros` compiler plugin;
// what each generates is described in "Typed entities" (DocC) and the README.

/// Makes a final class an entity: generates its `EntityDescription` from the stored
/// properties (attributes of the six attribute types and their optionals, relationships to
/// other `@Entity` classes), typed accessors over the managed object behind it, the
/// initialisers `init(backing:)` and `init(context:)`, and the conformance to
/// ``PersistentModel``. A literal initial value (`var rating: Int = 3`) is the attribute's
/// `defaultValue` (what a migration fills, what a new object starts with);
/// `@Entity(renamedFrom: "Old")` and ``Renamed(from:)`` give renaming identifiers.
///
/// ```swift
/// @Entity final class JournalEntry {
///     @Unique var id: Int
///     var date: Date
///     var rating: Int?
///     @Relationship(inverse: "entries", deleteRule: .nullify) var spot: Spot?
///     init(id: Int, date: Date) { self.id = id; self.date = date }
/// }
/// ```
@attached(member, names: named(_$backing), named(entityDescription), named(init), named(_$storedName))
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel)
public macro Entity(renamedFrom: String? = nil) = #externalMacro(module: "SwellMacros", type: "EntityMacro")

/// The name a stored property had in the model before (SwiftData's `@Attribute(originalName:)`,
/// Core Data's renaming identifier): a migration renames its column, or its relationship's
/// column or join table, and keeps the values (DocC "Migrating a store"). For the class itself:
/// `@Entity(renamedFrom: "OldName")`.
@attached(peer)
public macro Renamed(from name: String) = #externalMacro(module: "SwellMacros", type: "EntityMarkerMacro")

/// Put on each stored property by `@Entity`: the accessors that read and write the managed
/// object's value. Not written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_$set_))
public macro _EntityProperty() = #externalMacro(module: "SwellMacros", type: "EntityPropertyMacro")

/// Makes an attribute the entity's uniqueness constraint (its key): saving a second object
/// with the same value merges or conflicts by the context's merge policy.
@attached(peer)
public macro Unique() = #externalMacro(module: "SwellMacros", type: "EntityMarkerMacro")

/// The uniqueness constraint of several attributes together: `#Unique<Visit>([\.spotName, \.date])`
/// inside the class. An entity has one constraint.
@freestanding(declaration)
public macro Unique<T>(_ keyPaths: [PartialKeyPath<T>]) = #externalMacro(module: "SwellMacros", type: "UniqueConstraintMacro")

/// A relationship's inverse (the destination's property pointing back) and what deleting
/// this object does to its destinations. One side naming the inverse is enough; a
/// relationship with none is paired with the one relationship of its destination that leads
/// back (the compiler asks for the name when that could be ambiguous).
///
/// `minimumModelCount` and `maximumModelCount` (SwiftData's names) bound a to-many's size when
/// it has members: `RelationshipDescription.minCount` and `maxCount`, checked by every save.
@attached(peer)
public macro Relationship(inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                          minimumModelCount: Int? = nil, maximumModelCount: Int? = nil) =
    #externalMacro(module: "SwellMacros", type: "EntityMarkerMacro")

/// Rules an attribute's values must keep, checked by every save (Store guarantees 55):
/// `@Validated(.minValue(1), .maxValue(5)) var rating: Int?`. The entity's own validation is
/// a static method of the class, `static func validateForInsert(_ object: Self) throws` (also
/// `validateForUpdate`, `validateForDelete`): `@Entity` passes it to the entity's description.
@attached(peer)
public macro Validated(_ rules: AttributeRule...) = #externalMacro(module: "SwellMacros", type: "EntityMarkerMacro")

/// A stored property that is not part of the entity: kept on the Swift object only, never saved.
@attached(peer)
public macro Transient() = #externalMacro(module: "SwellMacros", type: "EntityMarkerMacro")
#endif
