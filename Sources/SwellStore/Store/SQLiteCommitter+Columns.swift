import CSQLite

extension SQLiteCommitter {
    /// Writes a batch insert's new rows straight from its column buffers: one INSERT
    /// prepared for the columns it carries, values bound from the buffers (text from the
    /// arena, `SQLITE_STATIC`: SQLite reads it in place), no per-row values built. A row
    /// whose key another writer stored since it was looked up is resolved as an
    /// operation, by the merge policy.
    mutating func insertColumns(_ insert: ColumnInsert) throws {
        guard let (entity, layout) = tables[insert.entity] else { throw StoreError.unknownEntity(insert.entity) }
        guard !insert.rows.isEmpty else { return }
        let names = insert.positions.map { quoteIdentifier(entity.attributes[$0].name) }
        let idFirst = layout.rowidKeyIndex == nil
        let columnNames = idFirst ? ["\"_pk\""] + names : names + ["\"_pk\""]
        let sql = "INSERT INTO \(layout.table) (\(columnNames.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columnNames.count).joined(separator: ", ")))"
        let statement = try connection.statement(sql)
        let keyColumn = layout.rowidKeyIndex.flatMap { insert.positions.firstIndex(of: $0) }
        let connection = connection
        var fallbacks: [Int] = []
        var inserted: [ObjectID] = []
        inserted.reserveCapacity(insert.rows.count)
        let storeIdentifier = storeIdentifier
        let handle = statement.handle
        try insert.columns.withPointers { columns in
            let first: Int32 = idFirst ? 2 : 1
            let idParameter: Int32 = idFirst ? 1 : Int32(columns.count + 1)
            let integerKey = keyColumn.flatMap { columns[$0].kind == .integers ? columns[$0] : nil }
            for n in insert.rows.indices {
                let row = insert.rows[n], id = insert.ids[n]
                for c in columns.indices {
                    let code = Self.bind(columns[c], row: row, to: handle, at: first + Int32(c))
                    guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: sql) }
                }
                var idIsKey = false
                if let integerKey, !integerKey.isNull(row) {
                    idIsKey = integerKey.integers[row] == id
                }
                let code = idIsKey ? sqlite3_bind_null(handle, idParameter) : sqlite3_bind_int64(handle, idParameter, id)
                guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: sql) }
                do {
                    try statement.run()
                    inserted.append(ObjectID(entityName: insert.entity, primaryKey: id, storeIdentifier: storeIdentifier))
                } catch let error as SQLiteError where error.isUniqueViolation {
                    statement.reset()
                    fallbacks.append(n)
                }
            }
        }
        result.inserted.reserveCapacity(result.inserted.count + inserted.count)
        result.inserted.formUnion(inserted)
        // Keys taken meanwhile (another writer of the store): merged by the policy.
        for n in fallbacks { try apply(insert.operation(n)) }
    }

    /// Binds value `row` of a column to parameter `index`; SQLite's result code.
    private static func bind(_ column: ColumnPointers, row: Int, to statement: OpaquePointer, at index: Int32) -> Int32 {
        if column.isNull(row) { return sqlite3_bind_null(statement, index) }
        switch column.kind {
        case .integers: return sqlite3_bind_int64(statement, index, column.integers[row])
        case .doubles, .dates: return sqlite3_bind_double(statement, index, column.doubles[row])
        case .booleans: return sqlite3_bind_int64(statement, index, column.booleans[row] ? 1 : 0)
        case .text:
            let text = column.text(row)
            let base = text.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            // SQLITE_STATIC (nil): SQLite reads the arena in place, which outlives the statement's step.
            return sqlite3_bind_text64(statement, index, base ?? UnsafePointer(bitPattern: 1)!, UInt64(text.count), nil, UInt8(SQLITE_UTF8))
        }
    }
}
