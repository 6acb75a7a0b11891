/// What one store does inside one commit: the primitives `CommitDriver` calls, in its order.
///
/// Each store implements it over its own medium (SQLite statements, PostgreSQL `COPY` and
/// statements, an in-memory copy of the state); the order of the steps, the transaction's
/// bounds and what happens on a failure are the driver's, so they are written once.
package protocol StoreCommitTransaction {
    /// Starts the transaction (nothing is visible to readers until `commit`).
    mutating func begin() throws
    /// Writes a batch insert's new rows from their column buffers.
    mutating func insertColumns(_ insert: ColumnInsert) throws
    /// Applies the operations, in order (a store may write runs of them together).
    mutating func apply(_ operations: [StoreChangeSet.Operation]) throws
    /// Updates stored rows from column buffers (a batch insert's differing rows).
    mutating func updateColumns(_ update: ColumnUpdate) throws
    /// Sets the links of a batch insert's rows (after their rows are written).
    mutating func writeLinks(_ links: LinkWrite) throws
    /// Points references at the survivors of rows the operations merged (uniqueness).
    mutating func redirectReferences() throws
    /// Keeps `value` beside the data under `key` (nil removes it).
    mutating func setMetadata(_ value: String?, forKey key: String) throws
    /// Whether the store records history (Store guarantees 46), asked inside the transaction so a
    /// store another process turned it on for records this commit too.
    mutating func recordsHistory() throws -> Bool
    /// The key values (uniqueness constraint) of these stored rows, read before they go.
    mutating func keyValues(of rows: [RowReference]) throws -> [RowReference: [String: StoreValue]]
    /// The values of these stored rows now, by primary key (absent: no such row), read inside the
    /// transaction and held against other writers until it ends (for the version check:
    /// `MergePolicy.resolveVersion`). `entity` is the coordinator's copy.
    mutating func currentRows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]]
    /// The model the change sets are written in (the coordinator's copy).
    var model: ManagedObjectModel { get }
    /// The store's identifier, for the object IDs a conflict names.
    var storeIdentifier: String { get }
    /// Records the transaction's history, in the transaction.
    mutating func recordHistory(_ record: HistoryRecord) throws
    /// Makes everything written since `begin` durable and visible, at once.
    mutating func commit() throws
    /// Drops everything written since `begin` (after a failed step; errors are ignored,
    /// since the step's own error is the one reported).
    mutating func rollback()
    /// What the commit did, for the did-save notice.
    var result: StoreCommitResult { get }
}

extension StoreCommitTransaction {
    /// Stores without persistent history record none.
    package mutating func recordsHistory() throws -> Bool { false }
    package mutating func keyValues(of rows: [RowReference]) throws -> [RowReference: [String: StoreValue]] { [:] }
    package mutating func recordHistory(_ record: HistoryRecord) throws {}

    /// Each owner's list as an update of its join column, applied as an operation (an owner
    /// a key conflict merged into a survivor updates the survivor).
    package mutating func writeLinks(_ links: LinkWrite) throws {
        let owners = links.owners(following: result.merged)
        try apply(owners.indices.map { n in
            var operation = links.operation(n)
            operation.primaryKey = owners[n]
            return operation
        })
    }
}

/// The one commit procedure of every store: a change set's column inserts, operations and
/// column updates, the redirected references, the metadata and the history (Store guarantees 47),
/// in one transaction that is committed whole or rolled back.
package enum CommitDriver {
    /// Writes `changes` through `transaction`; on any failure, rolls it back and rethrows.
    package static func commit<Transaction: StoreCommitTransaction>(_ changes: StoreChangeSet,
                                                                   through transaction: inout Transaction) throws -> StoreCommitResult {
        try transaction.begin()
        do {
            // Asked first: on PostgreSQL it takes the lock that turning history on waits behind.
            let history = try transaction.recordsHistory()
            var changes = changes
            let resolved = try checkVersions(&changes, through: &transaction)
            let keysBefore = history ? try keysBefore(changes, through: &transaction) : [:]
            for insert in changes.columnInserts { try transaction.insertColumns(insert) }
            try transaction.apply(changes.operations)
            for update in changes.columnUpdates { try transaction.updateColumns(update) }
            for links in changes.linkWrites { try transaction.writeLinks(links) }
            try transaction.redirectReferences()
            for (key, value) in changes.metadata.sorted(by: { $0.key < $1.key }) {
                try transaction.setMetadata(value, forKey: key)
            }
            if history {
                let record = HistoryRecord(result: transaction.result, author: changes.author, contextName: changes.contextName,
                                           keysBefore: keysBefore)
                if !record.isEmpty { try transaction.recordHistory(record) }
            }
            try transaction.commit()
            var result = transaction.result
            result.resolvedConflicts = resolved
            return result
        } catch {
            transaction.rollback()
            throw error
        }
    }

    /// Checks every update and delete that carries the values it was based on against the stored
    /// row now (Store guarantees 61), and applies the change set's merge policy to those that
    /// changed since: their operations are replaced or dropped. Throws `.mergeConflict` listing
    /// every conflict the policy leaves (nothing is written then). Returns the objects whose
    /// changes a policy resolved, whose contexts re-read them after the commit.
    private static func checkVersions<Transaction: StoreCommitTransaction>(_ changes: inout StoreChangeSet,
                                                                          through transaction: inout Transaction) throws -> Set<ObjectID> {
        var checked: [String: [Int64]] = [:]
        for operation in changes.operations where operation.row.base != nil && operation.row.kind != .inserted {
            checked[operation.entity, default: []].append(operation.primaryKey)
        }
        guard !checked.isEmpty else { return [] }
        // Looked up once: the model builds this dictionary at each call.
        let entities = transaction.model.entitiesByName
        var current: [String: [Int64: [StoreValue]]] = [:]
        for (entityName, primaryKeys) in checked.sorted(by: { $0.key < $1.key }) {
            guard let entity = entities[entityName] else { throw StoreError.unknownEntity(entityName) }
            current[entityName] = try transaction.currentRows(primaryKeys: primaryKeys, entity: entity)
        }
        var conflicts: [MergeConflict] = []
        var resolved = Set<ObjectID>()
        var kept: [StoreChangeSet.Operation] = []
        kept.reserveCapacity(changes.operations.count)
        for operation in changes.operations {
            guard operation.row.base != nil, operation.row.kind != .inserted,
                  let entity = entities[operation.entity] else {
                kept.append(operation)
                continue
            }
            let id = ObjectID(entityName: operation.entity, primaryKey: operation.primaryKey, storeIdentifier: transaction.storeIdentifier)
            let stored = current[operation.entity]?[operation.primaryKey]
            switch changes.mergePolicy.resolveVersion(of: operation.row, id: id, entity: entity, current: stored) {
            case .unchanged:
                kept.append(operation)
            case .write(let row):
                var replaced = operation
                replaced.row = row
                kept.append(replaced)
                resolved.insert(id)
            case .drop:
                resolved.insert(id)
            case .conflict(let conflict):
                conflicts.append(conflict)
            }
        }
        if !conflicts.isEmpty { throw StoreError.mergeConflict(conflicts) }
        changes.operations = kept
        return resolved
    }

    /// The keys rows had before this commit, for its history (Store guarantees 46): every deleted
    /// row's (gone from the table after), and the old key of every update that changes a
    /// key attribute's value (a row merged into another by its new key is one of them), so
    /// a reader that keeps rows by key knows which one to drop.
    private static func keysBefore<Transaction: StoreCommitTransaction>(_ changes: StoreChangeSet,
                                                                       through transaction: inout Transaction) throws -> [RowReference: [String: StoreValue]] {
        var rows: [RowReference] = []
        var keyUpdates: [(RowReference, StoreChangeSet.Operation, EntityDescription)] = []
        let entities = transaction.model.entitiesByName
        for operation in changes.operations {
            let row = RowReference(entity: operation.entity, primaryKey: operation.primaryKey)
            switch operation.row.kind {
            case .deleted: rows.append(row)
            case .updated:
                guard let entity = entities[operation.entity],
                      entity.keyIndices.contains(where: operation.row.mask.contains) else { continue }
                rows.append(row)
                keyUpdates.append((row, operation, entity))
            case .inserted: continue
            }
        }
        guard !rows.isEmpty else { return [:] }
        var keys = try transaction.keyValues(of: rows)
        for (row, operation, entity) in keyUpdates {
            guard let before = keys[row] else { continue }
            // The key after: the update's values where it sets them, the old ones elsewhere.
            let unchanged = entity.keyIndices.allSatisfy { index in
                !operation.row.mask.contains(index) || before[entity.attributes[index].name] == operation.row.values[index]
            }
            if unchanged { keys[row] = nil }
        }
        return keys
    }
}
