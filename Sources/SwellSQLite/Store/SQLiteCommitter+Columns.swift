import CSQLite
import SwellStoreCore

extension SQLiteCommitter {
    /// Writes a batch insert's new rows straight from its column buffers: INSERTs of many
    /// rows each (SQLite opens its cursors once per statement, not per row), prepared once
    /// per batch shape, values bound from the buffers (text from the arena, `SQLITE_STATIC`:
    /// SQLite reads it in place), no per-row values built. When a statement meets a key that
    /// another writer stored since it was looked up, it writes none of its rows; they are
    /// written one by one, and a row whose key is taken is resolved as an operation, by the
    /// merge policy.
    package mutating func insertColumns(_ insert: ColumnInsert) throws {
        guard let (entity, layout) = tables[insert.entity] else { throw StoreError.unknownEntity(insert.entity) }
        guard !insert.rows.isEmpty else { return }
        let names = insert.positions.map { quoteIdentifier(entity.attributes[$0].name) }
        let idFirst = layout.rowidKeyIndex == nil
        let columnNames = idFirst ? ["\"_pk\""] + names : names + ["\"_pk\""]
        let width = columnNames.count
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        func sql(rows: Int) -> String {
            "INSERT INTO \(layout.table) (\(columnNames.joined(separator: ", "))) VALUES " + Array(repeating: tuple, count: rows).joined(separator: ", ")
        }
        let parameters = Int(sqlite3_limit(try connection.handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let perStatement = max(1, min(Self.rowsPerInsert, parameters / width))
        let fullSQL = sql(rows: perStatement)
        let keyColumn = layout.rowidKeyIndex.flatMap { insert.positions.firstIndex(of: $0) }
        let connection = connection
        var fallbacks: [Int] = []
        var inserted: [ObjectID] = []
        inserted.reserveCapacity(insert.rows.count)
        let storeIdentifier = storeIdentifier
        let entityName = insert.entity
        try insert.columns.withPointers { columns in
            let integerKey = keyColumn.flatMap { columns[$0].kind == .integers ? columns[$0] : nil }
            /// Binds row `n` of the insert as row `slot` of `statement`.
            func bind(_ n: Int, slot: Int, to statement: SQLiteStatement) throws {
                let handle = statement.handle
                let base = Int32(slot * width)
                let first = base + (idFirst ? 2 : 1)
                let row = insert.rows[n], id = insert.ids[n]
                for c in columns.indices {
                    let code = Self.bind(columns[c], row: row, to: handle, at: first + Int32(c))
                    guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
                }
                var idIsKey = false
                if let integerKey, !integerKey.isNull(row) {
                    idIsKey = integerKey.integers[row] == id
                }
                let idParameter = base + (idFirst ? 1 : Int32(columns.count + 1))
                let code = idIsKey ? sqlite3_bind_null(handle, idParameter) : sqlite3_bind_int64(handle, idParameter, id)
                guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
            }
            var start = 0
            while start < insert.rows.count {
                // The last rows go in statements of a power of two rows each: a few shapes, each
                // prepared once and kept, whatever the batch's size.
                let left = insert.rows.count - start
                let rows = left >= perStatement ? perStatement : 1 << (Int.bitWidth - 1 - left.leadingZeroBitCount)
                let statement = try connection.statement(rows == perStatement ? fullSQL : sql(rows: rows))
                for slot in 0..<rows { try bind(start + slot, slot: slot, to: statement) }
                do {
                    try statement.run()
                    for n in start..<(start + rows) {
                        inserted.append(ObjectID(entityName: entityName, primaryKey: insert.ids[n], storeIdentifier: storeIdentifier))
                    }
                } catch let error as SQLiteError where error.isUniqueViolation {
                    statement.reset()
                    let single = try connection.statement(sql(rows: 1))
                    for n in start..<(start + rows) {
                        try bind(n, slot: 0, to: single)
                        do {
                            try single.run()
                            inserted.append(ObjectID(entityName: entityName, primaryKey: insert.ids[n], storeIdentifier: storeIdentifier))
                        } catch let error as SQLiteError where error.isUniqueViolation {
                            single.reset()
                            fallbacks.append(n)
                        }
                    }
                }
                start += rows
            }
        }
        result.inserted.reserveCapacity(result.inserted.count + inserted.count)
        result.inserted.formUnion(inserted)
        // Keys taken meanwhile (another writer of the store): merged by the policy.
        for n in fallbacks { try apply(insert.operation(n)) }
    }

    /// Writes a batch insert's differing rows straight from its column buffers: one prepared
    /// UPDATE per mask of differing attributes, by object ID, values bound from the buffers.
    /// A row whose mask names a join-table attribute, or whose update meets a uniqueness
    /// conflict, goes as an operation (links, and the policy's resolution of the conflict).
    package mutating func updateColumns(_ update: ColumnUpdate) throws {
        guard let (entity, layout) = tables[update.entity] else { throw StoreError.unknownEntity(update.entity) }
        guard !update.rows.isEmpty else { return }
        var columnOf = [Int](repeating: -1, count: entity.attributes.count)
        for (column, position) in update.positions.enumerated() { columnOf[position] = column }
        /// Per mask: the UPDATE's prepared statements (by rowid key, then by `_pk`), its bound
        /// columns in parameter order, the names noted. Looked up once per mask, not per row.
        var shapes: [AttributeMask: (statements: [SQLiteStatement], columns: [Int], names: Set<String>)] = [:]
        // A mask naming a join-table attribute writes its links row by row (as an operation).
        for mask in Set(update.masks) where !(entity.columnCount..<entity.attributes.count).contains(where: mask.contains) {
            let indices = mask.indices(below: entity.columnCount)
            guard !indices.isEmpty, indices.allSatisfy({ columnOf[$0] >= 0 }) else { continue }
            var statements: [SQLiteStatement] = []
            for sql in updateStatements(entity, layout, mask: mask, indices: indices) { statements.append(try connection.statement(sql)) }
            shapes[mask] = (statements, indices.map { columnOf[$0] }, names(entity, mask: mask, indices: indices))
        }
        let connection = connection
        var fallbacks: [Int] = []
        var updated: [Int] = []
        updated.reserveCapacity(update.rows.count)
        try update.columns.withPointers { columns in
            for n in update.rows.indices {
                guard let shape = shapes[update.masks[n]] else {
                    fallbacks.append(n)
                    continue
                }
                let row = update.rows[n]
                // `run` leaves each statement reset (its step resets it on an error too): every parameter is bound again.
                for statement in shape.statements {
                    let handle = statement.handle
                    for (parameter, column) in shape.columns.enumerated() {
                        let code = Self.bind(columns[column], row: row, to: handle, at: Int32(parameter + 1))
                        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
                    }
                    let code = sqlite3_bind_int64(handle, Int32(shape.columns.count + 1), update.primaryKeys[n])
                    guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: try connection.handle, sql: statement.sql) }
                    do {
                        try statement.run()
                    } catch let error as SQLiteError where error.isUniqueViolation {
                        fallbacks.append(n)
                        break
                    }
                    if connection.changes > 0 {
                        updated.append(n)
                        break
                    }
                }
            }
        }
        for n in updated {
            noteUpdate(ObjectID(entityName: update.entity, primaryKey: update.primaryKeys[n], storeIdentifier: storeIdentifier),
                       attributes: shapes[update.masks[n]]!.names)
        }
        for n in fallbacks { try apply(update.operation(n)) }
    }

    /// Rows one INSERT of a batch insert writes at most (fewer when the connection's
    /// limit on parameters is reached first).
    package static let rowsPerInsert = 512

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
