import Foundation
import SwellStoreCore

/// The row-level implementation behind `BulkSession` (its public face, in this folder).
extension ManagedObjectContext {
    /// The entities a request's predicate reads through key paths (every destination along
    /// them; empty without key paths).
    package func predicatePathEntities(_ request: FetchRequest) throws -> Set<String> {
        try makePlan(request).predicate?.pathEntities ?? []
    }

    // MARK: Streaming

    /// Calls `body` with the primary key and values (by attribute index) of each
    /// object a fetch would return, in order, without creating managed objects.
    /// With no unsaved changes for the entity in this context or its ancestors,
    /// rows stream from one snapshot of the store in constant memory.
    package func enumerateRows(_ request: FetchRequest, _ body: (Int64, [StoreValue]) throws -> Void) throws {
        assertOnQueue("read \(request.entityName)")
        let plan = try makePlan(request)
        if layerChain(entity: plan.entity.name, includeSelf: true).isEmpty {
            try readStore { reader in
                try reader.forEachRow(plan.storeQuery) { try body($0.primaryKey, $0.values) }
            }
            return
        }
        for row in try resolveRows(plan) {
            try body(row.primaryKey, row.values)
        }
    }

    /// Like `enumerateRows`, with each row's values read in place from the store
    /// (no `StoreValue`s or `String`s made): `body` must not keep the cursor.
    /// The exports format millions of rows this way, in constant memory.
    ///
    /// `keyPaths` are read after the attributes (cursor indices from the entity's
    /// attribute count on), through relationships, from saved data only: with unsaved
    /// changes of the entity above, they throw.
    package func enumerateRowCursors(_ request: FetchRequest, keyPaths: [KeyPathColumn] = [],
                                     _ body: (StoreRowCursor) throws -> Void) throws {
        assertOnQueue("read \(request.entityName)")
        let plan = try makePlan(request)
        if layerChain(entity: plan.entity.name, includeSelf: true).isEmpty {
            var query = plan.storeQuery
            if !keyPaths.isEmpty, let coordinator {
                // Checked here, so a bad path fails the same way in every store.
                for path in keyPaths { _ = try ResolvedKeyPath(path, from: plan.entity, entities: coordinator.entitiesByName) }
                query.extraColumns = keyPaths
            }
            try readStore { reader in try reader.forEachRowCursor(query, body) }
            return
        }
        guard keyPaths.isEmpty else {
            throw StoreError.keyPathNeedsSavedData(entity: plan.entity.name, keyPath: keyPaths[0].path.joined(separator: "."))
        }
        for row in try resolveRows(plan) {
            try body(StoreRowCursor(primaryKey: row.primaryKey, values: row.values))
        }
    }

    /// The stored values of the objects with these keys (uniqueness-constraint values),
    /// for the keys no unsaved change in this context or its ancestors concerns: no
    /// level holds a change to the key or to the stored object, so the object is, as
    /// of this call, exactly as stored. Keys left out: no stored object has them, or a
    /// level has changes that concern them (resolve those by saving). One store read.
    ///
    /// The pipeline's workers use it to leave a record that arrives equal to what is
    /// stored out of their context altogether (a re-sync's unchanged records).
    package func storedValues(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: [StoreValue]] {
        try storedRows(forKeys: keys, entity: entity).mapValues(\.values)
    }

    /// `storedValues(forKeys:entity:)` with each object's primary key: the pipeline links
    /// nested records to the objects already stored for their keys.
    package func storedRows(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: (primaryKey: Int64, values: [StoreValue])] {
        assertOnQueue("read \(entity.name)")
        guard !entity.uniquenessConstraint.isEmpty, !keys.isEmpty else { return [:] }
        let layers = layerChain(entity: entity.name, includeSelf: true).filter { !$0.rows.isEmpty }
        let wanted = layers.isEmpty ? keys : keys.filter { key in !layers.contains { $0.keyIndex[key] != nil } }
        guard !wanted.isEmpty else { return [:] }
        // What is stored now, not a pinned context's snapshot: callers decide what to write by it.
        let found = try storeOrThrow().read { try $0.rows(forKeys: wanted, entity: entity) }
        var result: [[StoreValue]: (primaryKey: Int64, values: [StoreValue])] = [:]
        result.reserveCapacity(found.count)
        for (key, row) in found where !layers.contains(where: { $0.rows[row.primaryKey] != nil }) {
            result[key] = (row.primaryKey, row.values)
        }
        return result
    }

    /// The entity a request names, as the model has it.
    package func entityDescription(named name: String) throws -> EntityDescription {
        guard let coordinator else { throw StoreError.noPersistentStore }
        return try coordinator.entity(named: name)
    }
}

extension ManagedObjectContext {
    // MARK: Bulk changes for the pipeline

    /// Inserts a row without creating a managed object: the pipeline's upsert
    /// workers insert thousands of records a batch and never read them back.
    /// `values` are by attribute index; every attribute counts as set.
    ///
    /// In a child context, a row of an entity whose key is one required integer
    /// attribute takes its key as its ID (stored as the table's rowid alone, one
    /// b-tree entry), unless this context already has a row with that ID or the
    /// coordinator handed the number out. Its ID is not final until this context
    /// saves: two such rows of one key (from two children) are one object merged
    /// by the parent's policy, and a row whose ID another object has takes a new
    /// one (`ContextDidSaveChanges.merged` says which). Other rows, and those of a
    /// root context, get a new ID from the coordinator.
    @discardableResult
    package func insertRow(entity: EntityDescription, values: [StoreValue]) -> Int64 {
        insertRow(entity: entity, keyIndices: entity.keyIndices, values: values)
    }

    /// Makes room for `count` more rows of `entity` at this level, so that a bulk
    /// insert of that many rows does not grow (rehash) its tables on the way.
    package func reserveRows(_ count: Int, entity: EntityDescription) {
        assertOnQueue("insert a \(entity.name)")
        level.withLock { level in
            level.pending.modify(entity.name) { changes in
                changes.rows.reserveCapacity(changes.rows.count + count)
                if !entity.uniquenessConstraint.isEmpty {
                    changes.keyIndex.reserveCapacity(changes.keyIndex.count + count)
                    changes.keyOfRow.reserveCapacity(changes.keyOfRow.count + count)
                }
            }
        }
    }

    /// `insertRow(entity:values:)` with the key's attribute indices worked out
    /// once by the caller (`entity.keyIndices`), for inserting many rows.
    /// Returns the row's primary key at this level (see above: not final until the save).
    ///
    /// `values` may stop after the model's attributes (`entity` as the model has it): the
    /// relationship columns the store keeps after them are then not set, so a row that
    /// merges into a stored object of its key keeps that object's links.
    @discardableResult
    package func insertRow(entity: EntityDescription, keyIndices: [Int], values given: [StoreValue]) -> Int64 {
        assertOnQueue("insert a \(entity.name)")
        let (found, isChild) = chainLinks
        guard let coordinator = found ?? coordinator else { return 0 }
        var values = given
        if coordinator.hasRelationships, let count = coordinator.entitiesByName[entity.name]?.attributes.count, count > given.count {
            values += repeatElement(.null, count: count - given.count)
        }
        var keyAsID: Int64?
        if isChild, keyIndices.count == 1, case .integer(let key) = values[keyIndices[0]], entity.attributes[keyIndices[0]].type == .integer,
           !entity.attributes[keyIndices[0]].isOptional, coordinator.mayUseKeyAsID(key, for: entity.name) {
            keyAsID = key
        }
        return level.withLock { level in
            // Taking a sequence folds the segments: `changes` below is all of this level (a child has no save in flight).
            let sequence = level.pending.takeSequence()
            var failure: StoreError?
            defer { if let failure { level.invalidValues.append(failure) } }
            return level.pending.modify(entity.name) { changes in
                let key: Int64
                if let keyAsID, changes.rows[keyAsID] == nil {
                    key = keyAsID
                } else {
                    key = nextPrimaryKey(for: entity.name, from: coordinator, failure: &failure)
                }
                changes.rows[key] = PendingRow(kind: .inserted, values: values, mask: .all(given.count), sequence: sequence)
                if !keyIndices.isEmpty {
                    let keyValues = keyIndices.map { values[$0] }
                    if !keyValues.contains(where: \.isNull) { changes.setKey(keyValues, for: key) }
                }
                return key
            }
        }
    }

    /// An object's values as this context sees them (its and its parents' unsaved
    /// changes over the store's), by attribute index; nulls for an ID nothing has.
    package func currentValues(entity: EntityDescription, primaryKey: Int64) -> [StoreValue] {
        object(with: objectID(entity.name, primaryKey)).currentValues()
    }

    /// Changes the attributes at `indices` of an existing object's row (by primary key)
    /// to `values` (by attribute index; other positions are ignored) without creating a
    /// managed object: the pipeline relinks and unlinks stored objects this way. Over a
    /// change this level already holds for the row, the new values win; a row deleted
    /// here stays deleted.
    package func updateRow(entity: EntityDescription, primaryKey: Int64, values: [StoreValue], indices: [Int]) {
        assertOnQueue("update a \(entity.name)")
        guard !indices.isEmpty else { return }
        let keyIndices = entity.keyIndices
        level.withLock { level in
            let sequence = level.pending.takeSequence()
            level.pending.modify(entity.name) { changes in
                var row = changes.rows[primaryKey]
                    ?? PendingRow(kind: .updated, values: Array(repeating: .null, count: entity.attributes.count), mask: .empty, sequence: sequence)
                guard row.kind != .deleted else { return }
                for index in indices {
                    row.values[index] = values[index]
                    row.mask.insert(index)
                }
                changes.rows[primaryKey] = row
                if indices.contains(where: keyIndices.contains), row.kind == .inserted || keyIndices.allSatisfy(row.mask.contains) {
                    let key = keyIndices.map { row.values[$0] }
                    changes.setKey(key.contains(where: \.isNull) ? nil : key, for: primaryKey)
                }
            }
        }
    }

    /// Deletes the rows with these primary keys of `entity`'s table (found with
    /// `enumerateRows`) without reading them or creating managed objects: replace
    /// mode deletes thousands of rows at once. A row whose object this context
    /// has handed out is deleted as `delete(_:)` does; the others, like
    /// `insertRow`'s rows, are no object's edits (`saveIntoParentOffQueue` moves them).
    package func deleteRows(entity: String, primaryKeys: [Int64]) {
        assertOnQueue("delete \(entity) rows")
        var rows: [Int64] = []
        rows.reserveCapacity(primaryKeys.count)
        for key in primaryKeys {
            if !registry.isEmpty, let object = registeredObject(for: objectID(entity, key)) {
                delete(object)
            } else {
                rows.append(key)
            }
        }
        guard !rows.isEmpty else { return }
        level.withLock { level in
            let sequences = rows.map { _ in level.pending.takeSequence() }
            level.pending.modify(entity) { changes in
                for (key, sequence) in zip(rows, sequences) { changes.markDeleted(key, sequence: sequence) }
            }
        }
    }
}
