import SwellStoreCore

/// Carries out one entity's step of a lightweight migration (`ModelMigration`, Store
/// guarantees 57) in SQL, inside the open's transaction and under its advisory lock, without
/// reading rows into the client: `RENAME`, `DROP COLUMN`, `ALTER COLUMN … TYPE … USING` for a
/// widening (the text `Widening.apply` writes), `ADD COLUMN … DEFAULT` and `UPDATE` for defaults.
/// `createOrExtend`, `addForeignKeys` and `createJoinTables` then add what is new.
extension PostgresSchema {
    /// Migrates the table of `step.entity` (already renamed, when its entity was) from `step.previous`.
    func migrate(_ step: ModelMigration.EntityStep) throws {
        guard let previous = step.previous else { return }
        let entity = step.entity
        let table = PostgresSQL.quote(entity.name)
        try check(step)
        for name in step.droppedColumns {
            try connection.query("ALTER TABLE \(table) DROP COLUMN IF EXISTS \(PostgresSQL.quote(name))")
        }
        try renameColumns(step)
        for column in step.columns {
            let name = PostgresSQL.quote(column.attribute.name)
            if column.isAdded {
                guard let fill = column.fill else { continue }
                // A constant default is kept in the catalog: existing rows are not rewritten.
                try connection.query("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(name) \(PostgresSQL.columnType(column.attribute)) DEFAULT \(Self.typed(fill, column.attribute.type))")
                try connection.query("ALTER TABLE \(table) ALTER COLUMN \(name) DROP DEFAULT")
                continue
            }
            if let widening = column.widening {
                try connection.query("ALTER TABLE \(table) ALTER COLUMN \(name) TYPE \(PostgresSQL.columnType(column.attribute)) USING \(Self.widened(name, widening))")
            }
            if let fill = column.fill {
                try connection.query("UPDATE \(table) SET \(name) = \(Self.typed(fill, column.attribute.type)) WHERE \(name) IS NULL")
            }
        }
        // Index and constraint names carry the entity's and the to-one's names: renamed ones follow.
        for column in step.columns where column.attribute.destination != nil {
            guard let old = column.previousName, old != column.attribute.name || previous.name != entity.name else { continue }
            try connection.query("ALTER INDEX IF EXISTS \(PostgresSQL.quote("swell_\(previous.name)_\(old)")) RENAME TO \(PostgresSQL.quote("swell_\(entity.name)_\(column.attribute.name)"))")
            try connection.query("ALTER TABLE \(table) DROP CONSTRAINT IF EXISTS \(PostgresSQL.quote(String("swell_fk_\(previous.name)_\(old)".prefix(63))))")
        }
        if step.keyChanged { try replaceKey(step) }
        try migrateJoinTables(step)
    }

    /// What depends on the data (`ModelMigration.EntityStep.checkData`), counted in SQL.
    private func check(_ step: ModelMigration.EntityStep) throws {
        let table = PostgresSQL.quote(step.entity.name)
        try step.checkData(tableIsEmpty: { try connection.query("SELECT 1 FROM \(table) LIMIT 1").isEmpty }, nils: { column in
            guard case .integer(let count)? = try connection.query("SELECT count(*) FROM \(table) WHERE \(PostgresSQL.quote(column)) IS NULL").first?.first else { return 0 }
            return Int(count)
        })
    }

    /// Renames columns in place (`ModelMigration.EntityStep.columnRenames`).
    private func renameColumns(_ step: ModelMigration.EntityStep) throws {
        let table = PostgresSQL.quote(step.entity.name)
        for rename in step.columnRenames {
            try connection.query("ALTER TABLE \(table) RENAME COLUMN \(PostgresSQL.quote(rename.from)) TO \(PostgresSQL.quote(rename.to))")
        }
    }

    /// An empty table's new key: its unique constraints dropped, the new one added.
    private func replaceKey(_ step: ModelMigration.EntityStep) throws {
        let table = PostgresSQL.quote(step.entity.name)
        let constraints = try connection.query("SELECT conname::text FROM pg_constraint WHERE conrelid = $1::text::regclass AND contype = 'u'",
                                               [.text(table)])
        for row in constraints {
            guard case .text(let name)? = row.first else { continue }
            try connection.query("ALTER TABLE \(table) DROP CONSTRAINT \(PostgresSQL.quote(name))")
        }
        guard !step.entity.uniquenessConstraint.isEmpty else { return }
        try connection.query("ALTER TABLE \(table) ADD UNIQUE (\(step.entity.uniquenessConstraint.map(PostgresSQL.quote).joined(separator: ", ")))")
    }

    /// Renames the join tables that continue recorded ones and drops those no relationship keeps.
    private func migrateJoinTables(_ step: ModelMigration.EntityStep) throws {
        for joinTable in step.joinTables {
            guard let previous = joinTable.previous else { continue }
            let join = joinTable.join
            let table = PostgresSQL.quote(join.table)
            if previous.table != join.table {
                try connection.query("ALTER TABLE \(PostgresSQL.quote(previous.table)) RENAME TO \(table)")
                try connection.query("ALTER INDEX IF EXISTS \(PostgresSQL.quote("swell_\(previous.table)_member")) RENAME TO \(PostgresSQL.quote("swell_\(join.table)_member"))")
            }
            if joinTable.isFlipped {
                // The other side owned it: its owner column holds the members now, its member column the owners.
                let renames = [(previous.owner, "swell_flip_0"), (previous.relationship, "swell_flip_1"),
                               ("swell_flip_0", join.relationship), ("swell_flip_1", join.owner)]
                for (from, to) in renames {
                    try connection.query("ALTER TABLE \(table) RENAME COLUMN \(PostgresSQL.quote(from)) TO \(PostgresSQL.quote(to))")
                }
                try connection.query("DROP INDEX IF EXISTS \(PostgresSQL.quote("swell_\(join.table)_member"))")
                try connection.query("DROP INDEX IF EXISTS \(PostgresSQL.quote("swell_\(previous.table)_member"))")
                continue
            }
            if previous.owner != join.owner {
                try connection.query("ALTER TABLE \(table) RENAME COLUMN \(PostgresSQL.quote(previous.owner)) TO \(PostgresSQL.quote(join.owner))")
            }
            if previous.relationship != join.relationship {
                try connection.query("ALTER TABLE \(table) RENAME COLUMN \(PostgresSQL.quote(previous.relationship)) TO \(PostgresSQL.quote(join.relationship))")
            }
        }
        for table in step.droppedJoinTables {
            try connection.query("DROP TABLE IF EXISTS \(PostgresSQL.quote(table))")
        }
    }

    /// A constant of `type` (a default), as a parameter of that type would be written.
    static func typed(_ value: StoreValue, _ type: AttributeType) -> String {
        let literal = PostgresSQL.literal(value)
        return PostgresSQL.parameter(1, type: type).replacingOccurrences(of: "$1", with: literal)
    }

    /// The `USING` expression of a widening: the values `Widening.apply` gives.
    static func widened(_ column: String, _ widening: Widening) -> String {
        switch (widening.from, widening.to) {
        case (.integer, .double): "\(column)::double precision"
        case (.boolean, .string): "CASE WHEN \(column) THEN 'true' WHEN NOT \(column) THEN 'false' END"
        case (.double, .string):
            """
            CASE WHEN \(column) = 'NaN'::float8 THEN 'nan' WHEN \(column) = 'Infinity'::float8 THEN 'inf' \
            WHEN \(column) = '-Infinity'::float8 THEN '-inf' \
            WHEN \(column) = trunc(\(column)) AND abs(\(column)) < 9007199254740992 THEN trunc(\(column))::bigint::text \
            ELSE \(column)::text END
            """
        default: "\(column)::text"
        }
    }
}
