import SwellContexts

/// Which of a chunk's keys an entity holds already, as a context sees it (its
/// own and its ancestors' unsaved rows over the store): append mode's check.
///
/// One fetch selects only the chunk's keys — `key IN {…}` for a one-attribute
/// key, `(a == … AND b == …) OR …` for a compound one, which SQLite answers
/// from the key's unique index — so a chunk costs the same whatever the size
/// of the table.
struct KeyLookup: Sendable {
    private let entity: EntityDescription

    init(entity: EntityDescription) {
        self.entity = entity
    }

    /// The fetch of the rows whose key is one of `keys` (values in key order, none null).
    func request(for keys: [[StoreValue]]) -> FetchRequest {
        let key = entity.uniquenessConstraint
        let types = entity.keyIndices.map { entity.attributes[$0].type }
        var request = FetchRequest(entityName: entity.name)
        if key.count == 1 || keys.isEmpty {
            request.predicate = FetchPredicate(format: "%K IN %@", key[0], keys.map { Self.argument($0[0], type: types[0]) })
        } else {
            let term = "(" + key.map { _ in "%K == %@" }.joined(separator: " AND ") + ")"
            var arguments: [Any?] = []
            arguments.reserveCapacity(keys.count * key.count * 2)
            for values in keys {
                for position in key.indices {
                    arguments.append(key[position])
                    arguments.append(Self.argument(values[position], type: types[position]))
                }
            }
            request.predicate = FetchPredicate(format: Array(repeating: term, count: keys.count).joined(separator: " OR "),
                                               argumentArray: arguments)
        }
        return request
    }

    /// The keys among `keys` that exist in `context`'s view. Runs on `context`'s queue.
    func existing(_ keys: [[StoreValue]], in context: ManagedObjectContext) throws -> Set<[StoreValue]> {
        guard !keys.isEmpty else { return [] }
        let wanted = Set(keys)
        let keyIndices = entity.keyIndices
        var found = Set<[StoreValue]>()
        try BulkSession(context).enumerateRows(request(for: keys)) { _, values in
            let key = keyIndices.map { values[$0] }
            if wanted.contains(key) { found.insert(key) }
        }
        return found
    }

    /// A key value as a predicate argument: a real as its `Double` (a date
    /// compares with its Unix seconds exactly), others as their Swift value.
    private static func argument(_ value: StoreValue, type: AttributeType) -> Any? {
        if case .real(let double) = value { return double }
        return value.swiftValue(for: type)
    }
}
