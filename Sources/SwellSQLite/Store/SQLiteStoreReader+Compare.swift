import CSQLite
import SwellStoreCore

/// A batch's rows compared with their stored rows in SQLite's bytes (`StoreReader.compareRows`):
/// one query for the batch's keys, each stored row compared with its incoming row in place.
extension SQLiteStoreReader {
    /// One query for the batch's keys; each stored row is compared with its incoming row
    /// in place (SQLite's bytes against the batch's buffers), and only a row that differs
    /// is read into values.
    package func compareRows(forIntegerKeys keyedRows: [Int64: Int], columns batch: BatchColumns, positions: [Int],
                     entity: EntityDescription) throws -> RowComparison {
        var comparison = RowComparison()
        guard !keyedRows.isEmpty, entity.uniquenessConstraint.count == 1, let column = entity.uniquenessConstraint.first,
              let keyIndex = entity.attributes.firstIndex(where: { $0.name == column }) else { return comparison }
        let layout = TableLayout(entity)
        // A key above the largest stored one is not stored (an import of new rows asks nothing more).
        let largest = try wrap { try connection.query("SELECT max(\(quoteIdentifier(column))) FROM \(layout.table)").first?.first }
        guard case .integer(let largestKey)? = largest else { return comparison }
        let keys = keyedRows.keys.filter { $0 <= largestKey }
        guard let lowest = keys.min(), let highest = keys.max() else { return comparison }
        // Keys that fill at least an eighth of their range (numbered records, with gaps) are read in
        // one range scan of the key's b-tree: stepping over a stored row of another key costs less
        // than an eighth of a look-up. Scattered keys are looked up one by one.
        let span = highest.subtractingReportingOverflow(lowest)
        let dense = !span.overflow && span.partialValue < Int64(keys.count) * 8
        let condition = dense ? "BETWEEN ? AND ?" : "IN (SELECT value FROM json_each(?))"
        let sql = "SELECT \(columns(entity, layout)) FROM \(layout.table) WHERE \(quoteIdentifier(column)) \(condition)"
        // Dense keys find their row by offset from the lowest (the range is at most 8 × the keys), not by hashing.
        var rowAt: [Int32] = []
        if dense {
            rowAt = [Int32](repeating: -1, count: Int(span.partialValue) + 1)
            for (key, row) in keyedRows where key >= lowest && key <= highest { rowAt[Int(key &- lowest)] = Int32(row) }
        }
        let comparer = InPlaceComparer(positions: positions, entity: entity)
        try wrap {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            if dense {
                try statement.bind(.integer(lowest), at: 1)
                try statement.bind(.integer(highest), at: 2)
            } else {
                try statement.bind(keyList(keys), at: 1)
            }
            let handle = statement.handle
            try batch.withPointers { pointers in
                while try statement.step() {
                    guard sqlite3_column_type(handle, Int32(keyIndex + 1)) == SQLITE_INTEGER else { continue }
                    let key = sqlite3_column_int64(handle, Int32(keyIndex + 1))
                    let row: Int
                    if dense {
                        guard key >= lowest, key <= highest, case let found = rowAt[Int(key &- lowest)], found >= 0 else { continue }
                        row = Int(found)
                    } else {
                        guard let found = keyedRows[key] else { continue }
                        row = found
                    }
                    comparer.compare(statement, with: row, of: pointers, into: &comparison)
                }
            }
        }
        return comparison
    }

    /// One query for the batch's keys (as `rows(forKeys:)` asks); each stored row finds its
    /// incoming row by its key and is compared with it in place, as with integer keys. Keys
    /// holding a NUL character are read one by one and compared by values.
    package func compareRows(forKeys keyedRows: [[StoreValue]: Int], columns batch: BatchColumns, positions: [Int],
                     entity: EntityDescription) throws -> RowComparison {
        var comparison = RowComparison()
        guard !keyedRows.isEmpty else { return comparison }
        let query = keysQuery(Array(keyedRows.keys), entity: entity)
        for key in query.oneByOne {
            if let incoming = keyedRows[key], let stored = try row(forKey: key, entity: entity) {
                comparison.note(stored, row: incoming, columns: batch, positions: positions, entity: entity)
            }
        }
        guard let sql = query.sql else { return comparison }
        let comparer = InPlaceComparer(positions: positions, entity: entity)
        let keyIndices = entity.keyIndices
        let keyTypes = keyIndices.map { entity.attributes[$0].type }
        try wrap {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(query.argument, at: 1)
            try batch.withPointers { pointers in
                var key: [StoreValue] = []
                key.reserveCapacity(keyIndices.count)
                while try statement.step() {
                    key.removeAll(keepingCapacity: true)
                    for (index, type) in zip(keyIndices, keyTypes) {
                        let value = statement.column(Int32(index + 1))
                        if type == .double || type == .date, case .integer(let int) = value { key.append(.real(Double(int))) } else { key.append(value) }
                    }
                    guard let row = keyedRows[key] else { continue }
                    comparer.compare(statement, with: row, of: pointers, into: &comparison)
                }
            }
        }
        return comparison
    }

    /// Compares the stored row a statement is on with a batch row in place (the one rule:
    /// `ColumnPointers.equals`) and notes it in a `RowComparison`: unchanged, differing in some
    /// attributes (the batch carries every attribute), or read into values. The key's
    /// attributes are not compared: the stored row was found by its key. (A text key Swift
    /// holds equal to the batch's in other bytes — NFC and NFD — keeps its stored bytes, as
    /// a merge by values does.)
    private struct InPlaceComparer {
        package let positions: [Int]
        package let required: [Bool]
        /// Per column: false for the key's attributes.
        package let compared: [Bool]
        /// Every attribute carried: a differing row needs no stored value, only which attributes differ.
        package let masks: Bool
        package let count: Int32

        package init(positions: [Int], entity: EntityDescription) {
            self.positions = positions
            required = positions.map { !entity.attributes[$0].isOptional }
            compared = positions.map { !entity.keyIndices.contains($0) }
            masks = RowComparison.notesDifferences(positions: positions, entity: entity)
            count = Int32(entity.attributes.count)
        }

        package func compare(_ statement: SQLiteStatement, with row: Int, of pointers: [ColumnPointers], into comparison: inout RowComparison) {
            let handle = statement.handle
            var differing = AttributeMask.empty
            for (c, position) in positions.enumerated() where compared[c] &&
                !SQLiteStoreReader.storedEquals(pointers[c], row: row, statement: handle, column: Int32(position + 1), required: required[c]) {
                differing.insert(position)
                if !masks { break }
            }
            if differing == .empty {
                comparison.unchanged.append((row, statement.int64(0)))
            } else if masks {
                comparison.differing[row] = (statement.int64(0), differing)
            } else {
                var values: [StoreValue] = []
                values.reserveCapacity(Int(count))
                for index in 0..<count { values.append(statement.column(index + 1)) }
                comparison.changed[row] = StoreRow(primaryKey: statement.int64(0), values: values)
            }
        }
    }

    /// Whether the stored value in `column` of the current row is the incoming value `row`
    /// of a batch column (`ColumnPointers.equals`: the one rule for every store).
    private static func storedEquals(_ incoming: ColumnPointers, row: Int, statement: OpaquePointer, column: Int32, required: Bool) -> Bool {
        // One column call, then the value's own accessors: each `sqlite3_column_*` call enters and
        // leaves the connection's (absent) mutex and re-checks the statement; the value's do not.
        // The value is used on this connection's thread only, before the next step.
        guard let value = sqlite3_column_value(statement, column) else { return false }
        let stored: StoreRowCursor.Field
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: stored = .null
        case SQLITE_INTEGER: stored = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: stored = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            // Nil only when SQLite could not allocate the text: not equal, so the row is read again.
            guard let bytes = sqlite3_value_text(value) else { return false }
            stored = .text(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))))
        default: return false
        }
        return incoming.equals(stored, row: row, required: required)
    }
}
