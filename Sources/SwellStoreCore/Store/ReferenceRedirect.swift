/// References a commit moves from a new object that became an existing one (its key met a
/// stored row) to the survivor (Store guarantees 32): which columns and which IDs is one rule, shared
/// by every store; each store writes the moves its own way (SQL, or rows in memory).
package struct ReferenceRedirect: Sendable {
    /// The entity whose table holds the references (or owns the join table).
    package let entity: EntityDescription
    /// The index of the referring attribute: a to-one column (`destination`) or a join table's column (`join`).
    package let attributeIndex: Int
    /// Incoming primary key → survivor primary key, ordered by the incoming key.
    package let moves: [(from: Int64, to: Int64)]

    /// The referring attribute.
    package var attribute: AttributeDescription { entity.attributes[attributeIndex] }
}

extension StoreCommitResult {
    /// The references to move after a commit's operations, in model order.
    package func referenceRedirects(in model: ManagedObjectModel) -> [ReferenceRedirect] {
        let moved = merged.filter { $0.key != $0.value }
        guard !moved.isEmpty else { return [] }
        var redirects: [ReferenceRedirect] = []
        for entity in model.entities {
            for (index, attribute) in entity.attributes.enumerated() {
                guard let destination = attribute.join?.destination ?? attribute.destination else { continue }
                let moves = moved.filter { $0.key.entityName == destination }
                    .map { (from: $0.key.primaryKey, to: $0.value.primaryKey) }
                    .sorted { $0.from < $1.from }
                if !moves.isEmpty { redirects.append(ReferenceRedirect(entity: entity, attributeIndex: index, moves: moves)) }
            }
        }
        return redirects
    }
}
