import Foundation

/// One object a save met changed since the saving context read it (Store guarantees 61, README
/// "Conflicts between writers"): another root context, coordinator or process saved its row
/// (or deleted it), or — for a child's save — its parent changed it after the child read it.
///
/// Under the `.error` merge policy a save fails with `StoreError.Kind.mergeConflict`, listing
/// one `MergeConflict` per object in `StoreError.conflicts`; the other policies resolve it.
public struct MergeConflict: Sendable, CustomStringConvertible {
    /// The object in conflict.
    public let objectID: ObjectID
    /// The attributes (and to-one relationships) the saving context changed; every attribute
    /// when it deleted the object (`isDeletion`).
    public let changed: Set<String>
    /// The attributes the other writer changed since the saving context read the object (empty
    /// when it deleted the row: `theirs` is nil then).
    public let theirChanges: Set<String>
    /// Whether the saving context deleted the object.
    public let isDeletion: Bool
    private let ourValues: [String: StoreValue]
    private let theirValues: [String: StoreValue]?
    private let types: [String: AttributeType]
    private let destinations: [String: String]

    package init(objectID: ObjectID, entity: EntityDescription, changed: AttributeMask, theirChanges: AttributeMask,
                 isDeletion: Bool, ours: [StoreValue], theirs: [StoreValue]?) {
        self.objectID = objectID
        self.isDeletion = isDeletion
        var names = Set<String>()
        var ourValues: [String: StoreValue] = [:]
        var types: [String: AttributeType] = [:]
        var destinations: [String: String] = [:]
        let compared = entity.versionedAttributeIndices
        for index in compared {
            let attribute = entity.attributes[index]
            types[attribute.name] = attribute.type
            if let destination = attribute.destination { destinations[attribute.name] = destination }
            if isDeletion || changed.contains(index) {
                names.insert(attribute.name)
                if !isDeletion, index < ours.count { ourValues[attribute.name] = ours[index] }
            }
        }
        self.changed = names
        self.ourValues = ourValues
        self.theirChanges = Set(compared.filter(theirChanges.contains).map { entity.attributes[$0].name })
        self.theirValues = theirs.map { values in
            var result: [String: StoreValue] = [:]
            for index in compared where index < values.count { result[entity.attributes[index].name] = values[index] }
            return result
        }
        self.types = types
        self.destinations = destinations
    }

    /// The saving context's values of the attributes it changed, as `value(forKey:)` gives them
    /// (`NSNull()` for nil, an `ObjectID` for a to-one); empty for a deletion.
    public var ours: [String: Any] { publicValues(ourValues) }

    /// The stored values of every attribute now (the parent's, for a child's save), as
    /// `value(forKey:)` gives them; nil when the row was deleted meanwhile.
    public var theirs: [String: Any]? { theirValues.map(publicValues) }

    private func publicValues(_ values: [String: StoreValue]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (name, value) in values {
            if let destination = destinations[name] {
                if case .integer(let key) = value {
                    result[name] = ObjectID(entityName: destination, primaryKey: key, storeIdentifier: objectID.storeIdentifier)
                } else {
                    result[name] = NSNull()
                }
            } else {
                result[name] = types[name].flatMap { value.swiftValue(for: $0) } ?? NSNull()
            }
        }
        return result
    }

    public var description: String {
        let what = isDeletion ? "deleted it" : "changed \(changed.sorted().joined(separator: ", "))"
        let other = theirValues == nil ? "it was deleted" : "\(theirChanges.sorted().joined(separator: ", ")) changed"
        return "\(objectID): this context \(what), but since it read the object \(other)"
    }
}
