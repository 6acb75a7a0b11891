import Foundation
import SwellStoreCore

/// Creates and migrates the PostgreSQL store's tables (PostgreSQL store guarantees 5, 6):
/// a table per entity named after it, a column per attribute (quoted: case
/// kept) typed as the attribute, `_pk` the object ID, the key a unique
/// constraint, to-ones `bigint` columns referencing the destination's `_pk`,
/// join tables as in Store guarantees 35; Swell's own tables start with `swell_`.
///
/// A migration runs in one transaction under a transaction-level advisory
/// lock, so two runners opening the store at once neither corrupt nor
/// double-apply it: the second waits, then finds the tables there. The model the
/// store was last opened with is kept in `swell_metadata` (`model`); the way from it
/// to the model opened with is `ModelMigration`'s plan (Store guarantees 57), carried
/// out in `PostgresSchema+Migration.swift`. A store that recorded no model (made
/// before models were recorded) only gains tables and columns, as before.
struct PostgresSchema {
    let connection: PostgresConnection
    let schema: String

    /// Migrates to `model`; returns the store's identifier (kept in `swell_metadata`).
    func migrate(to model: ManagedObjectModel, stage: MigrationStageWork = MigrationStageWork()) throws -> String {
        try connection.query("BEGIN")
        do {
            try connection.query("SELECT pg_advisory_xact_lock(hashtext($1::text))", [.text("swell.migrate.\(schema)")])
            try connection.query("CREATE SCHEMA IF NOT EXISTS \(PostgresSQL.quote(schema))")
            try connection.query("CREATE TABLE IF NOT EXISTS swell_metadata (key text PRIMARY KEY, value text NOT NULL)")
            try connection.query("CREATE TABLE IF NOT EXISTS swell_state (key text PRIMARY KEY, value text NOT NULL)")
            try connection.query("CREATE SEQUENCE IF NOT EXISTS swell_runner_ids")
            try connection.query("CREATE TABLE IF NOT EXISTS swell_holds (source text PRIMARY KEY)")
            try connection.query("CREATE TABLE IF NOT EXISTS swell_hold_holders (source text PRIMARY KEY, host text NOT NULL, pid text NOT NULL, since text NOT NULL)")
            // The rate budgets runners share (PostgresRateBudgets): tokens as counted at `updated`, by the server's clock.
            try connection.query("CREATE TABLE IF NOT EXISTS \(PostgresStore.rateBucketsTable) (key text PRIMARY KEY, tokens double precision NOT NULL, updated timestamptz NOT NULL)")
            try connection.query("INSERT INTO swell_metadata (key, value) VALUES ('store_identifier', $1::text) ON CONFLICT (key) DO NOTHING",
                                 [.text(UUID().uuidString)])
            let identifier = try connection.query("SELECT value FROM swell_metadata WHERE key = 'store_identifier'")
            // A stage another opener finished meanwhile leaves nothing to do.
            let recorded = try storedModel()
            if try stage.isDue(recorded: recorded) { try migrateTables(to: model, from: recorded, stage: stage) }
            try connection.query("COMMIT")
            guard case .text(let id)? = identifier.first?.first else { return "unknown" }
            return id
        } catch {
            // The migration's own error is thrown; a failed ROLLBACK means the connection is gone.
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }

    /// The migration itself, inside `migrate(to:stage:)`'s transaction and lock: the plan from
    /// the recorded model (none: tables and columns are only added), the tables, the transforms,
    /// the stage's metadata and the model recorded.
    private func migrateTables(to model: ManagedObjectModel, from recorded: ManagedObjectModel?, stage: MigrationStageWork) throws {
        var kept = model
        var transformed: [ModelMigration.EntityStep] = []
        if let stored = recorded {
            let plan = try ModelMigration(from: stored, to: model)
            transformed = try captureTransforms(plan, stage.transforms)
            // Renamed tables first: a new entity may take a name another one gave up.
            for step in plan.entities where step.isRenamed {
                try connection.query("ALTER TABLE \(PostgresSQL.quote(step.previous!.name)) RENAME TO \(PostgresSQL.quote(step.entity.name))")
            }
            for step in plan.entities where step.previous != nil { try migrate(step) }
            kept.entities += plan.removedEntities
        }
        for entity in model.entities { try createOrExtend(entity) }
        for entity in model.entities { try addForeignKeys(entity) }
        for entity in model.entities { try createJoinTables(entity) }
        try applyTransforms(transformed)
        for (key, value) in stage.metadata.sorted(by: { $0.key < $1.key }) {
            if let value {
                try connection.query("INSERT INTO swell_state (key, value) VALUES ($1::text, $2::text) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                     [.text(key), .text(value)])
            } else {
                try connection.query("DELETE FROM swell_state WHERE key = $1::text", [.text(key)])
            }
        }
        let json = String(decoding: try JSONEncoder().encode(kept), as: UTF8.self)
        try connection.query("INSERT INTO swell_metadata (key, value) VALUES ('model', $1::text) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             [.text(json)])
    }

    /// The model the store recorded when it was last opened (nil: none recorded).
    private func storedModel() throws -> ManagedObjectModel? {
        guard case .text(let json)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'model'").first?.first else {
            return nil
        }
        return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
    }

    func existingColumns(_ table: String) throws(PostgresError) -> [String: String] {
        let rows = try connection.query("""
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1::text
            """, [.text(table)])
        var columns: [String: String] = [:]
        for row in rows {
            if case .text(let name) = row[0], case .text(let type) = row[1] { columns[name] = type }
        }
        return columns
    }

    private func createOrExtend(_ entity: EntityDescription) throws(PostgresError) {
        let table = PostgresSQL.quote(entity.name)
        let stored = entity.attributes.filter { $0.join == nil }
        let existing = try existingColumns(entity.name)
        if existing.isEmpty {
            var columns = ["\"_pk\" bigint PRIMARY KEY"]
            for attribute in stored {
                columns.append("\(PostgresSQL.quote(attribute.name)) \(PostgresSQL.columnType(attribute))")
            }
            if !entity.uniquenessConstraint.isEmpty {
                columns.append("UNIQUE (\(entity.uniquenessConstraint.map(PostgresSQL.quote).joined(separator: ", ")))")
            }
            try connection.query("CREATE TABLE \(table) (\(columns.joined(separator: ", ")))")
        } else {
            // Lightweight migration (Store guarantees 24): new attributes are added as nullable columns.
            for attribute in stored where existing[attribute.name] == nil {
                try connection.query("ALTER TABLE \(table) ADD COLUMN \(PostgresSQL.quote(attribute.name)) \(PostgresSQL.columnType(attribute))")
            }
        }
        for attribute in stored where attribute.destination != nil {
            let index = PostgresSQL.quote("swell_\(entity.name)_\(attribute.name)")
            try connection.query("CREATE INDEX IF NOT EXISTS \(index) ON \(table) (\(PostgresSQL.quote(attribute.name)))")
        }
    }

    /// A to-one's column references its destination's `_pk` (added once every table exists;
    /// deferred, so one save may insert an object and what it points at in any order).
    private func addForeignKeys(_ entity: EntityDescription) throws(PostgresError) {
        for attribute in entity.attributes {
            guard let destination = attribute.destination else { continue }
            let name = "swell_fk_\(entity.name)_\(attribute.name)"
            let exists = try connection.query("SELECT 1 FROM pg_constraint WHERE conname = $1::text AND connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
                                              [.text(String(name.prefix(63)))])
            guard exists.isEmpty else { continue }
            try connection.query("""
                ALTER TABLE \(PostgresSQL.quote(entity.name)) ADD CONSTRAINT \(PostgresSQL.quote(name))
                FOREIGN KEY (\(PostgresSQL.quote(attribute.name))) REFERENCES \(PostgresSQL.quote(destination)) ("_pk") DEFERRABLE INITIALLY DEFERRED
                """)
        }
    }

    private func createJoinTables(_ entity: EntityDescription) throws(PostgresError) {
        for attribute in entity.attributes {
            guard let join = attribute.join else { continue }
            let owner = PostgresSQL.quote(join.owner), member = PostgresSQL.quote(join.relationship)
            var columns = [
                "\(owner) bigint NOT NULL REFERENCES \(PostgresSQL.quote(join.owner)) (\"_pk\") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
                "\(member) bigint NOT NULL REFERENCES \(PostgresSQL.quote(join.destination)) (\"_pk\") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED",
            ]
            if join.isOrdered { columns.append("\"_order\" bigint NOT NULL") }
            columns.append("PRIMARY KEY (\(owner), \(member))")
            try connection.query("CREATE TABLE IF NOT EXISTS \(PostgresSQL.quote(join.table)) (\(columns.joined(separator: ", ")))")
            try connection.query("CREATE INDEX IF NOT EXISTS \(PostgresSQL.quote("swell_\(join.table)_member")) ON \(PostgresSQL.quote(join.table)) (\(member))")
        }
    }
}
