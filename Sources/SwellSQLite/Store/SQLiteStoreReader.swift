import CSQLite
import Foundation
import SwellStoreCore

/// Reads from one connection inside its read transaction.
package struct SQLiteStoreReader: StoreReader {
    package let connection: SQLiteConnection
    package let model: ManagedObjectModel
    package let path: String

    /// The object ID, then every attribute.
    package func columns(_ entity: EntityDescription, _ layout: TableLayout) -> String {
        "\(layout.id), \(entity.selectedValues)"
    }

    /// A sort index's SQL: an attribute's column, or beyond them a key path's expression.
    private func sortKey(_ query: StoreQuery, _ index: Int) throws -> String {
        let count = query.entity.attributes.count
        guard index >= count else { return quoteIdentifier(query.entity.attributes[index].name) }
        return try keyPaths.expression(KeyPathColumn(path: query.sortKeyPaths[index - count], separator: nil), from: query.entity)
    }

    private var keyPaths: KeyPathSQL<SQLiteDialect> { KeyPathSQL(entities: model.entitiesByName, dialect: SQLiteDialect()) }

    private func whereClause(_ query: StoreQuery) -> (String, [StoreValue]) {
        guard let predicate = query.predicate else { return ("", []) }
        let (clause, arguments) = predicate.sql(SQLiteDialect())
        return (" WHERE (\(clause))", arguments)
    }

    package func rows(_ query: StoreQuery) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try forEachRow(query) { rows.append($0) }
        return rows
    }

    package func owners(in join: JoinTable, linking member: Int64) throws -> [Int64] {
        let owner = quoteIdentifier(join.owner)
        let sql = "SELECT \(owner) FROM \(quoteIdentifier(join.table)) WHERE \(quoteIdentifier(join.relationship)) = ? ORDER BY \(owner)"
        return try wrap {
            try connection.query(sql, [.integer(member)]).compactMap { row -> Int64? in
                if case .integer(let id)? = row.first { return id }
                return nil
            }
        }
    }

    package func metadata(forKey key: String) throws -> String? {
        try wrap {
            let exists = try connection.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'swell_state'")
            guard exists.first?.first == .integer(1) else { return nil }
            if case .text(let value)? = try connection.query("SELECT value FROM swell_state WHERE key = ?", [.text(key)]).first?.first {
                return value
            }
            return nil
        }
    }

    package func forEachRow(_ query: StoreQuery, _ body: (StoreRow) throws -> Void) throws {
        let count = query.entity.attributes.count
        try forEachRowCursor(query) { cursor in
            var values: [StoreValue] = []
            values.reserveCapacity(count)
            for index in 0..<count { values.append(cursor.value(index)) }
            try body(StoreRow(primaryKey: cursor.primaryKey, values: values))
        }
    }

    package func forEachRowCursor(_ query: StoreQuery, _ body: (StoreRowCursor) throws -> Void) throws {
        let entity = query.entity
        let layout = TableLayout(entity)
        var (sql, arguments) = whereClause(query)
        let extras = try query.extraColumns.map { ", \(try keyPaths.expression($0, from: entity))" }.joined()
        sql = "SELECT \(columns(entity, layout))\(extras) FROM \(layout.table)" + sql
        if !query.anyOrder || !query.sort.isEmpty || query.limit != nil || query.offset > 0 {
            var order = try query.sort.map { "\(try sortKey(query, $0.attribute)) \($0.ascending ? "ASC" : "DESC")" }
            order.append("\(layout.tieBreak) ASC")
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if let limit = query.limit {
            sql += " LIMIT ? OFFSET ?"
            arguments += [.integer(Int64(limit)), .integer(Int64(query.offset))]
        } else if query.offset > 0 {
            sql += " LIMIT -1 OFFSET ?"
            arguments.append(.integer(Int64(query.offset)))
        }
        return try wrap {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(arguments)
            while try statement.step() {
                try body(StoreRowCursor(SQLiteRow(statement: statement.handle)))
            }
        }
    }

    package func count(_ query: StoreQuery) throws -> Int {
        let (clause, arguments) = whereClause(query)
        let sql = "SELECT count(*) FROM \(quoteIdentifier(query.entity.name))" + clause
        return try wrap {
            if case .integer(let count)? = try connection.query(sql, arguments).first?.first { return Int(count) }
            return 0
        }
    }

    /// A JSON array of keys, for `IN (SELECT value FROM json_each(?))`: one statement for any number of keys.
    package func keyList(_ keys: [Int64]) -> StoreValue {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.count * 8 + 2)
        for (n, key) in keys.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: String(key).utf8)    // a small string: no allocation
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    package func rows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        guard !primaryKeys.isEmpty else { return result }
        let single = primaryKeys.count == 1
        let layout = TableLayout(entity)
        let condition = single ? layout.idEquals(parameter: 1) : layout.idIn(jsonParameter: 1)
        let sql = "SELECT \(columns(entity, layout)) FROM \(layout.table) WHERE \(condition)"
        try forEachRow(sql, single ? .integer(primaryKeys[0]) : keyList(primaryKeys), entity) { id, values in result[id] = values }
        return result
    }

    package func countMatching(primaryKeys: [Int64], query: StoreQuery) throws -> Int {
        guard !primaryKeys.isEmpty else { return 0 }
        var (clause, arguments) = whereClause(query)
        let layout = TableLayout(query.entity)
        let condition = layout.idIn(jsonParameter: arguments.count + 1)
        clause = clause.isEmpty ? " WHERE " + condition : clause + " AND " + condition
        arguments.append(keyList(primaryKeys))
        let sql = "SELECT count(*) FROM \(layout.table)" + clause
        return try wrap {
            if case .integer(let count)? = try connection.query(sql, arguments).first?.first { return Int(count) }
            return 0
        }
    }

    package func rows(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: StoreRow] {
        var result: [[StoreValue]: StoreRow] = [:]
        let query = keysQuery(keys, entity: entity)
        for key in query.oneByOne {
            if let row = try row(forKey: key, entity: entity) { result[key] = row }
        }
        guard let sql = query.sql else { return result }
        try forEachRow(sql, query.argument, entity) { id, values in
            result[Self.key(of: values, entity: entity)] = StoreRow(primaryKey: id, values: values)
        }
        return result
    }

    /// The one query for the rows of `keys` (`rows(forKeys:)`, `compareRows(forKeys:)`): a JSON
    /// array of the keys (each an array when the key has several attributes), joined through
    /// json_each, and the keys to look up one by one instead (json_each ends a string at a NUL
    /// character; an entity without a complete uniqueness constraint has no one query).
    package func keysQuery(_ keys: [[StoreValue]], entity: EntityDescription) -> (sql: String?, argument: StoreValue, oneByOne: [[StoreValue]]) {
        let indices = entity.keyIndices
        guard !indices.isEmpty, indices.count == entity.uniquenessConstraint.count else { return (nil, .null, keys) }
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(keys.count * 16)
        var batched = 0
        var oneByOne: [[StoreValue]] = []
        func append(_ value: StoreValue) {
            switch value {
            case .integer(let int): json.append(contentsOf: String(int).utf8)
            case .real(let double): json.append(contentsOf: (double.isFinite ? "\(double)" : "null").utf8)
            case .text(let text): Self.appendJSONString(text, to: &json)
            case .null: json.append(contentsOf: "null".utf8)
            }
        }
        for key in keys {
            if key.contains(where: { if case .text(let text) = $0 { text.utf8.contains(0) } else { false } }) {
                oneByOne.append(key)
                continue
            }
            if batched > 0 { json.append(UInt8(ascii: ",")) }
            batched += 1
            if indices.count == 1 {
                append(key.first ?? .null)
            } else {
                json.append(UInt8(ascii: "["))
                for (position, value) in key.enumerated() {
                    if position > 0 { json.append(UInt8(ascii: ",")) }
                    append(value)
                }
                json.append(UInt8(ascii: "]"))
            }
        }
        json.append(UInt8(ascii: "]"))
        guard batched > 0 else { return (nil, .null, oneByOne) }
        let layout = TableLayout(entity)
        let names = indices.map { quoteIdentifier(entity.attributes[$0].name) }
        let condition = indices.count == 1
            ? "\(names[0]) IN (SELECT value FROM json_each(?))"
            : "(\(names.joined(separator: ", "))) IN (SELECT \(indices.indices.map { "json_extract(value, '$[\($0)]')" }.joined(separator: ", ")) FROM json_each(?))"
        return ("SELECT \(columns(entity, layout)) FROM \(layout.table) WHERE \(condition)", .text(String(decoding: json, as: UTF8.self)), oneByOne)
    }

    /// A stored row's key as the batch's keys are made: a whole number stored in a double or
    /// date key attribute is that double.
    package static func key(of values: [StoreValue], entity: EntityDescription) -> [StoreValue] {
        entity.keyIndices.map { index -> StoreValue in
            let type = entity.attributes[index].type
            if type == .double || type == .date, case .integer(let int) = values[index] { return .real(Double(int)) }
            return values[index]
        }
    }

    package func rows(forIntegerKeys keys: [Int64], entity: EntityDescription) throws -> [Int64: StoreRow] {
        var result: [Int64: StoreRow] = [:]
        guard !keys.isEmpty, entity.uniquenessConstraint.count == 1, let column = entity.uniquenessConstraint.first,
              let index = entity.attributes.firstIndex(where: { $0.name == column }) else { return result }
        result.reserveCapacity(keys.count)
        let layout = TableLayout(entity)
        let sql = "SELECT \(columns(entity, layout)) FROM \(layout.table) WHERE \(quoteIdentifier(column)) IN (SELECT value FROM json_each(?))"
        try forEachRow(sql, keyList(keys), entity) { id, values in
            if case .integer(let key) = values[index] { result[key] = StoreRow(primaryKey: id, values: values) }
        }
        return result
    }

    package func rows(displacedIDs ids: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        let layout = TableLayout(entity)
        guard !ids.isEmpty, layout.rowidKey != nil else { return result }
        // Usually no ID is apart from its key: one probe of the index then answers for every ID.
        guard try wrap({ try !connection.query("SELECT 1 FROM \(layout.table) WHERE \"_pk\" IS NOT NULL LIMIT 1").isEmpty }) else { return result }
        let sql = "SELECT \"_pk\", \(entity.selectedValues) FROM \(layout.table) WHERE \"_pk\" IN (SELECT value FROM json_each(?))"
        try forEachRow(sql, keyList(ids), entity) { id, values in result[id] = values }
        return result
    }

    /// Runs `sql` (one parameter, `argument`), whose columns are an ID and then the entity's
    /// values in attribute order, and hands each row to `body`: the one reading loop of the
    /// look-ups by ID, by key and by displaced ID.
    private func forEachRow(_ sql: String, _ argument: StoreValue, _ entity: EntityDescription,
                            _ body: (Int64, [StoreValue]) -> Void) throws {
        try wrap {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(argument, at: 1)
            let count = Int32(entity.attributes.count)
            while try statement.step() {
                var values: [StoreValue] = []
                values.reserveCapacity(Int(count))
                for column in 0..<count { values.append(statement.column(column + 1)) }
                body(statement.int64(0), values)
            }
        }
    }

    /// Appends `text` as a JSON string (for `json_each`): `"` and `\` escaped, control characters as `\u00XX`,
    /// every other byte of its UTF-8 as it is.
    package static func appendJSONString(_ text: String, to json: inout [UInt8]) {
        let hexDigits = ("0123456789abcdef" as StaticString).utf8Start
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                         hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]])
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }

    package func row(forKey key: [StoreValue], entity: EntityDescription) throws -> StoreRow? {
        guard !entity.uniquenessConstraint.isEmpty else { return nil }
        let condition = entity.uniquenessConstraint.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
        let layout = TableLayout(entity)
        let sql = "SELECT \(columns(entity, layout)) FROM \(layout.table) WHERE \(condition)"
        return try wrap {
            guard let row = try connection.query(sql, key).first, case .integer(let pk)? = row.first else { return nil }
            return StoreRow(primaryKey: pk, values: Array(row.dropFirst()))
        }
    }

    /// SQLite's errors as store errors; anything else (a caller's cursor body throwing its own
    /// error, as an export's CSV writer does) passes through as thrown.
    package func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        }
    }
}

/// A SQLite statement on a row, read in place: attribute `i` is column `i + 1` (column 0 is `_pk`).
package struct SQLiteRow: StoreRowSource {
    package let statement: OpaquePointer

    package var primaryKey: Int64 { sqlite3_column_int64(statement, 0) }

    /// One column call per value (`sqlite3_column_value`), where asking the type and then the
    /// value would make two or three.
    package func field(_ attribute: Int) -> StoreRowCursor.Field {
        guard let value = sqlite3_column_value(statement, Int32(attribute + 1)) else { return .null }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_NULL: return .null
        default:
            let text = sqlite3_value_text(value)
            return .text(UnsafeBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_value_bytes(value))))
        }
    }
}
