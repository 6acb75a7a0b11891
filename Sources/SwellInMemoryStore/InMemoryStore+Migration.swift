import SwellStoreCore

/// The in-memory store's side of a migration (`ModelMigration`, Store guarantees 57): its rows
/// moved to the new entities, as the SQL stores move theirs.
extension InMemoryStore {
    /// A table's rows moved to a changed entity by its migration step: values by the columns
    /// they continue (widened, nils filled), join-table members by the join table they continue;
    /// new columns start nil (or their default). The checks are every store's (`checkData`).
    static func migrate(_ table: InMemoryTable, _ step: ModelMigration.EntityStep, flipped: [Int: [Int64: [Int64]]],
                        transform: MigrationRowTransform?) throws(StoreError) -> InMemoryTable {
        guard let previous = step.previous else { return table }
        let entity = step.entity
        let oldIndex = Dictionary(previous.attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let joinIndex = Dictionary(previous.attributes.enumerated().compactMap { index, attribute in
            attribute.join.map { ($0.table, index) }
        }, uniquingKeysWith: { first, _ in first })
        do {
            try step.checkData(tableIsEmpty: { table.rows.isEmpty }, nils: { column in
                guard let index = oldIndex[column] else { return 0 }
                return table.rows.values.filter { $0[index].isNull }.count
            })
        } catch {
            throw error as? StoreError ?? .underlying(error)
        }
        let joins = step.joinTables.map { join in join.previous.flatMap { joinIndex[$0.table] } }
        var migrated = InMemoryTable()
        for (primaryKey, values) in table.rows {
            let old = Array(values.prefix(previous.columnCount))
            var row = step.migratedColumns(old)
            if let transform { row = try step.transform(transform, old: old, new: row) }
            for (position, index) in joins.enumerated() {
                if let links = flipped[position] {
                    row.append(JoinTable.encode(links[primaryKey] ?? [], ordered: false))
                } else {
                    row.append(index.map { values[$0] } ?? .null)
                }
            }
            migrated.rows[primaryKey] = row
            if let key = entity.key(of: row) { migrated.keys[key] = primaryKey }
        }
        return migrated
    }

    /// The links of the join tables a rename moved to the other side (`JoinTableStep.isFlipped`),
    /// read from the recorded owners' rows: per new owner entity, per join table position, each
    /// new owner's members.
    static func flippedLinks(_ plan: ModelMigration, recorded: ManagedObjectModel,
                                     tables: [String: InMemoryTable]) -> [String: [Int: [Int64: [Int64]]]] {
        var flipped: [String: [Int: [Int64: [Int64]]]] = [:]
        let entities = recorded.entitiesByName
        for step in plan.entities {
            for (position, joinTable) in step.joinTables.enumerated() where joinTable.isFlipped {
                guard let previous = joinTable.previous, let owner = entities[previous.owner],
                      let column = owner.attributes.firstIndex(where: { $0.join?.table == previous.table }) else { continue }
                var links: [Int64: [Int64]] = [:]
                for (primaryKey, row) in tables[previous.owner]?.rows ?? [:] {
                    for member in JoinTable.decode(row[column]) { links[member, default: []].append(primaryKey) }
                }
                flipped[step.entity.name, default: [:]][position] = links
            }
        }
        return flipped
    }
}
