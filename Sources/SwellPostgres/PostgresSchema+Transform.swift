import SwellStoreCore

/// A custom migration stage's transforms (Store guarantees 58) in the PostgreSQL store, as in
/// the SQLite store: each recorded row of a transformed entity is read (a thousand at a time, by
/// `_pk`), migrated by the lightweight rules and transformed, and kept in a temporary table
/// (dropped at commit) before the schema changes; once the table has its new shape, one `UPDATE
/// … FROM` writes those values. All in the open's transaction, under the migration lock.
extension PostgresSchema {
    /// Runs the transforms over their entities' recorded rows into `swell_transform_<Entity>`;
    /// returns the steps `applyTransforms` finishes.
    func captureTransforms(_ plan: ModelMigration, _ transforms: [String: MigrationRowTransform]) throws -> [ModelMigration.EntityStep] {
        var captured: [ModelMigration.EntityStep] = []
        for step in plan.entities {
            guard let transform = transforms[step.entity.name], let previous = step.previous else { continue }
            let table = PostgresSQL.quote(previous.name)
            let oldColumns = previous.attributes.prefix(previous.columnCount).map {
                PostgresSQL.value(ofColumn: PostgresSQL.quote($0.name), type: $0.isToOneColumn ? .integer : $0.type)
            }
            let newColumns = Array(step.entity.attributes.prefix(step.entity.columnCount))
            let scratch = Self.scratch(step.entity)
            try connection.query("CREATE TEMP TABLE \(scratch) (swell_id bigint PRIMARY KEY\(newColumns.enumerated().map { ", c\($0) \(PostgresSQL.columnType($1))" }.joined())) ON COMMIT DROP")
            let placeholders = newColumns.enumerated().map { index, attribute in
                PostgresSQL.parameter(index + 2, type: attribute.isToOneColumn ? .integer : attribute.type)
            }
            let insert = "INSERT INTO \(scratch) VALUES ($1::bigint\(placeholders.map { ", \($0)" }.joined()))"
            let select = "SELECT \"_pk\"\(oldColumns.map { ", \($0)" }.joined()) FROM \(table) WHERE \"_pk\" > $1::bigint ORDER BY \"_pk\" LIMIT 1000"
            try step.transformRows(transform, chunk: { after in
                try connection.query(select, [.integer(after)]).map { row in
                    guard case .integer(let position) = row[0] else { return (Int64.max, row[0], Array(row[1...])) }
                    return (position, row[0], Array(row[1...]))
                }
            }, write: { id, new in try connection.query(insert, [id] + new) })
            captured.append(step)
        }
        return captured
    }

    /// Writes the transformed values into the migrated tables.
    func applyTransforms(_ steps: [ModelMigration.EntityStep]) throws {
        for step in steps {
            let entity = step.entity
            let table = PostgresSQL.quote(entity.name)
            let scratch = Self.scratch(entity)
            let assignments = entity.attributes.prefix(entity.columnCount).enumerated().map { index, attribute in
                "\(PostgresSQL.quote(attribute.name)) = s.c\(index)"
            }
            try connection.query("UPDATE \(table) SET \(assignments.joined(separator: ", ")) FROM \(scratch) s WHERE s.swell_id = \(table).\"_pk\"")
            try connection.query("DROP TABLE \(scratch)")
        }
    }

    private static func scratch(_ entity: EntityDescription) -> String {
        PostgresSQL.quote("swell_transform_\(entity.name)")
    }
}
