import SwellStoreCore

/// Applies one root save to a copy of an in-memory store's state, with the
/// merge policy's decisions (`MergePolicy`) for keys that already belong to
/// another row: what `SQLiteCommitter` does with SQL, on dictionaries.
package struct InMemoryCommitter {
    package var state: InMemoryState
    package let model: ManagedObjectModel
    package let storeIdentifier: String
    package let policy: MergePolicy
    private(set) var result = StoreCommitResult()

    package init(state: InMemoryState, model: ManagedObjectModel, storeIdentifier: String, policy: MergePolicy) {
        self.state = state
        self.model = model
        self.storeIdentifier = storeIdentifier
        self.policy = policy
    }

    private func objectID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
    }

    package mutating func apply(_ operation: StoreChangeSet.Operation) throws(StoreError) {
        guard let entity = model.entitiesByName[operation.entity] else { throw .unknownEntity(operation.entity) }
        switch operation.row.kind {
        case .inserted: try insert(operation, entity)
        case .updated: try update(operation, entity)
        case .deleted: delete(operation, entity)
        }
    }

    // MARK: Rows

    // Tables are changed in place through the dictionary's subscript (a copy taken out and
    // put back would copy every row of the table on each change).

    private mutating func store(_ values: [StoreValue], primaryKey: Int64, _ entity: EntityDescription) {
        let newKey = entity.key(of: values)
        Self.modify(&state.tables[entity.name, default: InMemoryTable()]) { table in
            if let old = table.rows[primaryKey], let oldKey = entity.key(of: old), oldKey != newKey, table.keys[oldKey] == primaryKey {
                table.keys.removeValue(forKey: oldKey)
            }
            table.rows[primaryKey] = values
            if let newKey { table.keys[newKey] = primaryKey }
        }
    }

    @discardableResult
    private mutating func remove(_ primaryKey: Int64, _ entity: EntityDescription) -> Bool {
        guard state.tables[entity.name]?.rows[primaryKey] != nil else { return false }
        Self.modify(&state.tables[entity.name, default: InMemoryTable()]) { table in
            guard let old = table.rows.removeValue(forKey: primaryKey) else { return }
            if let key = entity.key(of: old), table.keys[key] == primaryKey { table.keys.removeValue(forKey: key) }
        }
        return true
    }

    private static func modify(_ table: inout InMemoryTable, _ body: (inout InMemoryTable) -> Void) {
        body(&table)
    }

    private func values(_ primaryKey: Int64, _ entity: EntityDescription) -> [StoreValue]? {
        state.tables[entity.name]?.rows[primaryKey]
    }

    private func owner(ofKey key: [StoreValue], _ entity: EntityDescription) -> Int64? {
        state.tables[entity.name]?.keys[key]
    }

    private mutating func noteUpdate(_ id: ObjectID, attributes: Set<String>) {
        if result.inserted.contains(id) { return }
        result.updated[id, default: []].formUnion(attributes)
    }

    private func names(_ entity: EntityDescription, _ indices: [Int]) -> Set<String> {
        Set(indices.map { entity.attributes[$0].name })
    }

    // MARK: Operations

    private mutating func insert(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) throws(StoreError) {
        let row = operation.row
        let incoming = objectID(entity.name, operation.primaryKey)
        guard let key = entity.key(of: row.values), let existing = owner(ofKey: key, entity) else {
            guard values(operation.primaryKey, entity) == nil else { throw conflict(entity, values: row.values, incoming: incoming) }
            store(row.values, primaryKey: operation.primaryKey, entity)
            result.inserted.insert(incoming)
            return
        }
        let survivor = objectID(entity.name, existing)
        switch policy.resolution {
        case .fail:
            throw conflict(entity, values: row.values, incoming: incoming)
        case .keepExisting:
            result.merged[incoming] = survivor
        case .merge:
            let current = values(existing, entity) ?? row.values
            store(merge(current, with: row.values, set: { row.mask.contains($0) },
                        links: { row.kind == .inserted || row.mask.contains($0) }, entity),
                  primaryKey: existing, entity)
            if existing == operation.primaryKey && !row.keyCheckedAgainstStore {
                result.inserted.insert(incoming)
            } else {
                result.merged[incoming] = survivor
                noteUpdate(survivor, attributes: names(entity, policy.mayChange(mask: row.mask, count: entity.attributes.count)))
            }
        }
    }

    /// The survivor's values: each attribute by the policy's rule, a join-table to-many the union
    /// of both (Store guarantees 32) where `links` says the incoming change lists it.
    private func merge(_ existing: [StoreValue], with incoming: [StoreValue], set: (Int) -> Bool, links: (Int) -> Bool,
                       _ entity: EntityDescription) -> [StoreValue] {
        let key = Set(entity.keyIndices)
        var merged = existing
        for index in entity.attributes.indices where !key.contains(index) {
            if let join = entity.attributes[index].join {
                if links(index) { merged[index] = JoinTable.union(existing[index], incoming[index], ordered: join.isOrdered) }
            } else {
                merged[index] = policy.merged(existing: existing[index], incoming: incoming[index], incomingSet: set(index))
            }
        }
        return merged
    }

    private mutating func update(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) throws(StoreError) {
        let row = operation.row
        guard var values = values(operation.primaryKey, entity) else { return }
        let indices = row.mask.indices(below: entity.attributes.count)
        guard !indices.isEmpty else { return }
        for index in indices { values[index] = row.values[index] }
        let id = objectID(entity.name, operation.primaryKey)
        guard let key = entity.key(of: values), let existing = owner(ofKey: key, entity), existing != operation.primaryKey else {
            store(values, primaryKey: operation.primaryKey, entity)
            noteUpdate(id, attributes: names(entity, indices))
            return
        }
        // The object took a key another row has: the two become one, by the policy.
        switch policy.resolution {
        case .fail: throw conflict(entity, values: values, incoming: id)
        case .keepExisting: return
        case .merge: break
        }
        let existingValues = self.values(existing, entity) ?? values
        let merged = merge(existingValues, with: values, set: { indices.contains($0) }, links: { _ in true }, entity)
        remove(operation.primaryKey, entity)
        store(merged, primaryKey: existing, entity)
        let survivor = objectID(entity.name, existing)
        result.deleted.insert(id)
        result.merged[id] = survivor
        noteUpdate(survivor, attributes: names(entity, entity.attributes.indices.filter { merged[$0] != existingValues[$0] }))
    }

    private mutating func delete(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) {
        guard remove(operation.primaryKey, entity) else { return }
        let id = objectID(entity.name, operation.primaryKey)
        result.updated.removeValue(forKey: id)
        if result.inserted.remove(id) == nil { result.deleted.insert(id) }
    }

    /// After the operations: rows that name a new object that became an existing one (a key met
    /// a stored row), in a to-one or a join-table to-many, name the survivor instead (Store guarantees 32).
    package mutating func redirectReferences() {
        for redirect in result.referenceRedirects(in: model) {
            let index = redirect.attributeIndex, name = redirect.entity.name
            let map = Dictionary(redirect.moves, uniquingKeysWith: { first, _ in first })
            guard let rows = state.tables[name]?.rows else { continue }
            for (primaryKey, values) in rows {
                let renamed: StoreValue
                if let join = redirect.attribute.join {
                    renamed = JoinTable.renaming(values[index], map, ordered: join.isOrdered)
                } else if case .integer(let target) = values[index], let survivor = map[target] {
                    renamed = .integer(survivor)
                } else {
                    continue
                }
                if renamed != values[index] { state.tables[name]?.rows[primaryKey]?[index] = renamed }
            }
        }
    }

    private func conflict(_ entity: EntityDescription, values: [StoreValue], incoming: ObjectID) -> StoreError {
        var objects = [incoming]
        if let key = entity.key(of: values), let existing = owner(ofKey: key, entity), existing != incoming.primaryKey {
            objects.append(objectID(entity.name, existing))
        }
        return .constraintConflict(entity: entity.name, key: entity.keyDescription(of: values), objects: objects)
    }
}

/// A commit on a copy of the in-memory store's state (`CommitDriver`'s primitives): the
/// changes go to the copy, which the store takes as its state only once the commit
/// succeeded (`committed`); a failure leaves the store's state untouched. Column inserts
/// and updates are applied as the operations they stand for.
package struct InMemoryCommitTransaction: StoreCommitTransaction {
    package var committer: InMemoryCommitter
    /// The new state, set by `commit`.
    private(set) var committed: InMemoryState?

    package init(committer: InMemoryCommitter) {
        self.committer = committer
    }

    package var result: StoreCommitResult { committer.result }
    package var model: ManagedObjectModel { committer.model }
    package var storeIdentifier: String { committer.storeIdentifier }

    /// From the state this commit started from (commits are serialised by the store).
    package mutating func currentRows(primaryKeys: [Int64], entity: EntityDescription) -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        guard let rows = committer.state.tables[entity.name]?.rows else { return result }
        for key in primaryKeys { if let values = rows[key] { result[key] = values } }
        return result
    }

    package mutating func begin() {}

    package mutating func insertColumns(_ insert: ColumnInsert) throws {
        for n in insert.rows.indices { try committer.apply(insert.operation(n)) }
    }

    package mutating func apply(_ operations: [StoreChangeSet.Operation]) throws {
        for operation in operations { try committer.apply(operation) }
    }

    package mutating func updateColumns(_ update: ColumnUpdate) throws {
        for n in update.rows.indices { try committer.apply(update.operation(n)) }
    }

    package mutating func redirectReferences() {
        committer.redirectReferences()
    }

    package mutating func setMetadata(_ value: String?, forKey key: String) {
        committer.state.metadata[key] = value
    }

    package mutating func recordsHistory() -> Bool {
        committer.state.history != nil
    }

    package mutating func keyValues(of rows: [RowReference]) -> [RowReference: [String: StoreValue]] {
        var result: [RowReference: [String: StoreValue]] = [:]
        for row in rows {
            guard let entity = committer.model.entitiesByName[row.entity], !entity.uniquenessConstraint.isEmpty,
                  let values = committer.state.tables[row.entity]?.rows[row.primaryKey] else { continue }
            var key: [String: StoreValue] = [:]
            for name in entity.uniquenessConstraint {
                if let index = entity.attributes.firstIndex(where: { $0.name == name }) { key[name] = values[index] }
            }
            result[row] = key
        }
        return result
    }

    package mutating func recordHistory(_ record: HistoryRecord) {
        committer.state.lastHistoryToken += 1
        committer.state.history?.append((committer.state.lastHistoryToken, record))
    }

    package mutating func commit() {
        committed = committer.state
    }

    package mutating func rollback() {
        committed = nil
    }
}
