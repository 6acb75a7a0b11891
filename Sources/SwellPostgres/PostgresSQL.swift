import SwellStoreCore

/// How the PostgreSQL store writes SQL for an entity: quoted names, each
/// attribute's column type (PostgreSQL store guarantees 5), and the expressions that turn
/// its columns into the store's values (`StoreValue`) and back.
///
/// The store's values are SQLite's: booleans 0/1, dates Unix seconds as a double,
/// json its text. PostgreSQL keeps them typed (`boolean`, `timestamptz`, `json`)
/// so psql and BI tools read them as what they are.
enum PostgresSQL {
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The column type of an attribute (a to-one's column: `bigint`, the destination's `_pk`).
    static func columnType(_ attribute: AttributeDescription) -> String {
        if attribute.isToOneColumn { return "bigint" }
        switch attribute.type {
        case .string: return "text"
        case .integer: return "bigint"
        case .double: return "double precision"
        case .boolean: return "boolean"
        case .date: return "timestamptz"
        case .json: return "json"
        }
    }

    /// The column's value as the store keeps it, for a SELECT list or a comparison.
    static func value(ofColumn column: String, type: AttributeType) -> String {
        switch type {
        case .date: "extract(epoch from \(column))::float8"
        case .boolean: "\(column)::int"
        case .json: "\(column)::text"
        case .string, .integer, .double: column
        }
    }

    /// A parameter placeholder for a value going into a column of `type` (parameters go as text).
    static func parameter(_ position: Int, type: AttributeType) -> String {
        switch type {
        case .date: "to_timestamp($\(position)::float8)"
        case .boolean: "($\(position)::int <> 0)"
        case .json: "$\(position)::json"
        case .string: "$\(position)::text"
        case .integer: "$\(position)::bigint"
        case .double: "$\(position)::float8"
        }
    }

    /// A value as a literal that reads the same as the value sent as a text parameter: an
    /// escape string (`E'…'`, backslashes and quotes escaped), whatever `standard_conforming_strings` is.
    static func literal(_ value: StoreValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let int): return "'\(int)'"
        case .real(let double): return "'\(double)'"
        case .text(let text):
            var literal = "E'"
            for character in text.unicodeScalars {
                if character == "\\" || character == "'" { literal.unicodeScalars.append(character) }
                literal.unicodeScalars.append(character)
            }
            return literal + "'"
        }
    }

    /// The SELECT list of an entity's rows: `_pk`, then every attribute as the store keeps it
    /// (a join-table to-many as its members' IDs joined by commas, as `JoinTable.encode` writes them).
    /// With `typed`, attribute columns are read as they are in the table (`timestamptz`,
    /// `boolean`, `json`) for a reader that converts them itself (the binary COPY decoder).
    static func selectList(_ entity: EntityDescription, table alias: String? = nil, typed: Bool = false) -> String {
        let owner = alias ?? quote(entity.name)
        var columns = ["\(owner).\"_pk\""]
        for attribute in entity.attributes {
            if let join = attribute.join {
                let table = quote(join.table), member = quote(join.relationship)
                let order = join.isOrdered ? "\(table).\"_order\"" : "\(table).\(member)"
                columns.append("(SELECT string_agg(\(table).\(member)::text, ',' ORDER BY \(order)) FROM \(table) WHERE \(table).\(quote(join.owner)) = \(owner).\"_pk\")")
            } else {
                let column = "\(owner).\(quote(attribute.name))"
                columns.append(typed ? column : value(ofColumn: column, type: attribute.isToOneColumn ? .integer : attribute.type))
            }
        }
        return columns.joined(separator: ", ")
    }
}

extension AttributeDescription {
    /// A to-one relationship's column (its values are the destination's IDs).
    var isToOneColumn: Bool { destination != nil }
    /// The type its values have in the store.
    var storedType: AttributeType { isToOneColumn ? .integer : type }
}

/// PostgreSQL's spelling of predicates: numbered placeholders, TRUE/FALSE, typed
/// columns read as the store's values. It writes no string test (`[c]`/`[d]`,
/// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`): PostgreSQL cannot answer them exactly
/// as Swell's other stores do on every server (`lower()` folds by the server's locale —
/// only ASCII under `C` —, diacritics need the optional `unaccent` extension, `LIKE`'s `_`
/// matches a code point where `?` matches a `Character`), so the store filters
/// predicates with string tests in memory, with the very functions SQLite's SQL calls
/// (`BoundPredicate.sql(ifNoStringTests:)`).
struct PostgresDialect: PredicateSQLDialect {
    /// Values written into the SQL as literals instead of `$n` placeholders (COPY takes no
    /// parameters); typed the same way, so the statement means the same.
    var inlinesValues = false

    func quote(_ identifier: String) -> String { PostgresSQL.quote(identifier) }
    /// Typed by the value, so a comparison is numeric or textual as in memory (`id >= 2.5`).
    func placeholder(_ position: Int, for value: StoreValue) -> String {
        let slot = inlinesValues ? PostgresSQL.literal(value) : "$\(position)"
        switch value {
        case .integer: return "\(slot)::bigint"
        case .real: return "\(slot)::float8"
        case .text: return "\(slot)::text"
        case .null: return inlinesValues ? "NULL" : slot
        }
    }
    func constant(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
    func falseIfNull(_ test: String) -> String { "COALESCE(\(test), FALSE)" }
    func isDistinct(_ lhs: String, from rhs: String) -> String { "\(lhs) IS DISTINCT FROM \(rhs)" }
    var primaryKeyColumn: String { "\"_pk\"" }
    func value(ofColumn column: String, type: AttributeType) -> String { PostgresSQL.value(ofColumn: column, type: type) }
    func joined(_ value: String, separator: String, orderedBy order: String?, from: String) -> String {
        "(SELECT string_agg((\(value))::text, \(sqlLiteral(separator)) ORDER BY \(order ?? value)) FROM \(from))"
    }
}
