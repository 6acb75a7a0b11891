import Foundation
import SwellStoreCore

/// A batch's rows compared with their stored rows in PostgreSQL (`StoreReader.compareRows`).
extension PostgresReader {
    /// Keys above the largest stored one are not stored: an import of new rows asks the
    /// server for one maximum, not for each key; the others are read and compared.
    func compareRows(forIntegerKeys keyedRows: [Int64: Int], columns: BatchColumns, positions: [Int],
                     entity: EntityDescription) throws -> RowComparison {
        guard entity.keyIndices.count == 1, !keyedRows.isEmpty else { return RowComparison() }
        let attribute = entity.attributes[entity.keyIndices[0]]
        let column = PostgresSQL.value(ofColumn: PostgresSQL.quote(attribute.name), type: attribute.storedType)
        let largest = try connection.query("SELECT max(\(column)) FROM \(table(entity))", binaryResults: true).first?.first
        guard case .integer(let largestKey)? = largest else { return RowComparison() }
        let asked = keyedRows.filter { $0.key <= largestKey }
        guard !asked.isEmpty else { return RowComparison() }
        // The stored rows are compared in place in libpq's binary answer (`ColumnPointers.equals`);
        // only a row that differs is read into values, and none where the batch carries every attribute.
        let keyColumn = entity.keyIndices[0] + 1
        let required = positions.map { !entity.attributes[$0].isOptional }
        let masks = RowComparison.notesDifferences(positions: positions, entity: entity)
        let sorted = asked.keys.sorted()
        // Keys that fill at least an eighth of their range (numbered records) are read in one
        // range scan of the key's index; scattered keys with one probe each.
        var queries: [(sql: String, arguments: [StoreValue])] = []
        if let lowest = sorted.first, let highest = sorted.last,
           case let span = highest.subtractingReportingOverflow(lowest), !span.overflow, span.partialValue < Int64(sorted.count) * 8 {
            queries = [("SELECT \(PostgresSQL.selectList(entity, typed: true)) FROM \(table(entity)) WHERE \(column) BETWEEN $1::bigint AND $2::bigint",
                        [.integer(lowest), .integer(highest)])]
        } else {
            let keys = sorted.map { StoreValue.integer($0) }
            var start = 0
            while start < keys.count {
                let chunk = keys[start..<min(start + 10_000, keys.count)]
                start += chunk.count
                queries.append(lookUp(entity, where: column, in: chunk, arrayType: "bigint"))
            }
        }
        var comparison = RowComparison()
        try columns.withPointers { pointers in
            for (sql, arguments) in queries {
                try connection.forEachBinaryRow(sql, arguments) { field in
                    guard case .integer(let primaryKey) = try field(0), case .integer(let key) = try field(keyColumn),
                          let row = asked[key] else { return }
                    var differing = AttributeMask.empty
                    for (c, position) in positions.enumerated() {
                        if !pointers[c].equals(try field(position + 1), row: row, required: required[c]) {
                            differing.insert(position)
                            if !masks { break }
                        }
                    }
                    if differing == .empty {
                        comparison.unchanged.append((row, primaryKey))
                    } else if masks {
                        comparison.differing[row] = (primaryKey, differing)
                    } else {
                        var values: [StoreValue] = []
                        values.reserveCapacity(entity.attributes.count)
                        for index in entity.attributes.indices { values.append(Self.value(try field(index + 1))) }
                        comparison.changed[row] = StoreRow(primaryKey: primaryKey, values: values)
                    }
                }
            }
        }
        return comparison
    }

    /// A field read in place, as a value.
    private static func value(_ field: StoreRowCursor.Field) -> StoreValue {
        switch field {
        case .null: .null
        case .integer(let int): .integer(int)
        case .real(let double): .real(double)
        case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        }
    }
}
