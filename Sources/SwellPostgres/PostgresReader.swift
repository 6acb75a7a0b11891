import Foundation
import SwellStoreCore

/// Reads from one connection inside its repeatable-read transaction (one snapshot).
///
/// A predicate compiles to PostgreSQL's SQL (`PostgresDialect`) unless it has
/// string tests whose folding only Swell's functions define (`[c]`, `[d]`,
/// `BEGINSWITH`…, `LIKE`): those rows are filtered in memory, key paths read
/// through this reader, so the answer is the one SQLite and memory give.
struct PostgresReader: StoreReader, PredicateResolver {
    let connection: PostgresConnection
    let model: ManagedObjectModel
    /// A look-up of an in-memory predicate's key path that failed (the resolver cannot
    /// throw): the read throws it once the row is evaluated, never answers without it.
    private let lookUpFailure = LookUpFailure()

    private final class LookUpFailure {
        var error: (any Error)?

        func check() throws {
            if let error { throw error }
        }
    }

    func table(_ entity: EntityDescription) -> String { PostgresSQL.quote(entity.name) }

    /// `WHERE …` for the query's predicate, or nil when it must be filtered in memory;
    /// with `inlined`, its values are literals in the SQL (no arguments).
    private func whereClause(_ query: StoreQuery, inlined: Bool = false) -> (clause: String, arguments: [StoreValue])? {
        guard let predicate = query.predicate else { return ("", []) }
        guard let (clause, arguments) = predicate.sql(ifNoStringTests: PostgresDialect(inlinesValues: inlined)) else { return nil }
        return (" WHERE (\(clause))", inlined ? [] : arguments)
    }

    private func row(_ values: [StoreValue]) -> StoreRow? {
        guard case .integer(let primaryKey)? = values.first else { return nil }
        return StoreRow(primaryKey: primaryKey, values: Array(values.dropFirst()))
    }

    private var keyPaths: KeyPathSQL<PostgresDialect> { KeyPathSQL(entities: model.entitiesByName, dialect: PostgresDialect()) }

    /// The SELECT of the query's rows in order (values: `_pk`, the attributes, then the query's
    /// key-path columns); its predicate in SQL unless it must be filtered in memory (`filtered`
    /// false: offset and limit are then the caller's to apply to the rows that pass).
    /// With `typed`, attribute columns are selected as they are (for a binary read, whose decoder
    /// converts them: cheaper on the server); with `inlined`, the predicate's values are literals.
    private func select(_ query: StoreQuery, inlined: Bool = false, typed: Bool = false) throws -> (sql: String, arguments: [StoreValue], filtered: Bool) {
        let entity = query.entity
        let filter = whereClause(query, inlined: inlined)
        let extras = try query.extraColumns.map { ", \(try keyPaths.expression($0, from: entity))" }.joined()
        var sql = "SELECT \(PostgresSQL.selectList(entity, typed: typed))\(extras) FROM \(table(entity))" + (filter?.clause ?? "")
        let count = entity.attributes.count
        var order: [String] = []
        var sorted = Set<Int>()
        for sort in query.sort {
            var key: String
            var required = false
            if sort.attribute < count {
                let attribute = entity.attributes[sort.attribute]
                key = PostgresSQL.value(ofColumn: "\(table(entity)).\(PostgresSQL.quote(attribute.name))", type: attribute.storedType)
                if attribute.storedType == .string || attribute.storedType == .json { key += " COLLATE \"C\"" }
                // A key attribute: required, and checked at every save (a migration that added
                // a plain required attribute may have left NULLs in older rows; a key cannot).
                required = !attribute.isOptional && entity.keyIndices.contains(sort.attribute)
                sorted.insert(sort.attribute)
            } else {
                key = try keyPaths.expression(KeyPathColumn(path: query.sortKeyPaths[sort.attribute - count], separator: nil), from: entity)
            }
            // SQLite's order: nil first ascending, last descending. A required key has no nil:
            // PostgreSQL's own default then (as its unique index is built), so the index serves the order.
            order.append(key + (sort.ascending ? (required ? " ASC" : " ASC NULLS FIRST") : (required ? " DESC" : " DESC NULLS LAST")))
        }
        // Ties: none once every attribute of a required key is sorted (the order is total, and the
        // key's unique index can give it); else as the SQLite store breaks them (by the key where
        // it is the table's rowid), then by ID.
        let keyIndices = entity.keyIndices
        let total = !keyIndices.isEmpty && keyIndices.allSatisfy { sorted.contains($0) && !entity.attributes[$0].isOptional }
        if !total {
            if let keyIndex = entity.rowidKeyIndex { order.append("\(table(entity)).\(PostgresSQL.quote(entity.attributes[keyIndex].name)) ASC") }
            order.append("\(table(entity)).\"_pk\" ASC")
        }
        if !query.anyOrder || !query.sort.isEmpty || query.limit != nil || query.offset > 0 {
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if filter != nil {
            if let limit = query.limit { sql += " LIMIT \(limit)" }
            if query.offset > 0 { sql += " OFFSET \(query.offset)" }
        }
        return (sql, filter?.arguments ?? [], filter != nil)
    }

    /// Calls `body` with each matching row in order (values: the attributes, then the query's
    /// key-path columns), fetched through a cursor `fetchSize` rows at a time: constant memory.
    private func forEachMatching(_ query: StoreQuery, _ body: (StoreRow) throws -> Void) throws {
        // Read in binary (no number or date text to parse) unless key-path columns, whose types vary, are read too.
        let binary = query.extraColumns.isEmpty
        let (sql, arguments, filtered) = try select(query, typed: binary)
        // Filtered in memory: offset and limit count the rows that pass.
        let predicate = filtered ? nil : query.predicate
        var skip = predicate == nil ? 0 : query.offset
        var left = predicate == nil ? Int.max : (query.limit ?? Int.max)
        guard left > 0 else { return }
        // A name of its own: a body may read through another cursor on this connection meanwhile.
        let cursor = PostgresSQL.quote("swell_rows_\(UUID().uuidString.prefix(8))")
        try connection.query("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", arguments)
        var finished = false
        // Ending the read transaction closes the cursor anyway: a failed CLOSE loses nothing.
        defer { _ = try? connection.query("CLOSE \(cursor)") }
        while !finished {
            let batch = try connection.query("FETCH \(Self.fetchSize) FROM \(cursor)", binaryResults: binary)
            finished = batch.count < Self.fetchSize
            for values in batch {
                guard let row = row(values) else { continue }
                if let predicate {
                    let passes = predicate.evaluate(row.values, primaryKey: row.primaryKey, resolver: self)
                    try lookUpFailure.check()
                    guard passes else { continue }
                    if skip > 0 { skip -= 1; continue }
                    left -= 1
                }
                try body(row)
                if left == 0 { return }
            }
        }
    }

    /// Streams the query's rows with `COPY (SELECT …) TO STDOUT (FORMAT binary)`, each row's
    /// values read in place from the stream (no `StoreValue`s, no `String`s): the exports' path.
    /// Returns false, having read nothing, when the query cannot go that way (a predicate filtered
    /// in memory, or a column of a type the binary decoder does not read).
    private func copyRows(_ query: StoreQuery, _ body: (StoreRowCursor) throws -> Void) throws -> Bool {
        let (sql, _, filtered) = try select(query, inlined: true, typed: true)
        guard filtered else { return false }
        let kinds = try connection.columnTypes(of: sql).map(PostgresBinaryCopyDecoder.kind(ofType:))
        guard kinds.first == .int8, !kinds.contains(nil) else { return false }
        var decoder = PostgresBinaryCopyDecoder(kinds: kinds.compactMap { $0 })
        try connection.copyOut("COPY (\(sql)) TO STDOUT (FORMAT binary)") { chunk in
            try decoder.feed(chunk) { fields in
                guard case .integer(let primaryKey) = fields[0] else { return }
                try body(StoreRowCursor(primaryKey: primaryKey, fields: UnsafeBufferPointer(rebasing: fields[1...])))
            }
        }
        try decoder.finish()
        return true
    }

    /// Rows a cursor fetch brings at once.
    static let fetchSize = 5000

    private func matching(_ query: StoreQuery) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try forEachMatching(query) { rows.append($0) }
        return rows
    }

    func rows(_ query: StoreQuery) throws -> [StoreRow] {
        let count = query.entity.attributes.count
        return try matching(query).map { StoreRow(primaryKey: $0.primaryKey, values: Array($0.values.prefix(count))) }
    }

    func forEachRow(_ query: StoreQuery, _ body: (StoreRow) throws -> Void) throws {
        let count = query.entity.attributes.count
        try forEachMatching(query) { try body(StoreRow(primaryKey: $0.primaryKey, values: Array($0.values.prefix(count)))) }
    }

    func forEachRowCursor(_ query: StoreQuery, _ body: (StoreRowCursor) throws -> Void) throws {
        if try copyRows(query, body) { return }
        try forEachMatching(query) { try body(StoreRowCursor(primaryKey: $0.primaryKey, values: $0.values)) }
    }

    func metadata(forKey key: String) throws -> String? {
        if case .text(let value)? = try connection.query("SELECT value FROM swell_state WHERE key = $1::text", [.text(key)]).first?.first {
            return value
        }
        return nil
    }

    func count(_ query: StoreQuery) throws -> Int {
        if let filter = whereClause(query) {
            if case .integer(let count)? = try connection.query("SELECT count(*) FROM \(table(query.entity))" + filter.clause, filter.arguments).first?.first {
                return Int(count)
            }
            return 0
        }
        var all = query
        all.limit = nil
        all.offset = 0
        all.sort = []
        return try matching(all).count
    }

    /// Rows of `entity` whose `column` is among `values`: integers or texts as one array
    /// parameter (10,000 a statement), other values in lists of 500.
    private func rows(_ entity: EntityDescription, where column: String, in values: [StoreValue]) throws -> [StoreRow] {
        var result: [StoreRow] = []
        if let type = Self.arrayType(values) {
            var start = 0
            while start < values.count {
                let chunk = values[start..<min(start + 10_000, values.count)]
                let (sql, arguments) = lookUp(entity, where: column, in: chunk, arrayType: type)
                result += try connection.query(sql, arguments, binaryResults: true).compactMap(row)
                start += chunk.count
            }
            return result
        }
        var start = 0
        while start < values.count {
            let chunk = Array(values[start..<min(start + 500, values.count)])
            let placeholders = chunk.indices.map { PostgresDialect().placeholder($0 + 1, for: chunk[$0]) }.joined(separator: ", ")
            let sql = "SELECT \(PostgresSQL.selectList(entity, typed: true)) FROM \(table(entity)) WHERE \(column) IN (\(placeholders))"
            result += try connection.query(sql, chunk, binaryResults: true).compactMap(row)
            start += chunk.count
        }
        return result
    }

    /// The SELECT of the rows of `entity` whose `column` is among `values` (all integers or all
    /// texts, `arrayType`), as one array parameter: `_pk`, then the attributes as stored.
    func lookUp(_ entity: EntityDescription, where column: String, in values: ArraySlice<StoreValue>,
                        arrayType type: String) -> (sql: String, arguments: [StoreValue]) {
        // One probe per value (a lateral subquery on the column's index), not `column =
        // ANY($1)`: before its first ANALYZE a growing table's planner may scan it whole
        // per look-up (measured: 12 ms a look-up, parallel scans, at 1M rows).
        var sql = """
            SELECT swell_found.* FROM unnest($1::\(type)[]) AS swell_wanted(value),
            LATERAL (SELECT \(PostgresSQL.selectList(entity, typed: true)) FROM \(table(entity)) WHERE \(column) = swell_wanted.value) AS swell_found
            """
        var arguments: [StoreValue] = [.text(Self.arrayLiteral(values))]
        if let range = Self.integerRange(values) {
            // Integers: first one probe for any row in their range (evaluated once, before
            // the others); a run of new keys, as a first import brings, then costs one probe.
            sql += " WHERE EXISTS (SELECT 1 FROM \(table(entity)) WHERE \(column) BETWEEN $2::bigint AND $3::bigint)"
            arguments += [.integer(range.lowerBound), .integer(range.upperBound)]
        }
        return (sql, arguments)
    }

    /// The smallest and largest of `values` when they are all integers, else nil.
    private static func integerRange(_ values: ArraySlice<StoreValue>) -> ClosedRange<Int64>? {
        var lowest = Int64.max, highest = Int64.min
        for value in values {
            guard case .integer(let int) = value else { return nil }
            lowest = min(lowest, int)
            highest = max(highest, int)
        }
        return lowest <= highest ? lowest...highest : nil
    }

    /// The array type for `values` when they are all integers or all texts, else nil.
    private static func arrayType(_ values: [StoreValue]) -> String? {
        if values.allSatisfy({ if case .integer = $0 { true } else { false } }) { return "bigint" }
        if values.allSatisfy({ if case .text = $0 { true } else { false } }) { return "text" }
        return nil
    }

    /// A PostgreSQL array literal: `{1,2}`, or `{"a","b\\"c"}` (every text quoted, `\\` and `"` escaped).
    private static func arrayLiteral(_ values: ArraySlice<StoreValue>) -> String {
        var literal = "{"
        var first = true
        for value in values {
            if !first { literal += "," }
            first = false
            switch value {
            case .integer(let int): literal += String(int)
            case .text(let text):
                literal += "\""
                for character in text.unicodeScalars {
                    if character == "\\" || character == "\"" { literal += "\\" }
                    literal.unicodeScalars.append(character)
                }
                literal += "\""
            case .real(let double): literal += "\(double)"
            case .null: literal += "NULL"
            }
        }
        return literal + "}"
    }

    func rows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        for row in try rows(entity, where: "\"_pk\"", in: primaryKeys.map(StoreValue.integer)) { result[row.primaryKey] = row.values }
        return result
    }

    func countMatching(primaryKeys: [Int64], query: StoreQuery) throws -> Int {
        let rows = try rows(primaryKeys: Array(Set(primaryKeys)), entity: query.entity)
        guard let predicate = query.predicate else { return rows.count }
        let count = rows.filter { predicate.evaluate($0.value, primaryKey: $0.key, resolver: self) }.count
        try lookUpFailure.check()
        return count
    }

    func rows(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: StoreRow] {
        var result: [[StoreValue]: StoreRow] = [:]
        let indices = entity.keyIndices
        if indices.count == 1 {
            let column = PostgresSQL.value(ofColumn: PostgresSQL.quote(entity.attributes[indices[0]].name), type: entity.attributes[indices[0]].storedType)
            let wanted = Set(keys)
            for row in try rows(entity, where: column, in: keys.compactMap(\.first)) {
                let key = indices.map { row.values[$0] }
                if wanted.contains(key) { result[key] = row }
            }
            return result
        }
        // Several key attributes, each all integers or all texts: one probe per key through the
        // arrays of each attribute's values (unnest in step), in chunks; otherwise one query a key.
        let parts = indices.indices.map { part in keys.map { $0[part] } }
        let types = parts.compactMap(Self.arrayType)
        guard !keys.isEmpty, indices.count > 1, types.count == indices.count else {
            for key in keys { if let row = try row(forKey: key, entity: entity) { result[key] = row } }
            return result
        }
        let wanted = Set(keys)
        let names = indices.indices.map { "swell_k\($0)" }
        let matches = indices.enumerated().map { part, index in
            let attribute = entity.attributes[index]
            return "\(PostgresSQL.value(ofColumn: PostgresSQL.quote(attribute.name), type: attribute.storedType)) = swell_wanted.\(names[part])"
        }.joined(separator: " AND ")
        let arrays = types.enumerated().map { "$\($0.offset + 1)::\($0.element)[]" }.joined(separator: ", ")
        let sql = """
            SELECT swell_found.* FROM unnest(\(arrays)) AS swell_wanted(\(names.joined(separator: ", "))),
            LATERAL (SELECT \(PostgresSQL.selectList(entity, typed: true)) FROM \(table(entity)) WHERE \(matches)) AS swell_found
            """
        var start = 0
        while start < keys.count {
            let range = start..<min(start + 10_000, keys.count)
            let arguments = parts.map { StoreValue.text(Self.arrayLiteral($0[range])) }
            for row in try connection.query(sql, arguments, binaryResults: true).compactMap(row) {
                let key = indices.map { row.values[$0] }
                if wanted.contains(key) { result[key] = row }
            }
            start = range.upperBound
        }
        return result
    }

    func row(forKey key: [StoreValue], entity: EntityDescription) throws -> StoreRow? {
        let dialect = PostgresDialect()
        let condition = entity.keyIndices.enumerated().map { offset, index in
            let attribute = entity.attributes[index]
            return "\(PostgresSQL.value(ofColumn: PostgresSQL.quote(attribute.name), type: attribute.storedType)) = \(dialect.placeholder(offset + 1, for: key[offset]))"
        }.joined(separator: " AND ")
        return try connection.query("SELECT \(PostgresSQL.selectList(entity, typed: true)) FROM \(table(entity)) WHERE \(condition)", key,
                                    binaryResults: true).compactMap(row).first
    }

    func rows(displacedIDs ids: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        guard let keyIndex = entity.rowidKeyIndex else { return [:] }
        return try rows(primaryKeys: ids, entity: entity).filter { $0.value[keyIndex] != .integer($0.key) }
    }

    func owners(in join: JoinTable, linking member: Int64) throws -> [Int64] {
        let owner = PostgresSQL.quote(join.owner)
        let sql = "SELECT \(owner) FROM \(PostgresSQL.quote(join.table)) WHERE \(PostgresSQL.quote(join.relationship)) = $1::bigint ORDER BY \(owner)"
        return try connection.query(sql, [.integer(member)]).compactMap { row in
            if case .integer(let id)? = row.first { return id }
            return nil
        }
    }

    // MARK: PredicateResolver (key paths of predicates filtered in memory)

    func row(_ entity: EntityDescription, _ primaryKey: Int64) -> [StoreValue]? {
        recording { try rows(primaryKeys: [primaryKey], entity: entity)[primaryKey] } ?? nil
    }

    func owners(in join: JoinTable, column index: Int, listing member: Int64) -> [Int64] {
        recording { try owners(in: join, linking: member) } ?? []
    }

    func objects(of destination: EntityDescription, pointingAt primaryKey: Int64, through column: String) -> [(primaryKey: Int64, values: [StoreValue])] {
        let found = recording { try rows(destination, where: PostgresSQL.quote(column), in: [.integer(primaryKey)]) } ?? []
        return found.sorted { $0.primaryKey < $1.primaryKey }.map { ($0.primaryKey, $0.values) }
    }

    /// `body`'s result, or nil with its error kept for `lookUpFailure.check()`.
    private func recording<T>(_ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            if lookUpFailure.error == nil { lookUpFailure.error = error }
            return nil
        }
    }
}
