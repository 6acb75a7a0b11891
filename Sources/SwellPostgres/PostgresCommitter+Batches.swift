import SwellStoreCore

/// The batched paths of a commit: runs of new objects of one entity by binary COPY straight
/// into the table (or through a staging table when a key meets a stored row), runs of updates
/// through the staging table and one `UPDATE … FROM`. The row-by-row paths are in
/// `PostgresCommitter.swift`.
extension PostgresCommitter {
    /// From how many new objects of one entity in a row a commit copies them (`insertBatch`).
    static let copyThreshold = 32

    /// New objects of one entity: first straight into the table (`insertDirectly`); when a key
    /// meets a stored row, COPY into a temporary staging table, then one
    /// `INSERT … SELECT … ON CONFLICT (key) DO NOTHING RETURNING "_pk"`; the rows it did not
    /// insert met a stored key, and are resolved one by one by the policy, as `insert` does.
    mutating func insertBatch(_ operations: ArraySlice<StoreChangeSet.Operation>) throws {
        guard let first = operations.first, let entity = entities[first.entity] else {
            for operation in operations { try apply(operation) }
            return
        }
        let stored = storedIndices(entity)
        if try insertDirectly(operations, entity, stored: stored) { return }
        let stage = try prepareStage(entity, stored: stored)
        var data: [UInt8] = []
        data.reserveCapacity(operations.count * 128)
        for operation in operations {
            data.append(contentsOf: String(operation.primaryKey).utf8)
            for index in stored {
                let value = operation.row.values[index]
                if case .text(let text) = value, text.utf8.contains(0) { throw PostgresConnection.nulInText(sql: "COPY \(entity.name) (\(entity.attributes[index].name))") }
                data.append(UInt8(ascii: "\t"))
                PostgresConnection.appendCopyField(value, to: &data)
            }
            data.append(UInt8(ascii: "\n"))
        }
        let stageColumns = (["\"_pk\""] + stored.map { "c\($0)" }).joined(separator: ", ")
        try connection.copyIn("COPY \(stage) (\(stageColumns)) FROM STDIN", data)
        let converted = stored.map { Self.converted("c\($0)", entity.attributes[$0].storedType) }
        let columns = (["\"_pk\""] + stored.map { q(entity.attributes[$0].name) }).joined(separator: ", ")
        var sql = "INSERT INTO \(q(entity.name)) (\(columns)) SELECT \"_pk\", \(converted.joined(separator: ", ")) FROM \(stage)"
        if !entity.uniquenessConstraint.isEmpty { sql += " ON CONFLICT (\(entity.uniquenessConstraint.map(q).joined(separator: ", "))) DO NOTHING" }
        sql += " RETURNING \"_pk\""
        var inserted = Set<Int64>()
        for row in try connection.query(sql) {
            if case .integer(let pk)? = row.first { inserted.insert(pk) }
        }
        for operation in operations {
            if inserted.contains(operation.primaryKey) {
                result.inserted.insert(objectID(entity.name, operation.primaryKey))
                try writeLinks(operation.row, entity, owner: operation.primaryKey, replace: false)
            } else {
                try insert(operation, entity)
            }
        }
    }

    /// A batch insert's new rows straight from its column buffers: one binary COPY under a
    /// savepoint, no values or operations made per row. When a key meets a stored row (another
    /// writer stored it since it was looked up) or a value cannot go in binary, the rows go
    /// the way of a commit's new objects (`insertBatch`), which resolves them by the policy.
    mutating func insertColumns(_ insert: ColumnInsert) throws {
        guard !insert.rows.isEmpty else { return }
        guard let entity = entities[insert.entity] else { throw StoreError.unknownEntity(insert.entity) }
        var encoder = PostgresBinaryCopyEncoder(types: insert.positions.map { entity.attributes[$0].storedType },
                                                capacity: insert.rows.count * 96)
        let encoded = insert.columns.withPointers { columns in
            insert.rows.indices.allSatisfy { encoder.append(primaryKey: insert.ids[$0], row: insert.rows[$0], columns: columns) }
        }
        if encoded {
            let columns = (["\"_pk\""] + insert.positions.map { q(entity.attributes[$0].name) }).joined(separator: ", ")
            try connection.query("SAVEPOINT swell_copy")
            do {
                try connection.copyIn("COPY \(q(entity.name)) (\(columns)) FROM STDIN (FORMAT binary)", encoder.finish())
                try connection.query("RELEASE SAVEPOINT swell_copy")
                result.inserted.reserveCapacity(result.inserted.count + insert.ids.count)
                for id in insert.ids { result.inserted.insert(objectID(entity.name, id)) }
                return
            } catch {
                guard error.sqlState == "23505" else { throw error }    // unique_violation
                try connection.query("ROLLBACK TO SAVEPOINT swell_copy")
            }
        }
        try insertBatch(ArraySlice(insert.rows.indices.map(insert.operation)))
    }

    /// New objects of one entity straight into its table: one binary COPY under a savepoint.
    /// Returns false, having changed nothing, when a key meets a stored row (unique violation:
    /// the savepoint is rolled back) or a value cannot go in binary; `insertBatch` then stages them.
    private mutating func insertDirectly(_ operations: ArraySlice<StoreChangeSet.Operation>, _ entity: EntityDescription,
                                         stored: [Int]) throws -> Bool {
        var encoder = PostgresBinaryCopyEncoder(types: stored.map { entity.attributes[$0].storedType }, capacity: operations.count * 96)
        for operation in operations {
            guard encoder.append(primaryKey: operation.primaryKey, values: operation.row.values, at: stored) else { return false }
        }
        let columns = (["\"_pk\""] + stored.map { q(entity.attributes[$0].name) }).joined(separator: ", ")
        try connection.query("SAVEPOINT swell_copy")
        do {
            try connection.copyIn("COPY \(q(entity.name)) (\(columns)) FROM STDIN (FORMAT binary)", encoder.finish())
        } catch {
            guard error.sqlState == "23505" else { throw error }    // unique_violation
            try connection.query("ROLLBACK TO SAVEPOINT swell_copy")
            return false
        }
        try connection.query("RELEASE SAVEPOINT swell_copy")
        for operation in operations {
            result.inserted.insert(objectID(entity.name, operation.primaryKey))
            try writeLinks(operation.row, entity, owner: operation.primaryKey, replace: false)
        }
        return true
    }

    /// Whether an update can go in a batch (`updateBatch`): it changes neither the key nor a
    /// join-table to-many, and its entity has at most 63 stored attributes (a bit each).
    func canBatchUpdate(_ operation: StoreChangeSet.Operation) -> Bool {
        guard operation.row.kind == .updated, let entity = entities[operation.entity] else { return false }
        let stored = storedIndices(entity)
        guard stored.count <= 63 else { return false }
        let mask = operation.row.mask
        if entity.keyIndices.contains(where: { mask.contains($0) }) { return false }
        return !entity.attributes.indices.contains { entity.attributes[$0].join != nil && mask.contains($0) }
    }

    /// Updates of one entity that keep their keys: COPY the rows (every stored column, and a
    /// bit mask of those each update sets) into the staging table, then one `UPDATE … FROM`
    /// that sets each row's masked columns, only where a value differs.
    mutating func updateBatch(_ operations: ArraySlice<StoreChangeSet.Operation>) throws {
        guard let first = operations.first, let entity = entities[first.entity] else { return }
        let stored = storedIndices(entity)
        let stage = try prepareStage(entity, stored: stored)
        var union = Set<Int>()
        var data: [UInt8] = []
        data.reserveCapacity(operations.count * 128)
        for operation in operations {
            var bits: Int64 = 0
            data.append(contentsOf: String(operation.primaryKey).utf8)
            for (bit, index) in stored.enumerated() {
                data.append(UInt8(ascii: "\t"))
                if operation.row.mask.contains(index) {
                    bits |= 1 << Int64(bit)
                    union.insert(index)
                    let value = operation.row.values[index]
                    if case .text(let text) = value, text.utf8.contains(0) { throw PostgresConnection.nulInText(sql: "COPY \(entity.name) (\(entity.attributes[index].name))") }
                    PostgresConnection.appendCopyField(value, to: &data)
                } else {
                    PostgresConnection.appendCopyField(.null, to: &data)
                }
            }
            data.append(UInt8(ascii: "\t"))
            data.append(contentsOf: String(bits).utf8)
            data.append(UInt8(ascii: "\n"))
        }
        try connection.copyIn("COPY \(stage) FROM STDIN", data)
        let changed = stored.enumerated().filter { union.contains($0.element) }
        var assignments: [String] = []
        var old: [String] = []
        var new: [String] = []
        for (bit, index) in changed {
            let column = q(entity.attributes[index].name)
            let value = "CASE WHEN (s.\"_mask\" >> \(bit)) & 1 = 1 THEN \(Self.converted("s.c\(index)", entity.attributes[index].storedType)) ELSE t.\(column) END"
            assignments.append("\(column) = \(value)")
            old.append("t.\(column)")
            new.append(value)
        }
        let table = q(entity.name)
        let existing = try connection.query("SELECT s.\"_pk\" FROM \(stage) s JOIN \(table) t ON t.\"_pk\" = s.\"_pk\"")
        if !changed.isEmpty {
            try connection.query("""
                UPDATE \(table) AS t SET \(assignments.joined(separator: ", ")) FROM \(stage) AS s
                WHERE t."_pk" = s."_pk" AND (\(old.joined(separator: ", ")), NULL) IS DISTINCT FROM (\(new.joined(separator: ", ")), NULL)
                """)
        }
        let found = Set(existing.compactMap { row -> Int64? in if case .integer(let pk)? = row.first { return pk } else { return nil } })
        for operation in operations where found.contains(operation.primaryKey) {
            let indices = stored.filter { operation.row.mask.contains($0) }
            if !indices.isEmpty { noteUpdate(objectID(entity.name, operation.primaryKey), attributes: names(entity, indices)) }
        }
    }

    /// A staging column's value converted to its table column's type.
    static func converted(_ column: String, _ type: AttributeType) -> String {
        switch type {
        case .date: "to_timestamp(\(column))"
        case .boolean: "(\(column) <> 0)"
        case .json: "\(column)::json"
        case .string, .integer, .double: column
        }
    }

    /// The entity's staging table, empty: `_pk`, a column per stored attribute holding the
    /// store's value as it is (dates as seconds, booleans as 0/1), and `_mask`.
    private mutating func prepareStage(_ entity: EntityDescription, stored: [Int]) throws -> String {
        let stage = q("swell_stage_\(entity.name)")
        if staged.contains(entity.name) {
            try connection.query("TRUNCATE \(stage)")
            return stage
        }
        let columns = ["\"_pk\" bigint"] + stored.map { index -> String in
            let type: String = switch entity.attributes[index].storedType {
            case .string, .json: "text"
            case .integer, .boolean: "bigint"
            case .double, .date: "double precision"
            }
            return "c\(index) \(type)"
        } + ["\"_mask\" bigint"]
        try connection.query("CREATE TEMP TABLE IF NOT EXISTS \(stage) (\(columns.joined(separator: ", "))) ON COMMIT DELETE ROWS")
        staged.insert(entity.name)
        return stage
    }
}
