import SwellStoreCore

/// Writes one root save's operations inside the writer's open transaction,
/// applying the merge policy's decisions (`MergePolicy`) to keys that already
/// belong to another row: what `SQLiteCommitter` does, in PostgreSQL's SQL.
///
/// A new row is `INSERT … ON CONFLICT (key) DO NOTHING RETURNING "_pk"`: atomic
/// against other runners inserting the same key; when it meets a row, the
/// policy decides, and a merge rewrites the row only when a value changes
/// (`IS DISTINCT FROM`: no new row version for rows that arrive unchanged).
struct PostgresCommitter {
    let connection: PostgresConnection
    let model: ManagedObjectModel
    let storeIdentifier: String
    let policy: MergePolicy
    var result = StoreCommitResult()
    let entities: [String: EntityDescription]

    init(connection: PostgresConnection, model: ManagedObjectModel, storeIdentifier: String, policy: MergePolicy) {
        self.connection = connection
        self.model = model
        self.storeIdentifier = storeIdentifier
        self.policy = policy
        entities = model.entitiesByName
    }

    func objectID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
    }

    func q(_ name: String) -> String { PostgresSQL.quote(name) }

    mutating func apply(_ operation: StoreChangeSet.Operation) throws {
        guard let entity = entities[operation.entity] else { throw StoreError.unknownEntity(operation.entity) }
        switch operation.row.kind {
        case .inserted: try insert(operation, entity)
        case .updated: try update(operation, entity)
        case .deleted: try delete(operation, entity)
        }
    }

    /// Attribute indices kept in the entity's table (not join tables).
    func storedIndices(_ entity: EntityDescription) -> [Int] {
        entity.attributes.indices.filter { entity.attributes[$0].join == nil }
    }

    mutating func noteUpdate(_ id: ObjectID, attributes: Set<String>) {
        if result.inserted.contains(id) { return }
        result.updated[id, default: []].formUnion(attributes)
    }

    func names(_ entity: EntityDescription, _ indices: [Int]) -> Set<String> {
        Set(indices.map { entity.attributes[$0].name })
    }

    // MARK: Rows

    private func values(of primaryKey: Int64, _ entity: EntityDescription) throws -> [StoreValue]? {
        let rows = try connection.query("SELECT \(PostgresSQL.selectList(entity)) FROM \(q(entity.name)) WHERE \"_pk\" = $1::bigint FOR UPDATE",
                                        [.integer(primaryKey)])
        return rows.first.map { Array($0.dropFirst()) }
    }

    /// How many times an INSERT whose key was met, but whose row was gone when looked up, is tried.
    static let insertAttempts = 3

    /// The row holding `key` (other than `id`); `locking`: locked until the commit ends.
    private func owner(ofKey key: [StoreValue], _ entity: EntityDescription, excluding id: Int64? = nil,
                       locking: Bool = false) throws -> Int64? {
        var arguments = key
        var conditions = entity.keyIndices.enumerated().map { offset, index in
            let attribute = entity.attributes[index]
            return "\(q(attribute.name)) = \(PostgresSQL.parameter(offset + 1, type: attribute.storedType))"
        }
        if let id {
            arguments.append(.integer(id))
            conditions.append("\"_pk\" <> $\(arguments.count)::bigint")
        }
        let rows = try connection.query("SELECT \"_pk\" FROM \(q(entity.name)) WHERE \(conditions.joined(separator: " AND "))"
                                        + (locking ? " FOR UPDATE" : ""), arguments)
        if case .integer(let pk)? = rows.first?.first { return pk }
        return nil
    }

    /// Sets `indices` of the row `primaryKey` to `values` (by index), only when one differs;
    /// returns whether the row exists.
    @discardableResult
    private func write(_ values: [StoreValue], at indices: [Int], of primaryKey: Int64, _ entity: EntityDescription) throws -> Bool {
        guard !indices.isEmpty else { return true }
        var arguments: [StoreValue] = []
        var assignments: [String] = []
        var changed: [String] = []
        for index in indices {
            let attribute = entity.attributes[index]
            arguments.append(values[index])
            let parameter = PostgresSQL.parameter(arguments.count, type: attribute.storedType)
            assignments.append("\(q(attribute.name)) = \(parameter)")
            changed.append("\(q(attribute.name)) IS DISTINCT FROM \(parameter)")
        }
        arguments.append(.integer(primaryKey))
        let sql = "UPDATE \(q(entity.name)) SET \(assignments.joined(separator: ", ")) WHERE \"_pk\" = $\(arguments.count)::bigint AND (\(changed.joined(separator: " OR ")))"
        try connection.query(sql, arguments)
        return true
    }

    // MARK: Operations (runs of new objects and of updates go in batches: PostgresCommitter+Batches.swift)

    /// Entities whose staging table this session has.
    /// (`PostgresCommitter+Batches.swift` fills it.)
    var staged: Set<String> = []

    mutating func insert(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) throws {
        let row = operation.row
        let stored = storedIndices(entity)
        var arguments: [StoreValue] = [.integer(operation.primaryKey)]
        var placeholders = ["$1::bigint"]
        for index in stored {
            arguments.append(row.values[index])
            placeholders.append(PostgresSQL.parameter(arguments.count, type: entity.attributes[index].storedType))
        }
        let columns = (["\"_pk\""] + stored.map { q(entity.attributes[$0].name) }).joined(separator: ", ")
        var sql = "INSERT INTO \(q(entity.name)) (\(columns)) VALUES (\(placeholders.joined(separator: ", ")))"
        let key = entity.keyIndices.map { row.values[$0] }
        let keyed = !entity.uniquenessConstraint.isEmpty && !key.contains(where: \.isNull)
        if keyed { sql += " ON CONFLICT (\(entity.uniquenessConstraint.map(q).joined(separator: ", "))) DO NOTHING" }
        sql += " RETURNING \"_pk\""
        let incoming = objectID(entity.name, operation.primaryKey)
        // The INSERT met the key of a row that may be gone by the time it is looked up (another
        // runner deleted it and committed in between: each statement sees the latest commits).
        // Then the key is free again, and the INSERT is tried again; the row that is found is
        // locked, so it stays until this commit ends.
        var existing: Int64?
        for _ in 0..<Self.insertAttempts {
            if try !connection.query(sql, arguments).isEmpty {
                result.inserted.insert(incoming)
                try writeLinks(row, entity, owner: operation.primaryKey, replace: false)
                return
            }
            guard keyed else { break }
            existing = try owner(ofKey: key, entity, locking: true)
            if existing != nil { break }
        }
        guard let existing else {
            // Neither written nor met: something skipped the row (a trigger returning NULL),
            // or its key kept vanishing. The save fails rather than dropping the row unseen.
            throw StoreError(.unexpectedAnswer, "PostgreSQL wrote no row for a new \(entity.name) "
                + "(\(entity.keyDescription(of: row.values).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))) "
                + "and no row holds its key: a trigger on \(q(entity.name)) that skips rows, or rows with the key deleted meanwhile")
        }
        let survivor = objectID(entity.name, existing)
        switch policy.resolution {
        case .fail:
            throw conflict(entity, values: row.values, incoming: incoming, existing: existing)
        case .keepExisting:
            result.merged[incoming] = survivor
        case .merge:
            let current = try values(of: existing, entity) ?? row.values
            let keySet = Set(entity.keyIndices)
            var merged = current
            for index in stored where !keySet.contains(index) {
                merged[index] = policy.merged(existing: current[index], incoming: row.values[index], incomingSet: row.mask.contains(index))
            }
            try write(merged, at: stored.filter { !keySet.contains($0) }, of: existing, entity)
            try addLinks(row.values, listed: { row.kind == .inserted || row.mask.contains($0) }, entity, to: existing)
            result.merged[incoming] = survivor
            noteUpdate(survivor, attributes: names(entity, policy.mayChange(mask: row.mask, count: entity.attributes.count)))
        }
    }

    private mutating func update(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) throws {
        let row = operation.row
        let id = objectID(entity.name, operation.primaryKey)
        let linked = entity.attributes.indices.filter { entity.attributes[$0].join != nil && row.mask.contains($0) }
        let indices = storedIndices(entity).filter { row.mask.contains($0) }
        guard var values = try values(of: operation.primaryKey, entity) else { return }
        for index in indices { values[index] = row.values[index] }
        let keyChanged = !Set(entity.keyIndices).isDisjoint(with: indices)
        if keyChanged, !entity.uniquenessConstraint.isEmpty,
           let existing = try owner(ofKey: entity.keyIndices.map { values[$0] }, entity, excluding: operation.primaryKey) {
            try resolveKeyChange(operation, entity, values: values, indices: indices + linked, existing: existing)
            return
        }
        try write(values, at: indices, of: operation.primaryKey, entity)
        try writeLinks(row, entity, owner: operation.primaryKey, replace: true)
        if !indices.isEmpty || !linked.isEmpty { noteUpdate(id, attributes: names(entity, indices + linked)) }
    }

    /// An update gave an object a key another row has: the two become one, by the policy.
    private mutating func resolveKeyChange(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription, values: [StoreValue],
                                           indices: [Int], existing: Int64) throws {
        let incoming = objectID(entity.name, operation.primaryKey)
        switch policy.resolution {
        case .fail: throw conflict(entity, values: values, incoming: incoming, existing: existing)
        case .keepExisting: return
        case .merge: break
        }
        let existingValues = try self.values(of: existing, entity) ?? values
        let stored = storedIndices(entity)
        var merged = existingValues
        for index in stored {
            merged[index] = policy.merged(existing: existingValues[index], incoming: values[index], incomingSet: indices.contains(index))
        }
        try connection.query("DELETE FROM \(q(entity.name)) WHERE \"_pk\" = $1::bigint", [.integer(operation.primaryKey)])
        try write(merged, at: stored, of: existing, entity)
        try addLinks(values, listed: { _ in true }, entity, to: existing)
        let survivor = objectID(entity.name, existing)
        result.deleted.insert(incoming)
        result.merged[incoming] = survivor
        noteUpdate(survivor, attributes: names(entity, stored.filter { merged[$0] != existingValues[$0] }))
    }

    private mutating func delete(_ operation: StoreChangeSet.Operation, _ entity: EntityDescription) throws {
        // Join-table rows of the object go with it (ON DELETE CASCADE).
        let gone = try connection.query("DELETE FROM \(q(entity.name)) WHERE \"_pk\" = $1::bigint RETURNING \"_pk\"", [.integer(operation.primaryKey)])
        guard !gone.isEmpty else { return }
        let id = objectID(entity.name, operation.primaryKey)
        result.updated.removeValue(forKey: id)
        if result.inserted.remove(id) == nil { result.deleted.insert(id) }
    }

    // MARK: Links (join tables, Store guarantees 35)

    func writeLinks(_ row: PendingRow, _ entity: EntityDescription, owner: Int64, replace: Bool) throws {
        for (index, attribute) in entity.attributes.enumerated() {
            guard let join = attribute.join else { continue }
            if replace {
                guard row.mask.contains(index) else { continue }
                try connection.query("DELETE FROM \(q(join.table)) WHERE \(q(join.owner)) = $1::bigint", [.integer(owner)])
            }
            try insertLinks(join, owner: owner, members: JoinTable.decode(row.values[index]), orderFrom: 0)
        }
    }

    /// The survivor of a merge keeps the union: its own members, then the newcomer's it lacks.
    private func addLinks(_ values: [StoreValue], listed: (Int) -> Bool, _ entity: EntityDescription, to owner: Int64) throws {
        for (index, attribute) in entity.attributes.enumerated() {
            guard let join = attribute.join, listed(index) else { continue }
            var next: Int64 = 0
            if join.isOrdered,
               case .integer(let last)? = try connection.query("SELECT max(\"_order\") FROM \(q(join.table)) WHERE \(q(join.owner)) = $1::bigint",
                                                               [.integer(owner)]).first?.first {
                next = last + 1
            }
            try insertLinks(join, owner: owner, members: JoinTable.decode(values[index]), orderFrom: next)
        }
    }

    private func insertLinks(_ join: JoinTable, owner: Int64, members: [Int64], orderFrom first: Int64) throws {
        var order = first
        for member in members {
            var columns = "\(q(join.owner)), \(q(join.relationship))"
            var values = "$1::bigint, $2::bigint"
            var arguments: [StoreValue] = [.integer(owner), .integer(member)]
            if join.isOrdered {
                columns += ", \"_order\""
                values += ", $3::bigint"
                arguments.append(.integer(order))
            }
            let added = try connection.query("INSERT INTO \(q(join.table)) (\(columns)) VALUES (\(values)) ON CONFLICT DO NOTHING RETURNING 1", arguments)
            if !added.isEmpty { order += 1 }
        }
    }

    /// After the operations: rows that name a new object that became an existing one, in a
    /// to-one column or a join table, name the survivor instead (Store guarantees 32).
    func redirectReferences() throws {
        for redirect in result.referenceRedirects(in: model) {
            let attribute = redirect.attribute
            if let join = attribute.join {
                // A link to the merged object moves to the survivor (once: it may have had one).
                let table = q(join.table), member = q(join.relationship), owner = q(join.owner)
                for move in redirect.moves {
                    try connection.query("""
                        UPDATE \(table) AS j SET \(member) = $1::bigint WHERE \(member) = $2::bigint
                        AND NOT EXISTS (SELECT 1 FROM \(table) AS k WHERE k.\(owner) = j.\(owner) AND k.\(member) = $1::bigint)
                        """, [.integer(move.to), .integer(move.from)])
                    try connection.query("DELETE FROM \(table) WHERE \(member) = $1::bigint", [.integer(move.from)])
                }
            } else {
                for move in redirect.moves {
                    try connection.query("UPDATE \(q(redirect.entity.name)) SET \(q(attribute.name)) = $1::bigint WHERE \(q(attribute.name)) = $2::bigint",
                                         [.integer(move.to), .integer(move.from)])
                }
            }
        }
    }

    private func conflict(_ entity: EntityDescription, values: [StoreValue], incoming: ObjectID, existing: Int64) -> StoreError {
        return .constraintConflict(entity: entity.name, key: entity.keyDescription(of: values), objects: [incoming, objectID(entity.name, existing)])
    }
}

extension PostgresCommitter {
    /// Sets a batch insert's member lists: for stored owners the old links go first (one
    /// DELETE for all of them), then every listed link in statements of up to 50,000 links,
    /// the pairs as two arrays unnested in step. An owner a key conflict merged into a
    /// survivor lends the survivor its members, as a merge does.
    mutating func writeLinks(_ links: LinkWrite) throws {
        guard !links.owners.isEmpty else { return }
        let join = links.join
        let table = q(join.table), owner = q(join.owner), member = q(join.relationship)
        let owners = links.owners(following: result.merged)
        func literal<S: Sequence<Int64>>(_ values: S) -> StoreValue {
            .text("{" + values.map(String.init).joined(separator: ",") + "}")
        }
        if links.replace {
            try connection.query("DELETE FROM \(table) WHERE \(owner) = ANY($1::bigint[])", [literal(owners)])
            let names: Set<String> = [join.relationship]
            for key in owners { noteUpdate(objectID(links.entity, key), attributes: names) }
        }
        let sql = "INSERT INTO \(table) (\(owner), \(member)) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING"
        var ownerColumn: [Int64] = [], memberColumn: [Int64] = []
        func flush() throws {
            guard !ownerColumn.isEmpty else { return }
            try connection.query(sql, [literal(ownerColumn), literal(memberColumn)])
            ownerColumn.removeAll(keepingCapacity: true)
            memberColumn.removeAll(keepingCapacity: true)
        }
        for (n, key) in owners.enumerated() {
            for linked in links.members(n) {
                ownerColumn.append(key)
                memberColumn.append(linked)
                if ownerColumn.count == 50_000 { try flush() }
            }
        }
        try flush()
    }
}
