import SwellStoreCore

/// Carries out one entity's step of a lightweight migration (`ModelMigration`, Store
/// guarantees 57) in SQL, inside the open's transaction, without reading rows into memory:
/// renames are `ALTER TABLE … RENAME`, added columns `ADD COLUMN` (a default filled by one
/// `UPDATE`), and a widened or dropped column rebuilds the table in one `INSERT … SELECT`
/// (values widened by `swell_widen`, which is `Widening.apply`).
extension SQLiteSchema {
    /// Migrates the table of `step.entity` (already renamed, when its entity was) from `step.previous`.
    func migrate(_ step: ModelMigration.EntityStep) throws {
        let entity = step.entity
        let table = quoteIdentifier(entity.name)
        try check(step)
        let rebuilds = !step.droppedColumns.isEmpty || step.columns.contains { $0.widening != nil }
        if rebuilds {
            guard let current = try rowidColumn(entity.name) else {
                throw StoreError.migrationFailed(entity: entity.name, attribute: nil, reason: "its table has no INTEGER PRIMARY KEY column")
            }
            let used = Set(step.columns.compactMap(\.previousName) + step.columns.map(\.attribute.name) + step.droppedColumns + ["_pk"])
            let extras = try tableColumns(entity.name).filter { !used.contains($0.name) }
            try rebuild(entity, sources: step.columns.map(source(of:)), keeping: extras, rowid: current)
        } else {
            try renameColumns(step)
            for column in step.columns where column.isAdded { try add(column, to: entity) }
            for column in step.columns where !column.isAdded {
                guard let fill = column.fill else { continue }
                let name = quoteIdentifier(column.attribute.name)
                try connection.run("UPDATE \(table) SET \(name) = ? WHERE \(name) IS NULL", [fill])
            }
        }
        try dropStaleIndexes(of: entity)
        try migrateJoinTables(step)
        if step.keyChanged {
            try connection.execute("DROP INDEX IF EXISTS \(quoteIdentifier("swell_\(entity.name)_key"))")
        }
        try arrangeLayout(entity)
        try createJoinTables(entity)
    }

    /// What depends on the data (`ModelMigration.EntityStep.checkData`), counted in SQL.
    private func check(_ step: ModelMigration.EntityStep) throws {
        let table = quoteIdentifier(step.entity.name)
        try step.checkData(tableIsEmpty: { try rowCount(step.entity.name) == 0 }, nils: { column in
            guard case .integer(let count)? = try connection.query("SELECT count(*) FROM \(table) WHERE \(quoteIdentifier(column)) IS NULL").first?.first else { return 0 }
            return Int(count)
        })
    }

    /// A new column: `ADD COLUMN`, then its default (where it has one) set on every row by one
    /// `UPDATE` — not kept as the column's `DEFAULT`, so later inserts behave as on every other
    /// store. A column of that name kept from an earlier model (before removed attributes were
    /// dropped) is reused, nils filled.
    private func add(_ column: ModelMigration.ColumnStep, to entity: EntityDescription) throws {
        let table = quoteIdentifier(entity.name), name = quoteIdentifier(column.attribute.name)
        let exists = try existingColumns(entity.name).contains(column.attribute.name)
        if !exists { try addColumn(column.attribute, to: entity) }
        if let fill = column.fill { try connection.run("UPDATE \(table) SET \(name) = ? WHERE \(name) IS NULL", [fill]) }
    }

    /// Renames columns in place (`ModelMigration.EntityStep.columnRenames`).
    private func renameColumns(_ step: ModelMigration.EntityStep) throws {
        let table = quoteIdentifier(step.entity.name)
        for rename in step.columnRenames {
            try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(quoteIdentifier(rename.from)) TO \(quoteIdentifier(rename.to))")
        }
    }

    /// A column's expression over the old rows in a rebuild.
    private func source(of column: ModelMigration.ColumnStep) -> String {
        var expression = column.previousName.map(quoteIdentifier) ?? "NULL"
        if let widening = column.widening {
            expression = "swell_widen(\(expression), '\(widening.from.rawValue)', '\(widening.to.rawValue)')"
        }
        if let fill = column.fill { expression = "coalesce(\(expression), \(Self.literal(fill)))" }
        return expression
    }

    /// A value as an SQL literal (a double in Swift's round-trip text; SQLite reads it back exactly).
    static func literal(_ value: StoreValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let double): double.isNaN ? "NULL" : double.isInfinite ? (double < 0 ? "-9e999" : "9e999") : "\(double)"
        case .text(let text): sqlLiteral(text)
        }
    }

    /// Drops the `swell_` indexes of the table whose names the entity no longer has (a renamed
    /// table or to-one); `createIndexes` makes those it needs.
    private func dropStaleIndexes(of entity: EntityDescription) throws {
        var wanted = Set(entity.attributes.filter { $0.destination != nil }.map { "swell_\(entity.name)_\($0.name)" })
        wanted.formUnion(["swell_\(entity.name)_pk", "swell_\(entity.name)_key"])
        let rows = try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE 'swell\\_%' ESCAPE '\\'",
                                        [.text(entity.name)])
        for row in rows {
            guard case .text(let name)? = row.first, !wanted.contains(name) else { continue }
            try connection.execute("DROP INDEX \(quoteIdentifier(name))")
        }
    }

    /// Renames the join tables that continue recorded ones (table, owner and member columns,
    /// the members' index) and drops those no relationship keeps.
    private func migrateJoinTables(_ step: ModelMigration.EntityStep) throws {
        for joinTable in step.joinTables {
            guard let previous = joinTable.previous else { continue }
            let join = joinTable.join
            let table = quoteIdentifier(join.table)
            if previous.table != join.table {
                try connection.execute("ALTER TABLE \(quoteIdentifier(previous.table)) RENAME TO \(table)")
            }
            if joinTable.isFlipped {
                // The other side owned it: its owner column holds the members now, its member column the owners.
                let renames = [(previous.owner, "swell_flip_0"), (previous.relationship, "swell_flip_1"),
                               ("swell_flip_0", join.relationship), ("swell_flip_1", join.owner)]
                for (from, to) in renames {
                    try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(quoteIdentifier(from)) TO \(quoteIdentifier(to))")
                }
                try connection.execute("DROP INDEX IF EXISTS \(quoteIdentifier("swell_\(previous.table)_\(previous.relationship)"))")
                continue
            }
            if previous.owner != join.owner {
                try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(quoteIdentifier(previous.owner)) TO \(quoteIdentifier(join.owner))")
            }
            if previous.relationship != join.relationship {
                try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(quoteIdentifier(previous.relationship)) TO \(quoteIdentifier(join.relationship))")
            }
            if previous.table != join.table || previous.relationship != join.relationship {
                try connection.execute("DROP INDEX IF EXISTS \(quoteIdentifier("swell_\(previous.table)_\(previous.relationship)"))")
            }
        }
        for table in step.droppedJoinTables {
            try connection.execute("DROP TABLE IF EXISTS \(quoteIdentifier(table))")
        }
    }
}
