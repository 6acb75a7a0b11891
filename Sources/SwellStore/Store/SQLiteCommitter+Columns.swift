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
        let columns = insert.columns.columns
        let arenas: [[UInt8]] = columns.map { if case .text(let arena, _) = $0.values { arena } else { [] } }
        var fallbacks: [Int] = []
        var inserted: [ObjectID] = []
        inserted.reserveCapacity(insert.rows.count)
        try withBuffers(arenas[...], []) { buffers in
            for n in insert.rows.indices {
                let row = insert.rows[n], id = insert.ids[n]
                let first: Int32 = idFirst ? 2 : 1
                for (c, column) in columns.enumerated() {
                    try bind(column, row: row, text: buffers[c], to: statement, at: first + Int32(c))
                }
                var idIsKey = false
                if let keyColumn, !columns[keyColumn].isNull(row), case .integers(let keys) = columns[keyColumn].values {
                    idIsKey = keys[row] == id
                }
                let idParameter: Int32 = idFirst ? 1 : Int32(columns.count + 1)
                let code = idIsKey ? sqlite3_bind_null(statement.handle, idParameter) : sqlite3_bind_int64(statement.handle, idParameter, id)
                guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: sql) }
                do {
                    try statement.run()
                    inserted.append(objectID(entity.name, id))
                } catch let error as SQLiteError where error.isUniqueViolation {
                    statement.reset()
                    fallbacks.append(n)
                }
            }
        }
        result.inserted.formUnion(inserted)
        // Keys taken meanwhile (another writer of the store): merged by the policy.
        for n in fallbacks { try apply(insert.operation(n)) }
    }

    private func bind(_ column: BatchColumns.Column, row: Int, text: UnsafeBufferPointer<UInt8>,
                      to statement: SQLiteStatement, at index: Int32) throws {
        let code: Int32
        if column.isNull(row) {
            code = sqlite3_bind_null(statement.handle, index)
        } else {
            switch column.values {
            case .integers(let values): code = sqlite3_bind_int64(statement.handle, index, values[row])
            case .doubles(let values), .dates(let values): code = sqlite3_bind_double(statement.handle, index, values[row])
            case .booleans(let values): code = sqlite3_bind_int64(statement.handle, index, values[row] ? 1 : 0)
            case .text(_, let ends):
                let start = row == 0 ? 0 : ends[row - 1]
                let base = text.baseAddress.map { UnsafeRawPointer($0 + start).assumingMemoryBound(to: CChar.self) }
                code = sqlite3_bind_text64(statement.handle, index, base ?? UnsafePointer(bitPattern: 1)!, UInt64(ends[row] - start),
                                           nil, UInt8(SQLITE_UTF8))
            }
        }
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
    }

    /// Runs `body` with a pointer to each array's bytes, valid throughout.
    private func withBuffers<R>(_ arrays: ArraySlice<[UInt8]>, _ collected: [UnsafeBufferPointer<UInt8>],
                                _ body: ([UnsafeBufferPointer<UInt8>]) throws -> R) throws -> R {
        guard let first = arrays.first else { return try body(collected) }
        return try first.withUnsafeBufferPointer { try withBuffers(arrays.dropFirst(), collected + [$0], body) }
    }
}
