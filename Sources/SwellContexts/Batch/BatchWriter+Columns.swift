import SwellStoreCore
/// A batch insert of columns: its rows by key, where they are compared with the store
/// (possibly ahead of their turn at the writer), and how the new rows go down as buffers.

/// A columns batch's rows by key: each column's attribute, and the rows kept (within the
/// request the later row for a key wins), hashed by key. Made once per request, whether
/// its rows are compared ahead or at the writer.
struct ColumnRows: Sendable {
    /// Each column's attribute index.
    let positions: [Int]
    /// The attributes the columns carry.
    let mask: AttributeMask
    /// The column of each key attribute (nil: the columns do not carry it).
    let keyColumns: [Int?]
    /// Whether the key is one integer attribute (its rows hashed from the buffer: `rowForInteger`).
    let integerKey: Bool
    /// The rows kept, in order.
    let kept: [Int]
    /// Integer key → its row.
    let rowForInteger: [Int64: Int]
    /// Key → its row, for other keys.
    let rowForKey: [[StoreValue]: Int]
    /// For other keys: each key's hash (`keyHash`) → a row with that key hash; the keys a
    /// commit of the batch wrote, for `CommitLog` (a hash two keys share only makes a later
    /// comparison check more rows again).
    let rowForKeyHash: [Int64: Int]

    /// The hash `CommitLog` keeps for a key that is not one integer (this process's hash of its values).
    static func keyHash(_ key: [StoreValue]) -> Int64 {
        Int64(truncatingIfNeeded: key.hashValue)
    }

    init(_ columns: BatchColumns, entity: EntityDescription, indices: [String: Int]) throws {
        let positions = try Self.positions(columns, entity: entity, indices: indices)
        var mask = AttributeMask.empty
        for position in positions { mask.insert(position) }
        let keyColumns = entity.keyIndices.map { positions.firstIndex(of: $0) }
        let integerKey = keyColumns.count == 1 && keyColumns[0].map { columns.columns[$0].kind == .integers } == true
        var kept: [Int] = []
        var rowForKey: [[StoreValue]: Int] = [:]
        var rowForInteger: [Int64: Int] = [:]
        if !keyColumns.isEmpty, !keyColumns.contains(nil) {
            var winner = [Int](repeating: -1, count: columns.rowCount)
            if integerKey {
                // One integer key (the common case): hashed from the buffer, no key arrays.
                let column = columns.columns[keyColumns[0]!]
                rowForInteger.reserveCapacity(columns.rowCount)
                for row in 0..<columns.rowCount {
                    if !column.isNull(row), let earlier = rowForInteger.updateValue(row, forKey: column.integers[row]) { winner[earlier] = -1 }
                    winner[row] = row
                }
            } else {
                rowForKey.reserveCapacity(columns.rowCount)
                for row in 0..<columns.rowCount {
                    let key = keyColumns.map { columns.value(row: row, column: $0!) }
                    if key.contains(where: \.isNull) { winner[row] = row; continue }
                    if let earlier = rowForKey.updateValue(row, forKey: key) { winner[earlier] = -1 }
                    winner[row] = row
                }
            }
            kept = winner.filter { $0 >= 0 }
        } else {
            kept = Array(0..<columns.rowCount)
        }
        self.positions = positions
        self.mask = mask
        self.keyColumns = keyColumns
        self.integerKey = integerKey
        self.kept = kept
        self.rowForInteger = rowForInteger
        self.rowForKey = rowForKey
        var rowForKeyHash: [Int64: Int] = [:]
        rowForKeyHash.reserveCapacity(rowForKey.count)
        for (key, row) in rowForKey { rowForKeyHash[Self.keyHash(key)] = row }
        self.rowForKeyHash = rowForKeyHash
    }

    /// Each column's attribute index; every column must name an attribute, fit its type and hold every row.
    private static func positions(_ columns: BatchColumns, entity: EntityDescription, indices: [String: Int]) throws -> [Int] {
        var seen: Set<Int> = []
        let rowCount = columns.rowCount
        return try columns.columns.enumerated().map { number, column in
            let found = column.isRelationship ? entity.attributes.firstIndex { attribute in
                attribute.name == column.name
                    && (attribute.destination != nil || attribute.orderOf != nil || attribute.join.map { !$0.isOrdered } == true)
            } : indices[column.name]
            guard let position = found else {
                throw StoreError.unknownAttribute(entity: entity.name, attribute: column.name)
            }
            let type = entity.attributes[position].type
            guard columns.fits(number, type) else {
                throw StoreError.typeMismatch(entity: entity.name, attribute: column.name, expected: type,
                                              value: "a column of \(column.kind)")
            }
            guard seen.insert(position).inserted else {
                throw StoreError.invalidBatchRow(entity: entity.name, row: 0, attribute: column.name, problem: "has two columns")
            }
            guard column.count == rowCount else {
                throw StoreError.invalidBatchRow(entity: entity.name, row: column.count, attribute: column.name,
                                                 problem: "has \(column.count) values where other columns have \(rowCount)")
            }
            return position
        }
    }
}

/// A batch insert's rows compared with the stored rows before the request's turn at the
/// writer (`ManagedObjectContext.compareAhead`): the comparison, and the commit generation
/// it is at least as new as. At the writer, the rows a later commit of the coordinator may
/// have written (`CommitLog`) are compared again; after a commit that may have written
/// any row, all are.
struct ComparisonAhead: Sendable {
    /// `PersistentStoreCoordinator.commitGeneration` before the comparison's snapshot.
    let generation: UInt64
    /// The coordinator and store it was made on (another's generations mean nothing).
    let coordinator: ObjectIdentifier
    let store: String
    let rows: ColumnRows
    /// Nil when the comparing context's policy does not compare in the store. The executing
    /// context's policy decides whether it is used (a comparison says only which rows equal
    /// their stored row, whatever the policy).
    let comparison: RowComparison?
}

extension BatchWriter {
    /// Whether rows with stored rows are compared in the store (the values of a row that
    /// differs are read then): under a policy that takes the carried values and keeps the
    /// rest, a row equal on every carried attribute changes nothing.
    private func comparesInStore(_ rows: ColumnRows) -> Bool {
        !rows.keyColumns.isEmpty && !rows.keyColumns.contains(nil)
            && (policy == .mergeByPropertyObjectTrump || (policy == .overwrite && rows.positions.count == entity.attributes.count))
    }

    /// Compares the rows of `keys` (integer keys) with the stored rows; without `keys`, every
    /// row of a batch whose key is not one integer.
    private func compare(_ rows: ColumnRows, _ columns: BatchColumns, keys: [Int64: Int]? = nil) throws -> RowComparison {
        if rows.integerKey {
            let keys = keys ?? rows.rowForInteger
            guard !keys.isEmpty else { return RowComparison() }
            return try store.read { try $0.compareRows(forIntegerKeys: keys, columns: columns, positions: rows.positions, entity: entity) }
        }
        guard !rows.rowForKey.isEmpty else { return RowComparison() }
        return try store.read { try $0.compareRows(forKeys: rows.rowForKey, columns: columns, positions: rows.positions, entity: entity) }
    }

    /// Compares the rows with the stored rows now, off the writer's queue.
    func compareAhead(_ columns: BatchColumns) throws -> ComparisonAhead {
        let rows = try ColumnRows(columns, entity: entity, indices: attributeIndices)
        // Read before the snapshot: every commit up to it is in the comparison.
        let generation = coordinator.commitGeneration
        let comparison = comparesInStore(rows) ? try compare(rows, columns) : nil
        return ComparisonAhead(generation: generation, coordinator: coordinator.identity, store: store.identifier, rows: rows, comparison: comparison)
    }

    /// The comparison of the rows with the stored rows as of now (on the root's queue): the
    /// one made ahead, with the rows a commit since may have written compared again (for a key
    /// that is not one integer, the rows whose key hash it wrote).
    private func comparison(_ rows: ColumnRows, _ columns: BatchColumns, ahead: ComparisonAhead?) throws -> RowComparison {
        guard let ahead, var comparison = ahead.comparison,
              let written = coordinator.keysWritten(after: ahead.generation, entity: entity.name) else {
            return try compare(rows, columns)
        }
        guard rows.integerKey else { return try freshened(comparison, rows, columns, written: written) }
        var stale: [Int64: Int] = [:]
        for keys in written {
            for key in keys {
                if let row = rows.rowForInteger[key] { stale[key] = row }
            }
        }
        guard !stale.isEmpty else { return comparison }
        let staleRows = Set(stale.values)
        comparison.unchanged.removeAll { staleRows.contains($0.row) }
        for row in staleRows {
            comparison.changed[row] = nil
            comparison.differing[row] = nil
        }
        let fresh = try compare(rows, columns, keys: stale)
        comparison.unchanged += fresh.unchanged
        comparison.changed.merge(fresh.changed) { _, fresh in fresh }
        comparison.differing.merge(fresh.differing) { _, fresh in fresh }
        return comparison
    }

    /// For a key that is not one integer: the comparison made ahead, with the rows whose key
    /// hash a later commit wrote compared again.
    private func freshened(_ ahead: RowComparison, _ rows: ColumnRows, _ columns: BatchColumns,
                           written: [CommitLog.Keys]) throws -> RowComparison {
        var hashes = Set<Int64>()
        for keys in written { hashes.formUnion(keys) }
        guard !hashes.isEmpty else { return ahead }
        var stale: [[StoreValue]: Int] = [:]
        for (key, row) in rows.rowForKey where hashes.contains(ColumnRows.keyHash(key)) { stale[key] = row }
        guard !stale.isEmpty else { return ahead }
        var comparison = ahead
        let staleRows = Set(stale.values)
        comparison.unchanged.removeAll { staleRows.contains($0.row) }
        for row in staleRows {
            comparison.changed[row] = nil
            comparison.differing[row] = nil
        }
        let fresh = try store.read { try $0.compareRows(forKeys: stale, columns: columns, positions: rows.positions, entity: entity) }
        comparison.unchanged += fresh.unchanged
        comparison.changed.merge(fresh.changed) { _, fresh in fresh }
        comparison.differing.merge(fresh.differing) { _, fresh in fresh }
        return comparison
    }

    /// Checks a row the store found differing in the attributes of `mask` (every attribute
    /// carried, under a policy that takes the carried values: the stored values are not
    /// needed, only the differing ones are written, from the buffers): a required attribute
    /// it would set to nil fails the request.
    private func checkUpdate(row: Int, mask: AttributeMask, columns: BatchColumns, positions: [Int]) throws {
        for (column, position) in positions.enumerated() where mask.contains(position) && !entity.attributes[position].isOptional {
            if columns.columns[column].isNull(row) {
                throw StoreError.invalidBatchRow(entity: entity.name, row: row, attribute: entity.attributes[position].name,
                                                 problem: "is required and the \(policy) policy leaves it without a value")
            }
        }
    }

    /// Fails the request at the first row whose value breaks its attribute's rules (Store
    /// guarantees 55), naming the row: only the columns of attributes with rules are read.
    private func checkRules(_ columns: BatchColumns, positions: [Int]) throws {
        for (index, checker) in ruleCheckers {
            guard let column = positions.firstIndex(of: index) else { continue }
            for row in 0..<columns.rowCount {
                let value = columns.value(row: row, column: column)
                if let rule = checker.brokenRule(by: value) {
                    throw StoreError.invalidBatchRow(entity: entity.name, row: row, attribute: entity.attributes[index].name,
                                                     problem: Self.breaks(value, rule))
                }
            }
        }
    }

    /// Columns: the new rows go to the store as the buffers they are (`ColumnInsert`); only
    /// rows whose key is stored become values, to be merged by the policy.
    func insert(_ columns: BatchColumns, comparedAhead: ComparisonAhead?) throws -> Outcome {
        var planned = try plan(columns, comparedAhead: comparedAhead)
        try commit(planned.operations, columnInserts: planned.columnInserts, columnUpdates: planned.columnUpdates,
                   linkWrites: planned.linkWrites, touched: planned.touched, into: &planned.outcome)
        planned.committed(merged: planned.outcome.merged)
        return planned.outcome
    }

    /// A columns batch decided against the store and not yet committed: what to write, and
    /// its outcome so far (each row's primary key as planned, when asked for).
    struct PlannedInsert {
        var operations: [StoreChangeSet.Operation]
        var columnInserts: [ColumnInsert]
        var columnUpdates: [ColumnUpdate]
        var linkWrites: [LinkWrite]
        var touched: CommitLog.Touched
        var outcome: Outcome
        let entity: String
        let store: String
        /// The new rows and the IDs planned for them.
        let newRows: [Int]
        let ids: [Int64]

        /// After the commit: a new row whose key another writer stored meanwhile became that row.
        mutating func committed(merged: [ObjectID: ObjectID]) {
            guard !outcome.primaryKeys.isEmpty, !merged.isEmpty else { return }
            for (row, id) in zip(newRows, ids) {
                if let survivor = merged[ObjectID(entityName: entity, primaryKey: id, storeIdentifier: store)] {
                    outcome.primaryKeys[row] = survivor.primaryKey
                }
            }
        }
    }

    /// Decides a columns batch against the stored rows (reads, comparisons, new IDs), without writing.
    func plan(_ columns: BatchColumns, comparedAhead: ComparisonAhead?) throws -> PlannedInsert {
        // A comparison made on another coordinator or store says nothing here (its generations,
        // primary keys and column positions are another's).
        let ahead = comparedAhead.flatMap { $0.coordinator == coordinator.identity && $0.store == store.identifier ? $0 : nil }
        let rows = try ahead?.rows ?? ColumnRows(columns, entity: entity, indices: attributeIndices)
        let positions = rows.positions, keyColumns = rows.keyColumns
        try checkRules(columns, positions: positions)
        // Join-table member lists (package batches of nested records) are not columns of the
        // table: the rows go down without them, the lists as link writes.
        let linkColumns = positions.indices.filter { entity.attributes[positions[$0]].join != nil }
        let tableColumns = linkColumns.isEmpty ? columns : columns.removingColumns(Set(linkColumns))
        let tablePositions = linkColumns.isEmpty ? positions : positions.enumerated().filter { !linkColumns.contains($0.offset) }.map(\.element)
        var newLinks = linkColumns.map {
            LinkWrite(entity: entity.name, column: positions[$0], join: entity.attributes[positions[$0]].join!,
                      attributeCount: entity.attributes.count, replace: false)
        }
        var replacedLinks = newLinks.map { links in
            var replaced = links
            replaced.replace = true
            return replaced
        }
        /// Each batch row's primary key, when asked for (-1: a row a later one with its key superseded).
        var primaryKeys = reportsPrimaryKeys ? [Int64](repeating: -1, count: columns.rowCount) : []
        var stored: [[StoreValue]: StoreRow] = [:]
        var storedByInteger: [Int64: StoreRow] = [:]
        /// Stored rows compared in the store, by the batch row they meet: read into values, or
        /// (every attribute carried) only the attributes that differ.
        var storedByRow: [Int: StoreRow] = [:]
        var differing: [Int: (primaryKey: Int64, mask: AttributeMask)] = [:]
        /// Rows equal to their stored row on every carried attribute: under a policy that takes the
        /// carried values and keeps the rest, they change nothing (compared in the store, no values made).
        var unchangedRows: [Bool] = []
        var outcome = Outcome()
        if comparesInStore(rows) {
            let comparison = try comparison(rows, columns, ahead: ahead)
            storedByRow = comparison.changed
            differing = comparison.differing
            unchangedRows = [Bool](repeating: false, count: columns.rowCount)
            var keys = UnchangedKeys(entity: entity.name, store: store.identifier, keys: [])
            keys.keys.reserveCapacity(comparison.unchanged.count)
            for (row, primaryKey) in comparison.unchanged {
                unchangedRows[row] = true
                keys.keys.append(primaryKey)
                if reportsPrimaryKeys { primaryKeys[row] = primaryKey }
            }
            outcome.unchangedKeys = keys
        } else if rows.integerKey {
            if !rows.rowForInteger.isEmpty {
                storedByInteger = try store.read { try $0.rows(forIntegerKeys: Array(rows.rowForInteger.keys), entity: entity) }
            }
        } else if !rows.rowForKey.isEmpty {
            stored = try store.read { reader in try reader.rows(forKeys: Array(rows.rowForKey.keys), entity: entity) }
        }
        let required = requiredAttributes
        var newRows: [Int] = []
        newRows.reserveCapacity(rows.kept.count)
        var merging: [(IncomingRow, StoreRow)] = []
        var updates = ColumnUpdate(entity: entity.name, columns: tableColumns, positions: tablePositions, attributeCount: entity.attributes.count)
        for row in rows.kept {
            if !unchangedRows.isEmpty && unchangedRows[row] { continue }
            if let (primaryKey, mask) = differing[row] {
                try checkUpdate(row: row, mask: mask, columns: columns, positions: positions)
                if reportsPrimaryKeys { primaryKeys[row] = primaryKey }
                guard !linkColumns.isEmpty else {
                    updates.append(row: row, primaryKey: primaryKey, mask: mask)
                    continue
                }
                var tableMask = mask
                for (n, column) in linkColumns.enumerated() where mask.contains(positions[column]) {
                    tableMask.remove(positions[column])
                    columns.withPointers { replacedLinks[n].append(owner: primaryKey, list: $0[column].isNull(row) ? nil : $0[column].text(row)) }
                }
                if tableMask != .empty { updates.append(row: row, primaryKey: primaryKey, mask: tableMask) }
                continue
            }
            let existing: StoreRow?
            if !storedByRow.isEmpty {
                existing = storedByRow[row]
            } else if !storedByInteger.isEmpty {
                existing = columns.columns[keyColumns[0]!].isNull(row) ? nil : storedByInteger[columns.columns[keyColumns[0]!].integers[row]]
            } else if !stored.isEmpty {
                existing = stored[keyColumns.map { columns.value(row: row, column: $0!) }]
            } else {
                existing = nil
            }
            if let existing {
                if reportsPrimaryKeys { primaryKeys[row] = existing.primaryKey }
                var values = [StoreValue](repeating: .null, count: entity.attributes.count)
                for (column, position) in positions.enumerated() { values[position] = columns.value(row: row, column: column) }
                merging.append((IncomingRow(values: values, mask: rows.mask, index: row), existing))
                continue
            }
            newRows.append(row)
        }
        if let first = newRows.first {
            for index in required {
                guard let column = positions.firstIndex(of: index) else {
                    throw StoreError.invalidBatchRow(entity: entity.name, row: first, attribute: entity.attributes[index].name,
                                                     problem: "is required and has no value")
                }
                if let row = newRows.first(where: { columns.columns[column].isNull($0) }) {
                    throw StoreError.invalidBatchRow(entity: entity.name, row: row, attribute: entity.attributes[index].name,
                                                     problem: "is required and has no value")
                }
            }
        }
        let operations = try merge(merging, outcome: &outcome)
        var keys: [Int64?] = []
        if entity.rowidKeyIndex != nil, let column = keyColumns.first ?? nil, columns.columns[column].kind == .integers {
            let values = columns.columns[column].integers
            keys = newRows.map { values[$0] }
        }
        let ids = try newIDs(count: newRows.count, keys: keys)
        let insert = ColumnInsert(entity: entity.name, columns: tableColumns, positions: tablePositions, rows: newRows, ids: ids,
                                  attributeCount: entity.attributes.count)
        if !linkColumns.isEmpty {
            columns.withPointers { pointers in
                for (n, column) in linkColumns.enumerated() {
                    for (row, id) in zip(newRows, ids) where !pointers[column].isNull(row) {
                        newLinks[n].append(owner: id, list: pointers[column].text(row))
                    }
                }
            }
        }
        if reportsPrimaryKeys {
            for (row, id) in zip(newRows, ids) { primaryKeys[row] = id }
        }
        // The commit writes only rows of the batch's keys (other keys are kept as their hashes).
        let touched: CommitLog.Touched = rows.integerKey ? .keys(entity: entity.name, rows.rowForInteger.keys)
            : !rows.rowForKey.isEmpty ? .keys(entity: entity.name, rows.rowForKeyHash.keys) : .anyRow
        let linkWrites = (newLinks + replacedLinks).filter { !$0.owners.isEmpty }
        if reportsPrimaryKeys {
            // A row a later one with its key superseded is that row.
            if rows.integerKey {
                let keyColumn = columns.columns[keyColumns[0]!]
                for row in primaryKeys.indices where primaryKeys[row] < 0 && !keyColumn.isNull(row) {
                    if let winner = rows.rowForInteger[keyColumn.integers[row]] { primaryKeys[row] = primaryKeys[winner] }
                }
            } else if !rows.rowForKey.isEmpty {
                for row in primaryKeys.indices where primaryKeys[row] < 0 {
                    if let winner = rows.rowForKey[keyColumns.map { columns.value(row: row, column: $0!) }] { primaryKeys[row] = primaryKeys[winner] }
                }
            }
            outcome.primaryKeys = primaryKeys
        }
        return PlannedInsert(operations: operations, columnInserts: newRows.isEmpty ? [] : [insert],
                             columnUpdates: updates.rows.isEmpty ? [] : [updates], linkWrites: linkWrites, touched: touched,
                             outcome: outcome, entity: entity.name, store: store.identifier, newRows: newRows, ids: ids)
    }
}
