/// What one stage of a staged migration (Store guarantees 58; DocC "Migrating a store") asks of
/// a store's load beyond its model, done in the load's one transaction: the stage's marker in the
/// store's metadata, and a custom stage's per-row transforms.
package struct MigrationStageWork {
    /// Store metadata (`swell_state`) to set; a nil value removes the key.
    package var metadata: [String: String?] = [:]
    /// Per entity of the new model: the transform each of its rows goes through, after the
    /// lightweight rules (`ModelMigration.EntityStep.transform`).
    package var transforms: [String: MigrationRowTransform] = [:]

    /// The versions the stage goes from and to: the load checks, in its transaction, that the
    /// store is still at `from` (another process may have run the stage since it was read).
    package var versions: (from: String?, to: String?)?

    package init(metadata: [String: String?] = [:], transforms: [String: MigrationRowTransform] = [:],
                 versions: (from: String?, to: String?)? = nil) {
        self.metadata = metadata
        self.transforms = transforms
        self.versions = versions
    }

    /// Whether the stage is to be done on a store that recorded `recorded` (read in the load's
    /// transaction): yes at the stage's first version, no when it is at the stage's second
    /// already (another opener ran it), and `.migrationFailed` at any other.
    package func isDue(recorded: ManagedObjectModel?) throws(StoreError) -> Bool {
        guard let versions else { return true }
        let current = recorded?.versionIdentifier
        if current == versions.to { return false }
        guard current == versions.from else {
            throw .migrationFailed(version: current, reason: "the store's model version is '\(current ?? "none")' where the migration stage from '\(versions.from ?? "none")' to '\(versions.to ?? "none")' expected '\(versions.from ?? "none")': another process changed it meanwhile")
        }
        return true
    }
}

/// One row's transform: the recorded object's own attribute values by their old names, and the
/// new object's, by the new names, as the lightweight rules made them (changed in place).
package typealias MigrationRowTransform = (_ old: [String: StoreValue], _ new: inout [String: StoreValue]) throws -> Void

extension ModelMigration.EntityStep {
    /// The new columns' values (the entity's first `columnCount` attributes) for one recorded row
    /// (`old`: the values of `previous`'s columns, in order): each column from the one it
    /// continues, widened, nils filled; a new column its default or nil.
    package func migratedColumns(_ old: [StoreValue]) -> [StoreValue] {
        guard let previous else { return columns.map { $0.fill ?? .null } }
        let index = Dictionary(previous.attributes.prefix(previous.columnCount).enumerated().map { ($1.name, $0) },
                               uniquingKeysWith: { first, _ in first })
        return columns.map { column in
            var value = column.previousName.flatMap { index[$0] }.map { old[$0] } ?? .null
            if let widening = column.widening { value = widening.apply(value) }
            if value.isNull, let fill = column.fill { value = fill }
            return value
        }
    }

    /// Runs `transform` on one row: `old` the recorded row's column values, `new` the migrated
    /// ones (`migratedColumns`); returns the new column values. The transform sees and sets the
    /// entity's own attributes (not its relationships); one it leaves alone keeps its migrated
    /// value. A key attribute cannot change (an object keeps its identity through a migration).
    /// What the transform throws fails the migration: a `StoreError` as it is, any other error
    /// as `.migrationFailed` naming the entity and the error.
    package func transform(_ transform: MigrationRowTransform, old: [StoreValue], new: [StoreValue]) throws(StoreError) -> [StoreValue] {
        guard let previous else { return new }
        var oldValues: [String: StoreValue] = [:]
        for index in previous.ownAttributeIndices where index < previous.columnCount {
            oldValues[previous.attributes[index].name] = old[index]
        }
        var newValues: [String: StoreValue] = [:]
        let own = entity.ownAttributeIndices.filter { $0 < entity.columnCount }
        for index in own { newValues[entity.attributes[index].name] = new[index] }
        do {
            try transform(oldValues, &newValues)
        } catch {
            throw error as? StoreError
                ?? .migrationFailed(entity: entity.name, attribute: nil, reason: "the migration stage's transform threw: \(error)")
        }
        var result = new
        let keys = Set(entity.uniquenessConstraint)
        for index in own {
            let attribute = entity.attributes[index]
            let value = newValues[attribute.name] ?? .null
            if keys.contains(attribute.name), value != new[index] {
                throw StoreError.migrationFailed(entity: entity.name, attribute: attribute.name,
                                                 reason: "a migration stage's transform changed a key attribute (\(new[index]) → \(value)); an object keeps its key through a migration")
            }
            result[index] = value
        }
        return result
    }

    /// Runs `transform` over a table's recorded rows, a chunk at a time: `chunk(after:)` returns
    /// the rows after a position, in order, each as (position, object ID, the values of
    /// `previous`'s columns), and none at the end; `write` takes each row's ID and new column values.
    package func transformRows(_ transform: MigrationRowTransform,
                               chunk: (_ after: Int64) throws -> [(position: Int64, id: StoreValue, old: [StoreValue])],
                               write: (_ id: StoreValue, _ new: [StoreValue]) throws -> Void) throws {
        var last = Int64.min
        while true {
            let rows = try chunk(last)
            guard let final = rows.last else { return }
            last = final.position
            for row in rows {
                try write(row.id, try self.transform(transform, old: row.old, new: migratedColumns(row.old)))
            }
        }
    }
}
