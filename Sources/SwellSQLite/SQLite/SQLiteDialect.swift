import SwellStoreCore

/// SQLite's dialect: `?` placeholders, 1/0, and the functions `SQLiteConnection`
/// registers (`swell_fold`, `swell_strop`, `swell_like`), which call the very
/// functions the in-memory evaluation uses.
package struct SQLiteDialect: PredicateStringSQLDialect {
    package init() {}
    package func quote(_ identifier: String) -> String { quoteIdentifier(identifier) }
    package func placeholder(_ position: Int, for value: StoreValue) -> String { "?" }
    package func constant(_ value: Bool) -> String { value ? "1" : "0" }
    package func falseIfNull(_ test: String) -> String { "COALESCE(\(test), 0)" }
    package func isDistinct(_ lhs: String, from rhs: String) -> String { "\(lhs) IS NOT \(rhs)" }
    /// `_pk`, or for a table whose rowid is the key, the key where `_pk` is NULL (`TableLayout.id`).
    package func objectID(ofRow alias: String, entity: EntityDescription) -> String {
        guard let key = TableLayout(entity).rowidKey else { return "\(alias).\"_pk\"" }
        return "coalesce(\(alias).\"_pk\", \(alias).\(key))"
    }
    package func folded(_ expression: String, _ options: PredicateStringOptions) -> String {
        "swell_fold(\(expression), \(options.rawValue))"
    }
    package func stringTest(_ operation: PredicateFunctions.StringOperation, column: String, operand: String,
                            _ options: PredicateStringOptions) -> String {
        "swell_strop(\(operation.rawValue), \(column), \(operand), \(options.rawValue))"
    }
    package func like(column: String, pattern: String, _ options: PredicateStringOptions) -> String {
        "swell_like(\(column), \(pattern), \(options.rawValue))"
    }
    package var primaryKeyColumn: String { "\"_pk\"" }
    package func joined(_ value: String, separator: String, orderedBy order: String?, from: String) -> String {
        "(SELECT group_concat(swell_v, \(sqlLiteral(separator))) FROM (SELECT \(value) AS swell_v FROM \(from) ORDER BY \(order ?? "swell_v")))"
    }
}
