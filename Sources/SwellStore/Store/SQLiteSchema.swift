import Foundation

/// Creates and migrates a store's tables to a model (lightweight migration).
///
/// The model a store was last opened with is kept in `swell_metadata`. Added
/// entities get tables; added optional attributes, and added required ones on
/// empty tables, get columns. What cannot be inferred — a type change, a new
/// required attribute on a non-empty table, an attribute made required while
/// rows hold nil, a changed key on a non-empty table — fails with an error that
/// names the entity and attribute. Removed attributes keep their columns (and
/// data); removed entities keep their tables.
struct SQLiteSchema {
    let connection: SQLiteConnection

    /// Migrates inside one transaction; returns the store's UUID.
    func migrate(to model: ManagedObjectModel) throws -> String {
        if let identifier = try unchangedStoreIdentifier(for: model) { return identifier }
        return try connection.transaction {
            try connection.execute("CREATE TABLE IF NOT EXISTS swell_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            let identifier: String
            if case .text(let existing)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'store_uuid'").first?.first {
                identifier = existing
            } else {
                identifier = UUID().uuidString
                try connection.run("INSERT INTO swell_metadata (key, value) VALUES ('store_uuid', ?)", [.text(identifier)])
            }
            let stored = try storedModel()
            let storedEntities = stored?.entitiesByName ?? [:]
            for entity in model.entities {
                if let old = storedEntities[entity.name] {
                    try migrate(entity: entity, from: old)
                } else {
                    try create(entity)
                }
            }
            var kept = model
            if let stored {
                // Entities no longer in the model keep their tables and their description.
                kept.entities += stored.entities.filter { model.entitiesByName[$0.name] == nil }
            }
            let json = String(decoding: try JSONEncoder().encode(kept), as: UTF8.self)
            try connection.run("INSERT OR REPLACE INTO swell_metadata (key, value) VALUES ('model', ?)", [.text(json)])
            try connection.run("INSERT OR REPLACE INTO swell_metadata (key, value) VALUES ('format_version', '1')")
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
                  let stored = try storedModel() else { return nil }
            let storedEntities = stored.entitiesByName
            return model.entities.allSatisfy({ storedEntities[$0.name] == $0 }) ? identifier : nil
        }
    }

    private func storedModel() throws -> ManagedObjectModel? {
        guard case .text(let json)? = try connection.query("SELECT value FROM swell_metadata WHERE key = 'model'").first?.first else {
            return nil
        }
        return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
    }

    private func create(_ entity: EntityDescription) throws {
        let table = quoteIdentifier(entity.name)
        let existing = try existingColumns(entity.name)
        if existing.isEmpty {
            let columns = ["\"_pk\" INTEGER PRIMARY KEY"] + entity.attributes.map {
                "\(quoteIdentifier($0.name)) \($0.type.sqliteColumnType)"
            }
            try connection.execute("CREATE TABLE \(table) (\(columns.joined(separator: ", ")))")
        } else {
            // A table of that name exists but the model never described it: adopt it only if it fits.
            guard existing.contains("_pk") else {
                throw StoreError.migrationFailed(entity: entity.name, attribute: nil,
                                                 reason: "a table of that name exists and was not made by Swell")
            }
            for attribute in entity.attributes where !existing.contains(attribute.name) {
                try addColumn(attribute, to: entity)
            }
        }
        try createKeyIndex(entity)
    }

    private func createKeyIndex(_ entity: EntityDescription) throws {
        guard !entity.uniquenessConstraint.isEmpty else { return }
        let columns = entity.uniquenessConstraint.map(quoteIdentifier).joined(separator: ", ")
        try connection.execute("CREATE UNIQUE INDEX IF NOT EXISTS \(quoteIdentifier("swell_\(entity.name)_key")) ON \(quoteIdentifier(entity.name)) (\(columns))")
    }

    private func addColumn(_ attribute: AttributeDescription, to entity: EntityDescription) throws {
        try connection.execute("ALTER TABLE \(quoteIdentifier(entity.name)) ADD COLUMN \(quoteIdentifier(attribute.name)) \(attribute.type.sqliteColumnType)")
    }

    private func existingColumns(_ table: String) throws -> Set<String> {
        let rows = try connection.query("SELECT name FROM pragma_table_info(?)", [.text(table)])
        return Set(rows.compactMap { if case .text(let name)? = $0.first { return name } else { return nil } })
    }

    private func rowCount(_ entity: String) throws -> Int {
        if case .integer(let count)? = try connection.query("SELECT count(*) FROM \(quoteIdentifier(entity))").first?.first {
            return Int(count)
        }
        return 0
    }

    private func migrate(entity: EntityDescription, from old: EntityDescription) throws {
        let oldAttributes = old.attributesByName
        let columns = try existingColumns(entity.name)
        var isEmpty: Bool?
        func tableIsEmpty() throws -> Bool {
            if let isEmpty { return isEmpty }
            let empty = try rowCount(entity.name) == 0
            isEmpty = empty
            return empty
        }
        for attribute in entity.attributes {
            if let previous = oldAttributes[attribute.name] {
                guard previous.type == attribute.type else {
                    throw StoreError.migrationFailed(
                        entity: entity.name, attribute: attribute.name,
                        reason: "its type changed from \(previous.type.rawValue) to \(attribute.type.rawValue); a type change needs a new store or a manual migration")
                }
                if previous.isOptional && !attribute.isOptional {
                    let nulls = try connection.query("SELECT count(*) FROM \(quoteIdentifier(entity.name)) WHERE \(quoteIdentifier(attribute.name)) IS NULL")
                    if case .integer(let count)? = nulls.first?.first, count > 0 {
                        throw StoreError.migrationFailed(
                            entity: entity.name, attribute: attribute.name,
                            reason: "it became required but \(count) stored row(s) have no value for it")
                    }
                }
            } else if columns.contains(attribute.name) {
                continue  // a column kept from an earlier model comes back
            } else {
                if !attribute.isOptional, try !tableIsEmpty() {
                    throw StoreError.migrationFailed(
                        entity: entity.name, attribute: attribute.name,
                        reason: "a new required attribute cannot be added to a table that already has rows (make it optional)")
                }
                try addColumn(attribute, to: entity)
            }
        }
        if old.uniquenessConstraint != entity.uniquenessConstraint {
            guard try tableIsEmpty() else {
                throw StoreError.migrationFailed(
                    entity: entity.name, attribute: entity.uniquenessConstraint.first ?? old.uniquenessConstraint.first,
                    reason: "its key changed from [\(old.uniquenessConstraint.joined(separator: ", "))] to [\(entity.uniquenessConstraint.joined(separator: ", "))] on a table that has rows")
            }
            try connection.execute("DROP INDEX IF EXISTS \(quoteIdentifier("swell_\(entity.name)_key"))")
        }
        try createKeyIndex(entity)
    }
}
