import Foundation
import SwellStoreCore

/// Turns a batch request into one store commit (Store guarantees 37–43): reads the stored rows it
/// meets from one snapshot, decides each row by the merge policy's rules (`MergePolicy`,
/// the one place they live), and commits only what changes, as one transaction, through
/// the store seam every store implements (`PersistentStore.commit`). Runs on the root
/// context's queue, serialised with the root's saves.
struct BatchWriter {
    let coordinator: PersistentStoreCoordinator
    let store: any PersistentStore
    /// The executing context's merge policy.
    let policy: MergePolicy
    /// Whether a columns batch reports each row's primary key (`Outcome.primaryKeys`).
    var reportsPrimaryKeys = false
    /// Whether rows are checked against the attribute rules (not when the request says its
    /// maker checked them: `BatchInsertRequest.rulesChecked`).
    var checksRules = true
    /// The executing context's `transactionAuthor` and `name`, kept with the history.
    var author: String? = nil
    var contextName: String? = nil
    /// Store metadata committed with the rows (`BatchInsertRequest.storeMetadata`), also when no row changes.
    var metadata: [String: String?] = [:]
    /// The entity as the store keeps it (relationship columns after the attributes).
    let entity: EntityDescription

    /// The indices of the entity's own attributes (not relationship columns), by name.
    var attributeIndices: [String: Int] {
        var indices: [String: Int] = [:]
        for index in entity.ownAttributeIndices { indices[entity.attributes[index].name] = index }
        return indices
    }

    /// The indices of the entity's required attributes (not relationship columns).
    var requiredAttributes: [Int] {
        entity.ownAttributeIndices.filter { !entity.attributes[$0].isOptional }
    }

    /// The entity's columns with attribute rules, each with its checker (Store guarantees 55).
    var ruleCheckers: [(index: Int, checker: AttributeRuleChecker)] {
        guard checksRules else { return [] }
        return coordinator.validationPlans[entity.name]?.checked ?? []
    }

    /// A batch row's value breaking `rule`, in `invalidBatchRow`'s words.
    static func breaks(_ value: StoreValue, _ rule: AttributeRule) -> String {
        let shown = switch value {
        case .null: "nil"
        case .integer(let int): String(int)
        case .real(let double): String(double)
        case .text(let text): "\"\(text)\""
        }
        return "holds \(shown), breaking the rule \(rule)"
    }

    func objectID(_ key: Int64) -> ObjectID {
        ObjectID(entityName: entity.name, primaryKey: key, storeIdentifier: store.identifier)
    }

    /// What a request did: the change notice and the rows met but left as they were.
    struct Outcome {
        var changes = ContextDidSaveChanges()
        var unchanged: Set<ObjectID> = []
        /// Rows the store compared equal to their stored row (none of them in `unchanged`).
        var unchangedKeys: UnchangedKeys?
        /// New rows a key conflict at the commit merged into a stored row: incoming → survivor.
        var merged: [ObjectID: ObjectID] = [:]
        /// A columns batch's primary key per row (`reportsPrimaryKeys`), else empty.
        var primaryKeys: [Int64] = []
    }

    /// The primary keys of unchanged rows of one entity in one store.
    struct UnchangedKeys: Sendable {
        let entity: String
        let store: String
        var keys: [Int64]
    }

    // MARK: Batch insert

    /// One row of a batch insert: a value per stored attribute and the ones it carries.
    struct IncomingRow {
        var values: [StoreValue]
        var mask: AttributeMask
        /// Its position in the request, for errors.
        var index: Int
    }

    func insert(_ request: BatchInsertRequest) throws -> Outcome {
        var rows: [IncomingRow] = []
        var rowForKey: [[StoreValue]: Int] = [:]
        let keyIndices = entity.keyIndices
        func add(_ row: IncomingRow) {
            // Within one request the later row for a key wins (Store guarantees 39).
            if !keyIndices.isEmpty {
                let key = keyIndices.map { row.values[$0] }
                if !key.contains(where: \.isNull) {
                    if let earlier = rowForKey[key] {
                        rows[earlier] = row
                        return
                    }
                    rowForKey[key] = rows.count
                }
            }
            rows.append(row)
        }
        let indices = attributeIndices
        switch request.rows {
        case .objects(let objects):
            for (index, object) in objects.enumerated() { add(try row(object, index: index, indices: indices)) }
        case .handler(let handler):
            var index = 0
            while true {
                var object: [String: Any] = [:]
                if handler(&object) { break }
                add(try row(object, index: index, indices: indices))
                index += 1
            }
        case .columns(let columns):
            return try insert(columns, comparedAhead: request.comparedAhead)
        }
        return try write(rows, rowForKey: rowForKey)
    }

    /// IDs for `count` new rows: where the entity's key is its table's rowid, a row's key
    /// (`keys[i]`, when given) is its ID unless another object holds that ID already (a
    /// row whose key changed keeps its old key as its ID); the others are reserved.
    func newIDs(count: Int, keys: [Int64?]) throws -> [Int64] {
        guard count > 0 else { return [] }
        var ids = [Int64](repeating: 0, count: count)
        var candidates: [Int64] = []
        candidates.reserveCapacity(keys.count)
        if !keys.isEmpty {
            for (n, key) in keys.enumerated() {
                if let key, store.mayUseKeyAsID(key, for: entity.name) {
                    ids[n] = key
                    candidates.append(key)
                }
            }
        }
        let displaced = candidates.isEmpty ? [:] : try store.read { try $0.rows(displacedIDs: candidates, entity: entity) }
        var reserve: [Int] = []
        reserve.reserveCapacity(count)
        for n in 0..<count where ids[n] == 0 || displaced[ids[n]] != nil { reserve.append(n) }
        if !reserve.isEmpty {
            let reserved = try coordinator.allocatePrimaryKeys(for: entity.name, count: Int64(reserve.count))
            for (n, id) in zip(reserve, reserved) { ids[n] = id }
        }
        return ids
    }

    /// A dictionary row as stored values; unknown names and values of the wrong type fail, naming the row.
    private func row(_ object: [String: Any], index: Int, indices: [String: Int]) throws -> IncomingRow {
        var values = [StoreValue](repeating: .null, count: entity.attributes.count)
        var mask = AttributeMask.empty
        for (name, value) in object {
            guard let position = indices[name] else {
                let problem = entity.relationship(named: name) != nil
                    ? "is a relationship: batch inserts set attributes only" : "is not an attribute of \(entity.name)"
                throw StoreError.invalidBatchRow(entity: entity.name, row: index, attribute: name, problem: problem)
            }
            let type = entity.attributes[position].type
            guard let converted = StoreValue(swiftValue: value is NSNull ? nil : value, for: type) else {
                throw StoreError.invalidBatchRow(entity: entity.name, row: index, attribute: name,
                                                 problem: "holds a value of type \(Swift.type(of: value)), not a \(type.rawValue)")
            }
            values[position] = converted
            mask.insert(position)
        }
        for (position, checker) in ruleCheckers where mask.contains(position) {
            if let rule = checker.brokenRule(by: values[position]) {
                throw StoreError.invalidBatchRow(entity: entity.name, row: index, attribute: entity.attributes[position].name,
                                                 problem: Self.breaks(values[position], rule))
            }
        }
        return IncomingRow(values: values, mask: mask, index: index)
    }

    /// Meets the rows with the stored rows of their keys and commits what changes.
    private func write(_ rows: [IncomingRow], rowForKey: [[StoreValue]: Int]) throws -> Outcome {
        let stored: [[StoreValue]: StoreRow] = rowForKey.isEmpty ? [:] : try store.read { reader in
            try reader.rows(forKeys: Array(rowForKey.keys), entity: entity)
        }
        let keyIndices = entity.keyIndices
        let required = requiredAttributes
        var newRows: [IncomingRow] = []
        var merging: [(IncomingRow, StoreRow)] = []
        for row in rows {
            if !keyIndices.isEmpty, let existing = stored[keyIndices.map { row.values[$0] }] {
                merging.append((row, existing))
                continue
            }
            if let missing = required.first(where: { row.values[$0].isNull }) {
                throw StoreError.invalidBatchRow(entity: entity.name, row: row.index, attribute: entity.attributes[missing].name,
                                                 problem: "is required and has no value")
            }
            newRows.append(row)
        }
        var outcome = Outcome()
        var operations = try merge(merging, outcome: &outcome)
        var keys: [Int64?] = []
        if let rowidKey = entity.rowidKeyIndex {
            keys = newRows.map { if case .integer(let key) = $0.values[rowidKey] { key } else { nil } }
        }
        let ids = try newIDs(count: newRows.count, keys: keys)
        for (row, id) in zip(newRows, ids) {
            var pending = PendingRow(kind: .inserted, values: row.values, mask: row.mask, sequence: UInt64(operations.count))
            pending.keyCheckedAgainstStore = true
            operations.append(.init(entity: entity.name, primaryKey: id, row: pending))
        }
        try commit(operations, into: &outcome)
        return outcome
    }

    /// Rows whose key is stored, each with its stored row, merged by the policy: the
    /// updates to write; the rows that stay as they are are noted unchanged.
    func merge(_ rows: [(IncomingRow, StoreRow)], outcome: inout Outcome) throws -> [StoreChangeSet.Operation] {
        let required = requiredAttributes
        // Own attributes, and the relationship columns a package batch carries (to-one IDs, member lists).
        let own = Array(attributeIndices.values)
        let relationshipColumns = entity.attributes.indices.filter {
            entity.attributes[$0].destination != nil || entity.attributes[$0].join != nil
        }
        var operations: [StoreChangeSet.Operation] = []
        for (row, existing) in rows {
            let id = objectID(existing.primaryKey)
            switch policy.resolution {
            case .fail:
                throw StoreError.constraintConflict(entity: entity.name, key: entity.keyDescription(of: row.values), objects: [id])
            case .keepExisting:
                outcome.unchanged.insert(id)
                continue
            case .merge:
                break
            }
            var values = existing.values
            var changed = AttributeMask.empty
            for index in own + relationshipColumns.filter(row.mask.contains) {
                let merged = policy.merged(existing: existing.values[index], incoming: row.values[index], incomingSet: row.mask.contains(index))
                if merged != existing.values[index] {
                    values[index] = merged
                    changed.insert(index)
                }
            }
            if let missing = required.first(where: { values[$0].isNull }) {
                throw StoreError.invalidBatchRow(entity: entity.name, row: row.index, attribute: entity.attributes[missing].name,
                                                 problem: "is required and the \(policy) policy leaves it without a value")
            }
            if changed == .empty {
                outcome.unchanged.insert(id)
            } else {
                operations.append(.init(entity: entity.name, primaryKey: existing.primaryKey,
                                        row: PendingRow(kind: .updated, values: values, mask: changed, sequence: UInt64(operations.count))))
            }
        }
        return operations
    }

    // MARK: Batch update

    func update(_ request: BatchUpdateRequest, plan: FetchPlan) throws -> Outcome {
        let indices = attributeIndices
        enum NewValue { case value(StoreValue), expression(BatchExpression.Node, BatchExpression) }
        var assignments: [(index: Int, value: NewValue)] = []
        for (name, value) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            guard let index = indices[name] else { throw StoreError.unknownAttribute(entity: entity.name, attribute: name) }
            let attribute = entity.attributes[index]
            if let expression = value as? BatchExpression {
                do {
                    assignments.append((index, .expression(try expression.parse(for: entity), expression)))
                } catch {
                    throw StoreError.invalidExpression(expression.format, offset: error.offset, reason: error.message)
                }
            } else if let converted = StoreValue(swiftValue: value is NSNull ? nil : value, for: attribute.type) {
                assignments.append((index, .value(converted)))
            } else {
                throw StoreError.typeMismatch(entity: entity.name, attribute: name, expected: attribute.type,
                                              value: "a value of type \(type(of: value))")
            }
        }
        var operations: [StoreChangeSet.Operation] = []
        var outcome = Outcome()
        let checkers = Dictionary(ruleCheckers.map { ($0.index, $0.checker) }, uniquingKeysWith: { first, _ in first })
        var failures: [ValidationFailure] = []
        try store.read { reader in
            try reader.forEachRow(plan.storeQuery) { row in
                var values = row.values
                var changed = AttributeMask.empty
                for (index, newValue) in assignments {
                    let attribute = entity.attributes[index]
                    var value: StoreValue
                    switch newValue {
                    case .value(let constant): value = constant
                    case .expression(let node, let expression):
                        guard let fitted = node.evaluate(row.values).fitted(to: attribute.type) else {
                            throw StoreError.typeMismatch(entity: entity.name, attribute: attribute.name, expected: attribute.type,
                                                          value: "\(node.evaluate(row.values)), the value of '\(expression.format)' for \(objectID(row.primaryKey))")
                        }
                        value = fitted
                    }
                    if value.isNull && !attribute.isOptional {
                        throw StoreError.missingRequiredValue(object: objectID(row.primaryKey), attribute: attribute.name)
                    }
                    if let rule = checkers[index]?.brokenRule(by: value) {
                        failures.append(ValidationFailure(object: objectID(row.primaryKey), key: attribute.name, value: value,
                                                          rule: .attribute(rule)))
                    }
                    if value != row.values[index] {
                        values[index] = value
                        changed.insert(index)
                    }
                }
                if changed == .empty {
                    outcome.unchanged.insert(objectID(row.primaryKey))
                } else {
                    operations.append(.init(entity: entity.name, primaryKey: row.primaryKey,
                                            row: PendingRow(kind: .updated, values: values, mask: changed, sequence: UInt64(operations.count))))
                }
            }
        }
        // Every row breaking a rule is listed, and nothing is written.
        if !failures.isEmpty { throw StoreError.validationFailed(failures) }
        try commit(operations, into: &outcome)
        return outcome
    }

    // MARK: Committing

    /// Commits the operations, column inserts and column updates as one transaction; `touched`
    /// says which rows it may write, for comparisons made ahead (`CommitLog`).
    func commit(_ operations: [StoreChangeSet.Operation], columnInserts: [ColumnInsert] = [], columnUpdates: [ColumnUpdate] = [],
                linkWrites: [LinkWrite] = [], touched: CommitLog.Touched = .anyRow, into outcome: inout Outcome) throws {
        guard !operations.isEmpty || !columnInserts.isEmpty || !columnUpdates.isEmpty || !linkWrites.isEmpty || !metadata.isEmpty else { return }
        coordinator.beginCommit()
        let result: StoreCommitResult
        do {
            var changes = StoreChangeSet(operations: operations, columnInserts: columnInserts, columnUpdates: columnUpdates,
                                         linkWrites: linkWrites, metadata: metadata, mergePolicy: policy)
            changes.author = author
            changes.contextName = contextName
            result = try store.commit(changes)
        } catch {
            coordinator.noteFailedCommit()
            throw error
        }
        coordinator.noteCommit(touched: touched)
        outcome.changes.inserted = result.inserted
        outcome.changes.updated = result.updated
        outcome.changes.deleted = result.deleted
        outcome.merged = result.merged
        // A new row whose key another writer stored meanwhile became that row (by the policy).
        for survivor in result.merged.values where !result.inserted.contains(survivor) && outcome.changes.updated[survivor] == nil {
            outcome.unchanged.insert(survivor)
        }
        outcome.unchanged.subtract(outcome.changes.updated.keys)
    }
}

private extension StoreValue {
    /// An expression's value as an attribute of `type` keeps it; nil when it does not fit.
    func fitted(to type: AttributeType) -> StoreValue? {
        switch (self, type) {
        case (.null, _): return .null
        case (.integer, .integer), (.real, .double), (.real, .date): return self
        case (.integer(let value), .double), (.integer(let value), .date): return .real(Double(value))
        case (.real(let value), .integer): return Int64(exactly: value).map(StoreValue.integer)
        case (.integer(let value), .boolean): return value == 0 || value == 1 ? self : nil
        default: return nil
        }
    }
}
