import SwellStoreCore

/// A custom migration stage's transforms (Store guarantees 58) in the SQLite store: each
/// recorded row of a transformed entity is read (a thousand at a time), migrated by the
/// lightweight rules and transformed, and kept in a scratch table before the schema changes;
/// once the table has its new shape, one `UPDATE` writes those values. All in the open's
/// transaction, with memory bounded by the chunk.
extension SQLiteSchema {
    /// Runs the transforms over their entities' recorded rows into `temp.swell_transform_<Entity>`
    /// (object ID, then the new columns); returns the steps `applyTransforms` finishes.
    func captureTransforms(_ plan: ModelMigration, _ transforms: [String: MigrationRowTransform]) throws -> [ModelMigration.EntityStep] {
        var captured: [ModelMigration.EntityStep] = []
        for step in plan.entities {
            guard let transform = transforms[step.entity.name], let previous = step.previous else { continue }
            guard let rowid = try rowidColumn(previous.name) else {
                throw StoreError.migrationFailed(entity: previous.name, attribute: nil, reason: "its table has no INTEGER PRIMARY KEY column")
            }
            let table = quoteIdentifier(previous.name)
            let id = rowid == "_pk" ? "\"_pk\"" : "coalesce(\"_pk\", \(quoteIdentifier(rowid)))"
            let oldColumns = previous.attributes.prefix(previous.columnCount).map { quoteIdentifier($0.name) }
            let count = step.entity.columnCount
            let scratch = Self.scratch(step.entity)
            try connection.execute("DROP TABLE IF EXISTS \(scratch)")
            try connection.execute("CREATE TABLE \(scratch) (swell_id INTEGER PRIMARY KEY\((0..<count).map { ", c\($0)" }.joined()))")
            let insert = "INSERT INTO \(scratch) VALUES (?\(String(repeating: ", ?", count: count)))"
            let select = "SELECT rowid, \(id)\(oldColumns.map { ", \($0)" }.joined()) FROM \(table) WHERE rowid > ? ORDER BY rowid LIMIT 1000"
            try step.transformRows(transform, chunk: { after in
                try connection.query(select, [.integer(after)]).map { row in
                    guard case .integer(let position) = row[0] else { return (Int64.max, row[1], Array(row[2...])) }
                    return (position, row[1], Array(row[2...]))
                }
            }, write: { id, new in try connection.run(insert, [id] + new) })
            captured.append(step)
        }
        return captured
    }

    /// Writes the transformed values into the migrated tables and drops the scratch tables.
    func applyTransforms(_ steps: [ModelMigration.EntityStep]) throws {
        for step in steps {
            let entity = step.entity
            let table = quoteIdentifier(entity.name)
            let id = entity.rowidKeyIndex.map { "coalesce(\(table).\"_pk\", \(table).\(quoteIdentifier(entity.attributes[$0].name)))" } ?? "\(table).\"_pk\""
            let columns = entity.attributes.prefix(entity.columnCount).map { quoteIdentifier($0.name) }
            let scratch = Self.scratch(entity)
            try connection.execute("""
                UPDATE \(table) SET (\(columns.joined(separator: ", "))) = \
                (SELECT \((0..<columns.count).map { "c\($0)" }.joined(separator: ", ")) FROM \(scratch) WHERE \(scratch).swell_id = \(id)) \
                WHERE \(id) IN (SELECT swell_id FROM \(scratch))
                """)
            try connection.execute("DROP TABLE \(scratch)")
        }
    }

    private static func scratch(_ entity: EntityDescription) -> String {
        "temp.\(quoteIdentifier("swell_transform_\(entity.name)"))"
    }
}
