/// What differs between stores' SQL when a predicate is compiled: placeholders and
/// constants (and, for a `PredicateStringSQLDialect`, the string tests). Everything
/// else — the tree's shape, two-valued logic, key paths as correlated subqueries — is
/// `PredicateSQLCompiler`'s, the same for every store. A store that runs SQL brings its dialect.
package protocol PredicateSQLDialect {
    /// An identifier (table, column, alias) quoted.
    func quote(_ identifier: String) -> String
    /// The placeholder of argument `position` (from 1, in the order arguments are added), whose value is `value`.
    func placeholder(_ position: Int, for value: StoreValue) -> String
    /// A boolean constant.
    func constant(_ value: Bool) -> String
    /// A boolean expression that is unknown (NULL) as false.
    func falseIfNull(_ test: String) -> String
    /// Whether `lhs` is not `rhs`, a NULL being distinct from every value and not from NULL:
    /// never unknown (`!=` with NSPredicate's nil).
    func isDistinct(_ lhs: String, from rhs: String) -> String
    /// The object ID of the row named `alias` of `entity`'s table, as an SQL expression.
    func objectID(ofRow alias: String, entity: EntityDescription) -> String
    /// A row's object ID column.
    var primaryKeyColumn: String { get }
    /// A column's value as predicates compare it (the store's values: `StoreValue`), from its quoted name.
    func value(ofColumn column: String, type: AttributeType) -> String
    /// A to-many key path's values joined by `separator` into one text: `value` read `from` (a
    /// FROM … WHERE … clause), in `orderedBy` order (nil: by the values themselves).
    func joined(_ value: String, separator: String, orderedBy order: String?, from: String) -> String
}

/// A dialect that also writes the string tests — `[c]`/`[d]` folding, `BEGINSWITH`,
/// `ENDSWITH`, `CONTAINS`, `LIKE` with `*` and `?` — so that SQL answers exactly as the
/// in-memory evaluation (`PredicateFunctions`) does. A dialect that cannot promise that
/// (PostgreSQL: `lower()` follows the server's locale, `unaccent` is an extension that may
/// be missing, `_` matches a code point where `?` matches a `Character`) is only a
/// `PredicateSQLDialect`: its store filters predicates with string tests in memory
/// (`BoundPredicate.sql(ifNoStringTests:)`), and no string test is ever spelled wrong.
package protocol PredicateStringSQLDialect: PredicateSQLDialect {
    /// `expression` folded for the options (case and/or diacritics removed), NULL unless text.
    func folded(_ expression: String, _ options: PredicateStringOptions) -> String
    /// `BEGINSWITH`/`ENDSWITH`/`CONTAINS` of `column` with the text at `operand`; NULL when the column is not text.
    func stringTest(_ operation: PredicateFunctions.StringOperation, column: String, operand: String, _ options: PredicateStringOptions) -> String
    /// `LIKE` (with `*` and `?` wildcards) of `column` with the pattern at `pattern`.
    func like(column: String, pattern: String, _ options: PredicateStringOptions) -> String
}

extension PredicateSQLDialect {
    /// A store whose columns hold `StoreValue`s as they are (SQLite) compares the column itself.
    package func value(ofColumn column: String, type: AttributeType) -> String { column }
    /// The row's primary key column, for a store that keeps every object's ID there.
    package func objectID(ofRow alias: String, entity: EntityDescription) -> String { "\(alias).\(primaryKeyColumn)" }
}

/// Quotes an identifier for SQL: `"name"`, with inner quotes doubled.
package func quoteIdentifier(_ name: String) -> String {
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// A string literal in SQL (quotes doubled).
package func sqlLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

/// Compiles a bound predicate's tree to a boolean SQL expression in a dialect:
/// a visitor over `BoundPredicate.Node`, collecting the arguments in order.
///
/// Every test yields true or false, never unknown (see `BoundPredicate`), so
/// `NOT`, `AND` and `OR` mean the same in SQL as in memory.
package struct PredicateSQLCompiler<Dialect: PredicateSQLDialect> {
    package let dialect: Dialect
    private(set) var arguments: [StoreValue] = []

    package init(dialect: Dialect) {
        self.dialect = dialect
    }

    /// SQL for a row of the table or alias `outer`; `depth` numbers subqueries' aliases.
    /// `entity` is the one whose row `outer` is.
    package mutating func compile(_ node: BoundPredicate.Node, entity: EntityDescription, outer: String, depth: Int = 0) -> String {
        switch node {
        case .constant(let value): return dialect.constant(value)
        case .test(let test): return compile(test, entity: entity)
        // Every node's SQL is parenthesised or a function call, so NOT needs no parentheses of its own.
        case .not(let operand): return "NOT \(compile(operand, entity: entity, outer: outer, depth: depth))"
        case .and(let terms): return Self.join(terms.map { compile($0, entity: entity, outer: outer, depth: depth) }, by: "AND")
        case .or(let terms): return Self.join(terms.map { compile($0, entity: entity, outer: outer, depth: depth) }, by: "OR")
        case .path(let path): return compile(path, outer: outer, depth: depth)
        case .identity(let identity):
            guard !identity.primaryKeys.isEmpty else { return dialect.constant(identity.negated) }
            let id = dialect.objectID(ofRow: outer, entity: entity)
            let keys = identity.primaryKeys.map { argument(.integer($0)) }
            let test = keys.count == 1 ? "(\(id) = \(keys[0]))" : "(\(id) IN (\(keys.joined(separator: ", "))))"
            return identity.negated ? "NOT \(test)" : test
        }
    }

    /// The dialect's string tests. Only reached for a dialect that has them: `BoundPredicate.sql`
    /// compiles a predicate with string tests for no other (a programming error otherwise).
    private var strings: any PredicateStringSQLDialect {
        guard let strings = dialect as? any PredicateStringSQLDialect else {
            preconditionFailure("a predicate with string tests compiled for \(type(of: dialect)), which cannot write them")
        }
        return strings
    }

    private mutating func argument(_ value: StoreValue) -> String {
        arguments.append(value)
        return dialect.placeholder(arguments.count, for: value)
    }

    private mutating func compile(_ test: BoundPredicate.Test, entity: EntityDescription) -> String {
        let type = test.column < entity.attributes.count ? entity.attributes[test.column].type : .string
        let column = dialect.value(ofColumn: dialect.quote(test.attribute), type: type)
        /// `test` on the (folded) column, false when the column is null.
        func guarded(_ options: PredicateStringOptions, _ test: (String) -> String) -> String {
            if options.isEmpty { return "(\(column) IS NOT NULL AND \(test(column)))" }
            return dialect.falseIfNull(test(strings.folded(column, options)))
        }
        switch test.kind {
        case .isNull(let wantsNull):
            return wantsNull ? "(\(column) IS NULL)" : "(\(column) IS NOT NULL)"
        case .compare(let ordering, let operand, let options):
            let placeholder = argument(operand)
            return guarded(options) { "\($0) \(ordering.sql) \(placeholder)" }
        case .distinct(let operand, let options):
            // Only here does a null column change the answer of a comparison with a value, so
            // only here the null-safe form (`=`, `<`… stay plain, and their indexes serve them).
            let placeholder = argument(operand)
            return "(\(dialect.isDistinct(options.isEmpty ? column : strings.folded(column, options), from: placeholder)))"
        case .never:
            return dialect.constant(false)
        case .oneOf(let values, let includesNull, let options):
            let placeholders = values.map { argument($0) }.joined(separator: ", ")
            let inList = values.isEmpty ? dialect.constant(false) : guarded(options) { "\($0) IN (\(placeholders))" }
            return includesNull ? "(\(column) IS NULL OR \(inList))" : inList
        case .between(let low, let high, let options):
            let (lowPlaceholder, highPlaceholder) = (argument(low), argument(high))
            return guarded(options) { "\($0) BETWEEN \(lowPlaceholder) AND \(highPlaceholder)" }
        case .string(let operation, let operand, let options):
            return dialect.falseIfNull(strings.stringTest(operation, column: column, operand: argument(.text(operand)), options))
        case .like(let pattern, let options):
            return dialect.falseIfNull(strings.like(column: column, pattern: argument(.text(pattern)), options))
        }
    }

    /// A key path: a correlated subquery on the destination's table.
    private mutating func compile(_ path: PathNode, outer: String, depth: Int) -> String {
        let alias = dialect.quote("swell_p\(depth + 1)")
        let table = dialect.quote(path.link.destination.name)
        let from = "FROM \(table) AS \(alias) WHERE \(linkCondition(path.link, alias: alias, outer: outer))"
        let inner = path.inner.map { compile($0, entity: path.link.destination, outer: alias, depth: depth + 1) } ?? dialect.constant(true)
        switch path.quantifier {
        // No destination: the inner test on a nil object, worked out when the predicate was bound.
        case .one where path.whenMissing: return "(NOT EXISTS (SELECT 1 \(from)) OR EXISTS (SELECT 1 \(from) AND \(inner)))"
        case .one, .any: return "EXISTS (SELECT 1 \(from) AND \(inner))"
        case .all: return "NOT EXISTS (SELECT 1 \(from) AND NOT \(inner))"
        case .none: return "NOT EXISTS (SELECT 1 \(from) AND \(inner))"
        case .count(let ordering, let number):
            return "((SELECT count(*) \(from)) \(ordering.sql) \(argument(.integer(number))))"
        }
    }

    /// The condition: row `alias` of the link's destination is a destination of row `outer`
    /// (Store guarantees 35: to-ones as columns, to-manys through the inverse column or a join table).
    private func linkCondition(_ link: PathLink, alias: String, outer: String) -> String {
        let pk = dialect.primaryKeyColumn
        switch link.kind {
        case .toOne(let column, _):
            return "\(alias).\(pk) = \(outer).\(dialect.quote(column))"
        case .inverseToOne(let column):
            return "\(alias).\(dialect.quote(column)) = \(outer).\(pk)"
        case .joinOwner(let join, _):
            let table = dialect.quote(join.table)
            return "\(alias).\(pk) IN (SELECT \(table).\(dialect.quote(join.relationship)) FROM \(table) WHERE \(table).\(dialect.quote(join.owner)) = \(outer).\(pk))"
        case .joinInverse(let join, _):
            let table = dialect.quote(join.table)
            return "\(alias).\(pk) IN (SELECT \(table).\(dialect.quote(join.owner)) FROM \(table) WHERE \(table).\(dialect.quote(join.relationship)) = \(outer).\(pk))"
        }
    }

    /// How many terms of an AND or OR chain go in one flat `(a OR b OR …)` group.
    private static var chainGroupSize: Int { 64 }

    /// Joins terms in flat groups of at most `chainGroupSize`, grouping the
    /// groups the same way: SQLite parses a flat chain into a tree as deep
    /// as the chain is long and refuses trees deeper than 1,000, while each
    /// level of parentheses costs its parser (whose stack holds 100 entries)
    /// a few entries.
    private static func join(_ terms: [String], by keyword: String) -> String {
        if terms.count <= chainGroupSize { return "(" + terms.joined(separator: " \(keyword) ") + ")" }
        let groups = stride(from: 0, to: terms.count, by: chainGroupSize).map { start in
            join(Array(terms[start..<min(start + chainGroupSize, terms.count)]), by: keyword)
        }
        return join(groups, by: keyword)
    }
}
