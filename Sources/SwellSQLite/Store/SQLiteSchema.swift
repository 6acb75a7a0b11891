import Foundation
import SwellStoreCore

/// Creates and migrates a store's tables to a model (lightweight migration).
///
/// The model a store was last opened with is kept in `swell_metadata`; the way from it
/// to the model opened with is `ModelMigration`'s plan (Store guarantees 24 and 57),
/// carried out here in SQL (`SQLiteSchema+Migration.swift`). Removed entities keep
/// their tables.
///
/// Store format 2 keeps the key of an entity keyed by one required integer
/// attribute as its table's rowid (`TableLayout`). A table of another shape —
/// every keyed table of a format 1 store, or one whose key stopped or started
/// qualifying — is rebuilt in place, in the migration's transaction, with its
/// rows and object IDs intact. `swell_metadata` records the format and each
/// table's rowid column (`rowid_columns`).
package struct SQLiteSchema {
    package let connection: SQLiteConnection

    /// The store format this code writes.
    package static let formatVersion = "2"

    /// Migrates inside one transaction, with what a migration stage asks (`stage`); returns the store's UUID.
    package func migrate(to model: ManagedObjectModel, stage: MigrationStageWork = MigrationStageWork()) throws -> String {
        if stage.metadata.isEmpty, stage.transforms.isEmpty, let identifier = try unchangedStoreIdentifier(for: model) { return identifier }
        return try connection.transaction {
            try connection.execute("CREATE TABLE IF NOT EXISTS swell_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            let identifier: String
            if case .text(let existing)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'store_uuid'").first?.first {
                identifier = existing
            } else {
                identifier = UUID().uuidString
                try connection.run("INSERT INTO swell_metadata (key, value) VALUES ('store_uuid', ?)", [.text(identifier)])
            }
            var kept = model
            let recorded = try storedModel()
            guard try stage.isDue(recorded: recorded) else { return identifier }
            if let stored = recorded {
                let plan = try ModelMigration(from: stored, to: model)
                let transformed = try captureTransforms(plan, stage.transforms)
                // Renamed tables first: a new entity may take a name another one gave up.
                let reservations = try connection.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'swell_ids'")
                for step in plan.entities where step.isRenamed {
                    try connection.execute("ALTER TABLE \(quoteIdentifier(step.previous!.name)) RENAME TO \(quoteIdentifier(step.entity.name))")
                    // The IDs reserved for the entity stay reserved under its new name (never handed out twice).
                    if reservations.first?.first == .integer(1) {
                        try connection.run("UPDATE OR REPLACE swell_ids SET entity = ? WHERE entity = ?", [.text(step.entity.name), .text(step.previous!.name)])
                    }
                }
                for step in plan.entities {
                    if step.previous != nil { try migrate(step) } else { try create(step.entity) }
                }
                try applyTransforms(transformed)
                // Entities no longer in the model keep their tables and their description.
                kept.entities += plan.removedEntities
            } else {
                for entity in model.entities { try create(entity) }
            }
            let json = String(decoding: try JSONEncoder().encode(kept), as: UTF8.self)
            try connection.run("INSERT OR REPLACE INTO swell_metadata (key, value) VALUES ('model', ?)", [.text(json)])
            var rowids: [String: String] = [:]
            for entity in kept.entities {
                if let column = try rowidColumn(entity.name) { rowids[entity.name] = column }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try connection.run("INSERT OR REPLACE INTO swell_metadata (key, value) VALUES ('rowid_columns', ?)",
                               [.text(String(decoding: try encoder.encode(rowids), as: UTF8.self))])
            try connection.run("INSERT OR REPLACE INTO swell_metadata (key, value) VALUES ('format_version', ?)", [.text(Self.formatVersion)])
            if !stage.metadata.isEmpty {
                try connection.execute("CREATE TABLE IF NOT EXISTS swell_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                for (key, value) in stage.metadata.sorted(by: { $0.key < $1.key }) {
                    if let value {
                        try connection.run("INSERT OR REPLACE INTO swell_state (key, value) VALUES (?, ?)", [.text(key), .text(value)])
                    } else {
                        try connection.run("DELETE FROM swell_state WHERE key = ?", [.text(key)])
                    }
                }
            }
            connection.clearStatementCache()
            return identifier
        }
    }

    /// The store's UUID when it already has exactly this model: opening it then
    /// needs no write lock (a reader opens a store while a writer commits).
    private func unchangedStoreIdentifier(for model: ManagedObjectModel) throws -> String? {
        try connection.transaction("DEFERRED") { () throws -> String? in
            let exists = try connection.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'swell_metadata'")
            guard exists.first?.first == .integer(1),
                  case .text(let identifier)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'store_uuid'").first?.first,
                  try connection.query("SELECT value FROM swell_metadata WHERE key = 'format_version'").first?.first == .text(Self.formatVersion),
                  let stored = try storedModel() else { return nil }
            let storedEntities = stored.entitiesByName
            guard stored.versionIdentifier == model.versionIdentifier else { return nil }
            return model.entities.allSatisfy({ storedEntities[$0.name] == $0 }) ? identifier : nil
        }
    }

    /// The model the store recorded (nil: none, or no Swell tables yet).
    package func storedModel() throws -> ManagedObjectModel? {
        let exists = try connection.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'swell_metadata'")
        guard exists.first?.first == .integer(1) else { return nil }
        guard case .text(let json)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'model'").first?.first else {
            return nil
        }
        return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
    }

    func create(_ entity: EntityDescription) throws {
        let existing = try existingColumns(entity.name)
        if existing.isEmpty {
            try connection.execute("CREATE TABLE \(quoteIdentifier(entity.name)) (\(columnDefinitions(entity, extras: []).joined(separator: ", ")))")
            try createIndexes(entity)
            try createJoinTables(entity)
            return
        }
        // A table of that name exists but the model never described it: adopt it only if it fits.
        let rowid = try rowidColumn(entity.name)
        guard existing.contains("_pk"), let rowid, rowid == "_pk" || entity.attribute(named: rowid) != nil else {
            throw StoreError.migrationFailed(entity: entity.name, attribute: nil,
                                             reason: "a table of that name exists and was not made by Swell")
        }
        for attribute in entity.attributes.prefix(entity.columnCount) where !existing.contains(attribute.name) {
            try addColumn(attribute, to: entity)
        }
        try arrangeLayout(entity)
        try createJoinTables(entity)
    }

    /// The table's column definitions for `entity` (format 2), with `extras` (columns kept from
    /// removed attributes: name and declared type) after the attributes.
    func columnDefinitions(_ entity: EntityDescription, extras: [(name: String, type: String)]) -> [String] {
        let rowidKey = entity.rowidKeyIndex
        var definitions = rowidKey == nil ? ["\"_pk\" INTEGER PRIMARY KEY"] : []
        for (index, attribute) in entity.attributes.prefix(entity.columnCount).enumerated() {
            let type = index == rowidKey ? "INTEGER PRIMARY KEY" : Self.columnType(attribute)
            definitions.append("\(quoteIdentifier(attribute.name)) \(type)")
        }
        definitions += extras.map { "\(quoteIdentifier($0.name)) \($0.type)" }
        if rowidKey != nil { definitions.append("\"_pk\" INTEGER") }
        return definitions
    }

    /// An attribute's declared column type; a to-one relationship's column references
    /// its destination's `_pk` (Store guarantees 35).
    package static func columnType(_ attribute: AttributeDescription) -> String {
        guard let destination = attribute.destination else { return attribute.type.sqliteColumnType }
        return "INTEGER REFERENCES \(quoteIdentifier(destination)) (\"_pk\")"
    }

    /// The unique index on the key, or for a table whose key is the rowid, the partial one on
    /// `_pk`; and an index on each to-one relationship's column.
    func createIndexes(_ entity: EntityDescription) throws {
        let table = quoteIdentifier(entity.name)
        for attribute in entity.attributes where attribute.destination != nil {
            try connection.execute("CREATE INDEX IF NOT EXISTS \(quoteIdentifier("swell_\(entity.name)_\(attribute.name)")) ON \(table) (\(quoteIdentifier(attribute.name)))")
        }
        if entity.rowidKeyIndex != nil {
            try connection.execute("CREATE UNIQUE INDEX IF NOT EXISTS \(quoteIdentifier("swell_\(entity.name)_pk")) ON \(table) (\"_pk\") WHERE \"_pk\" IS NOT NULL")
            return
        }
        guard !entity.uniquenessConstraint.isEmpty else { return }
        let columns = entity.uniquenessConstraint.map(quoteIdentifier).joined(separator: ", ")
        try connection.execute("CREATE UNIQUE INDEX IF NOT EXISTS \(quoteIdentifier("swell_\(entity.name)_key")) ON \(table) (\(columns))")
    }

    /// Gives the table the shape the entity needs now (`TableLayout`): its indexes, or
    /// when its rowid column is not the one wanted, a rebuild.
    func arrangeLayout(_ entity: EntityDescription) throws {
        let wanted = entity.rowidKeyIndex.map { entity.attributes[$0].name } ?? "_pk"
        guard let current = try rowidColumn(entity.name) else {
            throw StoreError.migrationFailed(entity: entity.name, attribute: nil, reason: "its table has no INTEGER PRIMARY KEY column")
        }
        if current != wanted { try rebuild(entity, rowid: current) }
        try createIndexes(entity)
    }

    /// Rebuilds an entity's table with `wanted` as its rowid column, keeping every row, every
    /// column (those of removed attributes too) and every object ID.
    private func rebuild(_ entity: EntityDescription, rowid current: String) throws {
        let columns = entity.attributes.prefix(entity.columnCount).map(\.name)
        let attributeNames = Set(columns)
        let extras = try tableColumns(entity.name).filter { !attributeNames.contains($0.name) && $0.name != "_pk" }
        try rebuild(entity, sources: columns.map(quoteIdentifier), keeping: extras, rowid: current)
    }

    /// Rebuilds an entity's table (named `entity.name` now) into the shape `entity` needs, in one
    /// pass of SQL: each of its columns is `sources`' expression over the old rows, `extras` are copied as they are, and every object ID is kept — a row
    /// whose ID equals its rowid key keeps `_pk` NULL, any other keeps its ID in `_pk`. The old
    /// table and its indexes go; `createIndexes` makes the new ones.
    func rebuild(_ entity: EntityDescription, sources: [String], keeping extras: [(name: String, type: String)], rowid current: String) throws {
        let table = quoteIdentifier(entity.name)
        let wantedSource = entity.rowidKeyIndex.map { sources[$0] }
        if let wantedSource, let index = entity.rowidKeyIndex {
            let rows = try connection.query("SELECT count(*) FROM \(table) WHERE typeof(\(wantedSource)) != 'integer'")
            if case .integer(let count)? = rows.first?.first, count > 0 {
                throw StoreError.migrationFailed(
                    entity: entity.name, attribute: entity.attributes[index].name,
                    reason: "\(count) stored row(s) hold no integer in it, which the table's rowid needs")
            }
        }
        let columns = entity.attributes.prefix(entity.columnCount).map(\.name)
        let names = (columns + extras.map(\.name)).map(quoteIdentifier).joined(separator: ", ")
        let values = (sources + extras.map { quoteIdentifier($0.name) }).joined(separator: ", ")
        let oldID = current == "_pk" ? "\"_pk\"" : "coalesce(\"_pk\", \(quoteIdentifier(current)))"
        let newPK = wantedSource.map { "nullif(\(oldID), \($0))" } ?? oldID
        let scratch = quoteIdentifier("swell_rebuild_\(entity.name)")
        try connection.execute("CREATE TABLE \(scratch) (\(columnDefinitions(entity, extras: extras).joined(separator: ", ")))")
        // In the new rowid's order: each row is appended to the new b-tree.
        let order = wantedSource ?? oldID
        try connection.execute("INSERT INTO \(scratch) (\(names), \"_pk\") SELECT \(values), \(newPK) FROM \(table) ORDER BY \(order)")
        try connection.execute("DROP TABLE \(table)")
        try connection.execute("ALTER TABLE \(scratch) RENAME TO \(table)")
    }

    /// The table's rowid column: its `INTEGER PRIMARY KEY` (nil: none, or no such table).
    package func rowidColumn(_ table: String) throws -> String? {
        let rows = try connection.query("SELECT name, type FROM pragma_table_info(?) WHERE pk > 0", [.text(table)])
        guard rows.count == 1, case .text(let name) = rows[0][0], case .text(let type) = rows[0][1],
              type.uppercased() == "INTEGER" else { return nil }
        return name
    }

    /// The table's columns in order: name and declared type.
    func tableColumns(_ table: String) throws -> [(name: String, type: String)] {
        try connection.query("SELECT name, type FROM pragma_table_info(?)", [.text(table)]).compactMap { row in
            guard case .text(let name) = row[0] else { return nil }
            if case .text(let type) = row[1] { return (name, type) }
            return (name, "")
        }
    }

    func addColumn(_ attribute: AttributeDescription, to entity: EntityDescription) throws {
        try connection.execute("ALTER TABLE \(quoteIdentifier(entity.name)) ADD COLUMN \(quoteIdentifier(attribute.name)) \(Self.columnType(attribute))")
    }

    func existingColumns(_ table: String) throws -> Set<String> {
        let rows = try connection.query("SELECT name FROM pragma_table_info(?)", [.text(table)])
        return Set(rows.compactMap { if case .text(let name)? = $0.first { return name } else { return nil } })
    }

    func rowCount(_ entity: String) throws -> Int {
        if case .integer(let count)? = try connection.query("SELECT count(*) FROM \(quoteIdentifier(entity))").first?.first {
            return Int(count)
        }
        return 0
    }

    /// The join tables of the entity's to-manys that it owns (Store guarantees 35): a column per
    /// side referencing its table's `_pk`, `_order` when ordered, one row per link, and an
    /// index on the members' side (the owner's side leads the primary key).
    func createJoinTables(_ entity: EntityDescription) throws {
        for attribute in entity.attributes {
            guard let join = attribute.join else { continue }
            let table = quoteIdentifier(join.table)
            let owner = quoteIdentifier(join.owner)
            let member = quoteIdentifier(join.relationship)
            var columns = ["\(owner) INTEGER NOT NULL REFERENCES \(owner) (\"_pk\")",
                           "\(member) INTEGER NOT NULL REFERENCES \(quoteIdentifier(join.destination)) (\"_pk\")"]
            if join.isOrdered { columns.append("\"_order\" INTEGER NOT NULL") }
            columns.append("PRIMARY KEY (\(owner), \(member))")
            try connection.execute("CREATE TABLE IF NOT EXISTS \(table) (\(columns.joined(separator: ", ")))")
            try connection.execute("CREATE INDEX IF NOT EXISTS \(quoteIdentifier("swell_\(join.table)_\(join.relationship)")) ON \(table) (\(member))")
        }
    }
}

extension AttributeType {
    /// The SQLite column type the store declares for this attribute type.
    var sqliteColumnType: String {
        switch self {
        case .string, .json: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .double, .date: "REAL"
        }
    }
}
