import CSQLite
import SwellStoreCore

/// Writes one root save's operations inside the writer's open transaction,
/// resolving keys that already belong to another row with the merge policy
/// (`INSERT … ON CONFLICT … DO UPDATE` for inserts).
package struct SQLiteCommitter {
    package let connection: SQLiteConnection
    package let model: ManagedObjectModel
    package let storeIdentifier: String
    package let policy: MergePolicy
    package var result = StoreCommitResult()
    /// Each entity with its table's layout, by name.
    package let tables: [String: (entity: EntityDescription, layout: TableLayout)]

    package init(connection: SQLiteConnection, model: ManagedObjectModel, storeIdentifier: String, policy: MergePolicy) {
        self.connection = connection
        self.model = model
        self.storeIdentifier = storeIdentifier
        self.policy = policy
        self.tables = Dictionary(model.entities.map { ($0.name, ($0, TableLayout($0))) }, uniquingKeysWith: { first, _ in first })
    }

    private func layout(_ entity: EntityDescription) -> TableLayout {
        tables[entity.name]?.layout ?? TableLayout(entity)
    }

    /// Makes room in the result for `count` more operations (no rehashing as it fills).
    package mutating func reserveCapacity(_ count: Int) {
        result.inserted.reserveCapacity(result.inserted.count + count)
    }

    package func objectID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
    }

    /// After the operations: rows that name, in a to-one column or a join table, a new object that became an
    /// existing one (a key met a stored row) name the survivor instead (Store guarantees 32).
    package func redirectReferences() throws {
        for redirect in result.referenceRedirects(in: model) {
            let attribute = redirect.attribute
            if let join = attribute.join {
                // A link to the merged object moves to the survivor (once: it may have had one).
                let table = quoteIdentifier(join.table), member = quoteIdentifier(join.relationship)
                for move in redirect.moves {
                    try connection.run("UPDATE OR IGNORE \(table) SET \(member) = ? WHERE \(member) = ?", [.integer(move.to), .integer(move.from)])
                    try connection.run("DELETE FROM \(table) WHERE \(member) = ?", [.integer(move.from)])
                }
            } else {
                let table = quoteIdentifier(redirect.entity.name), column = quoteIdentifier(attribute.name)
                for move in redirect.moves {
                    try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(column) = ?", [.integer(move.to), .integer(move.from)])
                }
            }
        }
    }

    package mutating func apply(_ operation: StoreChangeSet.Operation) throws {
        guard let (entity, layout) = tables[operation.entity] else { throw StoreError.unknownEntity(operation.entity) }
        switch operation.row.kind {
        case .inserted: try insert(operation, entity, layout)
        case .updated: try update(operation, entity, layout)
        case .deleted: try delete(operation, entity, layout)
        }
    }

    /// The INSERT for an entity, a policy and (for the conflict clause) a mask: built once per save.
    /// `upsert: false` gives the plain INSERT (for rows whose key is known to be new).
    private mutating func insertSQL(_ entity: EntityDescription, mask: AttributeMask, upsert: Bool) -> String {
        let keyed = upsert && !entity.uniquenessConstraint.isEmpty && policy.resolution != .fail
        let cacheKey = InsertKey(entity: entity.name, mask: keyed ? mask : .empty, upsert: keyed)
        if let cached = insertStatements[cacheKey] { return cached }
        let layout = layout(entity)
        // The ID goes first, or where the key is the rowid, last (`_pk`: NULL when the ID is the key).
        let attributes = entity.attributes.prefix(entity.columnCount).map(\.name)
        let names = layout.rowidKey == nil ? ["_pk"] + attributes : attributes + ["_pk"]
        var sql = "INSERT INTO \(layout.table) (\(names.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
        if keyed {
            sql += " ON CONFLICT (\(entity.uniquenessConstraint.map(quoteIdentifier).joined(separator: ", "))) DO "
            sql += conflictAction(entity: entity, mask: mask)
            sql += " RETURNING \(layout.id)"
        }
        insertStatements[cacheKey] = sql
        return sql
    }

    private struct InsertKey: Hashable {
        package var entity: String
        package var mask: AttributeMask
        package var upsert: Bool
    }

    private var insertStatements: [InsertKey: String] = [:]

    /// Prepared INSERTs by entity and mask, so a row costs one small hash, not the SQL text's.
    private var preparedInserts: [InsertKey: SQLiteStatement] = [:]

    private mutating func insertStatement(_ entity: EntityDescription, mask: AttributeMask, upsert: Bool = true) throws -> SQLiteStatement {
        let keyed = upsert && !entity.uniquenessConstraint.isEmpty && policy.resolution != .fail
        let cacheKey = InsertKey(entity: entity.name, mask: keyed ? mask : .empty, upsert: keyed)
        if let prepared = preparedInserts[cacheKey] {
            prepared.reset()
            return prepared
        }
        let statement = try connection.statement(insertSQL(entity, mask: mask, upsert: upsert))
        preparedInserts[cacheKey] = statement
        return statement
    }

    /// Binds a row's ID and values to an INSERT of `insertSQL`'s column order.
    private func bindRow(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout,
                         to statement: SQLiteStatement) throws {
        let values = operation.row.values
        let count = entity.columnCount
        guard let rowidKey = layout.rowidKeyIndex else {
            try statement.bind(.integer(operation.primaryKey), at: 1)
            for index in 0..<count { try statement.bind(values[index], at: Int32(index + 2)) }
            return
        }
        for index in 0..<count { try statement.bind(values[index], at: Int32(index + 1)) }
        let idIsKey = values[rowidKey] == .integer(operation.primaryKey)
        try statement.bind(idIsKey ? .null : .integer(operation.primaryKey), at: Int32(count + 1))
    }

    private mutating func insert(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout) throws {
        let keyed = !entity.uniquenessConstraint.isEmpty
        // A row whose plain INSERT met its key: the upsert below finds an existing row, even
        // when that row has this row's ID (an ID taken from the key, by another root meanwhile).
        var metExisting = false
        if keyed && policy.resolution != .fail && operation.row.keyCheckedAgainstStore {
            let inserted = try insertKnownNew(operation, entity, layout)
            if inserted { return }
            metExisting = true
        }
        let statement = try insertStatement(entity, mask: operation.row.mask)
        defer { statement.reset() }
        try bindRow(operation, entity, layout, to: statement)
        let incoming = objectID(entity.name, operation.primaryKey)
        // The row's join-table links are written after the row, outside the catch below: only
        // the row's own key makes a uniqueness conflict, never a link.
        var links: (owner: Int64, merged: Bool)?
        do {
            if keyed && policy.resolution != .fail {
                if try statement.step() {
                    let survivor = statement.int64(0)
                    statement.reset()
                    if survivor == operation.primaryKey && !metExisting {
                        result.inserted.insert(incoming)
                        links = (survivor, false)
                    } else {
                        let id = objectID(entity.name, survivor)
                        result.merged[incoming] = id
                        noteUpdate(id, attributes: updatedNames(entity, operation.row.mask))
                        links = (survivor, true)
                    }
                } else {
                    // DO NOTHING (rollback policy): the existing row stays as it was.
                    statement.reset()
                    let key = entity.keyIndices.map { operation.row.values[$0] }
                    if let existing = try existingPrimaryKey(entity, key: key) {
                        result.merged[incoming] = objectID(entity.name, existing)
                    }
                }
            } else {
                try statement.run()
                result.inserted.insert(incoming)
                links = (operation.primaryKey, false)
            }
        } catch let error as SQLiteError where error.isUniqueViolation && keyed {
            statement.reset()
            throw try conflictError(entity, values: operation.row.values, incoming: incoming)
        }
        switch links {
        case (let owner, false)?: try writeLinks(operation.row, entity, owner: owner, replace: false)
        case (let survivor, true)?: try addLinks(from: operation.row, entity, to: survivor)
        case nil: break
        }
    }

    /// A row whose key the levels above checked against the store: a plain INSERT (no
    /// conflict clause to evaluate, nothing returned). Returns false when the key was
    /// taken after all (another root context on the same store committed it meanwhile):
    /// then the upsert resolves it by the policy.
    private mutating func insertKnownNew(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout) throws -> Bool {
        let statement = try insertStatement(entity, mask: operation.row.mask, upsert: false)
        try bindRow(operation, entity, layout, to: statement)
        let inserted: Bool
        do {
            try statement.run()
            inserted = true
        } catch {
            statement.reset()
            guard error.isUniqueViolation else { throw error }
            inserted = false
        }
        if inserted {
            result.inserted.insert(objectID(entity.name, operation.primaryKey))
            try writeLinks(operation.row, entity, owner: operation.primaryKey, replace: false)
        }
        return inserted
    }

    /// The `DO …` part of an insert's conflict clause: the policy's rules (`MergePolicy.rule`) as SQL.
    private func conflictAction(entity: EntityDescription, mask: AttributeMask) -> String {
        guard policy.resolution == .merge else { return "NOTHING" }
        let keySet = Set(entity.uniquenessConstraint)
        let candidates = entity.attributes.prefix(entity.columnCount).enumerated().filter { !keySet.contains($0.element.name) }
        let assignments: [String] = candidates.compactMap { index, attribute in
            let column = quoteIdentifier(attribute.name)
            switch policy.rule(incomingSet: mask.contains(index)) {
            case .keepExisting: return nil
            case .takeIncoming: return "\(column) = excluded.\(column)"
            // An insert's unset values are nil: there is nothing to fill from them.
            case .fillNil: return mask.contains(index) ? "\(column) = coalesce(\(quoteIdentifier(entity.name)).\(column), excluded.\(column))" : nil
            }
        }
        if assignments.isEmpty {
            let first = quoteIdentifier(entity.uniquenessConstraint[0])
            return "UPDATE SET \(first) = excluded.\(first)"
        }
        return "UPDATE SET " + assignments.joined(separator: ", ")
    }

    private func updatedNames(_ entity: EntityDescription, _ mask: AttributeMask) -> Set<String> {
        Set(policy.mayChange(mask: mask, count: entity.attributes.count).map { entity.attributes[$0].name })
    }

    package mutating func noteUpdate(_ id: ObjectID, attributes: Set<String>) {
        if result.inserted.contains(id) { return }
        if let index = result.updated.index(forKey: id) {
            result.updated.values[index].formUnion(attributes)
        } else {
            result.updated[id] = attributes
        }
    }

    /// The names of the attributes at `indices` (its mask `mask`), made once per save and mask.
    package mutating func names(_ entity: EntityDescription, mask: AttributeMask, indices: [Int]) -> Set<String> {
        let key = ByIDKey(entity: entity.name, mask: mask, isDelete: false)
        if let names = namesByMask[key] { return names }
        let names = Set(indices.map { entity.attributes[$0].name })
        namesByMask[key] = names
        return names
    }

    private var namesByMask: [ByIDKey: Set<String>] = [:]

    /// UPDATE and DELETE statements by object ID, per entity and mask (DELETE: `isDelete`), built once per save.
    private var statementsByID: [ByIDKey: [String]] = [:]

    private struct ByIDKey: Hashable {
        package var entity: String
        package var mask: AttributeMask
        package var isDelete: Bool
    }

    /// The statements that run `statement` (an UPDATE or DELETE whose parameters are 1…`parameter` - 1)
    /// on the row with object ID `?parameter`: where the key is the rowid, first for the row keyed
    /// by its ID (the usual row: one rowid look-up), then for one whose ID is in `_pk`.
    private mutating func byID(_ key: ByIDKey, _ layout: TableLayout, parameter: Int, _ statement: () -> String) -> [String] {
        if let cached = statementsByID[key] { return cached }
        let conditions = layout.rowidKey.map { ["\($0) = ?\(parameter) AND \"_pk\" IS NULL", "\"_pk\" = ?\(parameter)"] }
            ?? ["\"_pk\" = ?\(parameter)"]
        let base = statement()
        let statements = conditions.map { "\(base) WHERE \($0)" }
        statementsByID[key] = statements
        return statements
    }

    /// The UPDATE of the attributes at `indices` (its mask `mask`) by object ID.
    package mutating func updateStatements(_ entity: EntityDescription, _ layout: TableLayout, mask: AttributeMask, indices: [Int]) -> [String] {
        byID(ByIDKey(entity: entity.name, mask: mask, isDelete: false), layout, parameter: indices.count + 1) {
            var assignments = indices.enumerated().map { "\(quoteIdentifier(entity.attributes[$1].name)) = ?\($0 + 1)" }
            if let rowidKey = layout.rowidKeyIndex, let position = indices.firstIndex(of: rowidKey) {
                // A new key moves the row; its ID stays, in `_pk` unless it is the new key.
                assignments.append("\"_pk\" = nullif(\(layout.id), ?\(position + 1))")
            }
            return "UPDATE \(layout.table) SET \(assignments.joined(separator: ", "))"
        }
    }

    /// Runs `statements` (from `byID`) in order until one changes a row; returns whether one did.
    private func runForID(_ statements: [String], _ arguments: [StoreValue], id: Int64) throws(SQLiteError) -> Bool {
        var arguments = arguments
        arguments.append(.integer(id))
        for sql in statements {
            try connection.run(sql, arguments)
            if connection.changes > 0 { return true }
        }
        return false
    }

    private mutating func update(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout) throws {
        if entity.joinColumnCount > 0 {
            try writeLinks(operation.row, entity, owner: operation.primaryKey, replace: true)
            let linked = (entity.columnCount..<entity.attributes.count).filter { operation.row.mask.contains($0) }
            if !linked.isEmpty { noteUpdate(objectID(entity.name, operation.primaryKey), attributes: Set(linked.map { entity.attributes[$0].name })) }
        }
        let indices = operation.row.mask.indices(below: entity.columnCount)
        guard !indices.isEmpty else { return }
        let statements = updateStatements(entity, layout, mask: operation.row.mask, indices: indices)
        let id = objectID(entity.name, operation.primaryKey)
        do {
            let changed = try runForID(statements, indices.map { operation.row.values[$0] }, id: operation.primaryKey)
            if changed { noteUpdate(id, attributes: names(entity, mask: operation.row.mask, indices: indices)) }
        } catch {
            guard error.isUniqueViolation, !entity.uniquenessConstraint.isEmpty else { throw error }
            try resolveKeyChange(operation, entity, layout, indices: indices)
        }
    }

    /// An update gave an object a key another row has: the two become one, by the policy.
    private mutating func resolveKeyChange(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout,
                                           indices: [Int]) throws {
        let incoming = objectID(entity.name, operation.primaryKey)
        let select = "SELECT \(entity.selectedValues) FROM \(layout.table) WHERE \(layout.idEquals(parameter: 1))"
        guard let current = try connection.query(select, [.integer(operation.primaryKey)]).first else { return }
        var values = current
        for index in indices { values[index] = operation.row.values[index] }
        switch policy.resolution {
        case .fail: throw try conflictError(entity, values: values, incoming: incoming)
        case .keepExisting: return
        case .merge: break
        }
        let key = entity.keyIndices.map { values[$0] }
        guard let existing = try existingPrimaryKey(entity, key: key) else { return }
        let existingValues = try connection.query(select, [.integer(existing)]).first ?? values
        var merged = existingValues
        for index in entity.attributes.indices {
            merged[index] = policy.merged(existing: merged[index], incoming: values[index], incomingSet: indices.contains(index))
        }
        _ = try runForID(deleteStatements(entity, layout), [], id: operation.primaryKey)
        try addLinks(from: PendingRow(kind: .inserted, values: values, mask: .empty, sequence: 0), entity, to: existing)
        try deleteLinks(entity, owner: operation.primaryKey)
        let all = AttributeMask.all(entity.columnCount)
        _ = try runForID(updateStatements(entity, layout, mask: all, indices: Array(0..<entity.columnCount)), Array(merged.prefix(entity.columnCount)), id: existing)
        let survivor = objectID(entity.name, existing)
        result.deleted.insert(incoming)
        result.merged[incoming] = survivor
        noteUpdate(survivor, attributes: Set(entity.attributes.indices.filter { merged[$0] != existingValues[$0] }.map { entity.attributes[$0].name }))
    }

    private mutating func deleteStatements(_ entity: EntityDescription, _ layout: TableLayout) -> [String] {
        byID(ByIDKey(entity: entity.name, mask: .empty, isDelete: true), layout, parameter: 1) { "DELETE FROM \(layout.table)" }
    }

    private mutating func delete(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, _ layout: TableLayout) throws {
        try deleteLinks(entity, owner: operation.primaryKey)
        if try runForID(deleteStatements(entity, layout), [], id: operation.primaryKey) {
            let id = objectID(entity.name, operation.primaryKey)
            result.updated.removeValue(forKey: id)
            if result.inserted.remove(id) == nil { result.deleted.insert(id) }
        }
    }

    private func existingPrimaryKey(_ entity: EntityDescription, key: [StoreValue]) throws -> Int64? {
        let condition = entity.uniquenessConstraint.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
        let layout = layout(entity)
        let rows = try connection.query("SELECT \(layout.id) FROM \(layout.table) WHERE \(condition)", key)
        if case .integer(let pk)? = rows.first?.first { return pk }
        return nil
    }

    private func conflictError(_ entity: EntityDescription, values: [StoreValue], incoming: ObjectID) throws -> StoreError {
        let key = entity.keyIndices.map { values[$0] }
        var objects = [incoming]
        // An ID taken from the key may be the existing object's too: it is named once.
        if let existing = try existingPrimaryKey(entity, key: key), existing != incoming.primaryKey {
            objects.append(objectID(entity.name, existing))
        }
        return .constraintConflict(entity: entity.name, key: entity.keyDescription(of: values), objects: objects)
    }
}
