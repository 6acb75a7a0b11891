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
        let connection = connection
        var fallbacks: [Int] = []
        var inserted: [ObjectID] = []
        inserted.reserveCapacity(insert.rows.count)
        let storeIdentifier = storeIdentifier
        try Self.withBuffers(columns.map(\.arena)[...], []) { buffers in
            let first: Int32 = idFirst ? 2 : 1
            let idParameter: Int32 = idFirst ? 1 : Int32(columns.count + 1)
            for n in insert.rows.indices {
                let row = insert.rows[n], id = insert.ids[n]
                for c in columns.indices {
                    try Self.bind(columns[c], row: row, text: buffers[c], to: statement, at: first + Int32(c), connection: connection)
                }
                var idIsKey = false
                if let keyColumn, !columns[keyColumn].isNull(row), columns[keyColumn].kind == .integers {
                    idIsKey = columns[keyColumn].integers[row] == id
                }
                let code = idIsKey ? sqlite3_bind_null(statement.handle, idParameter) : sqlite3_bind_int64(statement.handle, idParameter, id)
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
        result.inserted.formUnion(inserted)
        // Keys taken meanwhile (another writer of the store): merged by the policy.
        for n in fallbacks { try apply(insert.operation(n)) }
    }

    private static func bind(_ column: BatchColumns.Column, row: Int, text: UnsafeBufferPointer<UInt8>,
                             to statement: SQLiteStatement, at index: Int32, connection: SQLiteConnection) throws {
        let code: Int32
        if column.isNull(row) {
            code = sqlite3_bind_null(statement.handle, index)
        } else {
            switch column.kind {
            case .integers: code = sqlite3_bind_int64(statement.handle, index, column.integers[row])
            case .doubles, .dates: code = sqlite3_bind_double(statement.handle, index, column.doubles[row])
            case .booleans: code = sqlite3_bind_int64(statement.handle, index, column.booleans[row] ? 1 : 0)
            case .text:
                let range = column.textRange(row)
                let base = text.baseAddress.map { UnsafeRawPointer($0 + range.lowerBound).assumingMemoryBound(to: CChar.self) }
                // SQLITE_STATIC (nil): SQLite reads the arena in place, which outlives the statement's step.
                code = sqlite3_bind_text64(statement.handle, index, base ?? UnsafePointer(bitPattern: 1)!, UInt64(range.count),
                                           nil, UInt8(SQLITE_UTF8))
            }
        }
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
    }

    /// Runs `body` with a pointer to each array's bytes, valid throughout.
    private static func withBuffers<R>(_ arrays: ArraySlice<[UInt8]>, _ collected: [UnsafeBufferPointer<UInt8>],
                                       _ body: ([UnsafeBufferPointer<UInt8>]) throws -> R) throws -> R {
        guard let first = arrays.first else { return try body(collected) }
        return try first.withUnsafeBufferPointer { try withBuffers(arrays.dropFirst(), collected + [$0], body) }
    }
}
