/// A predicate typed against an entity: compiled to SQL for the store, or
/// evaluated in memory on unsaved values, with the same result either way.
///
/// Every test yields true or false, never SQL's unknown, so `NOT`, `AND` and `OR` are
/// two-valued logic in both evaluations. What a null means is the predicate's
/// `FetchPredicate.NilMatching`: NSPredicate's (`x != 5` and `x == NIL` true where `x` is
/// null, an ordering or string test of a null false, a key path through a nil to-one read
/// as nil) or the older rule (a null matches only `== NIL`, `!= NIL` and `IN` a list holding
/// `NIL`; a key path through a nil to-one matches nothing).
package struct BoundPredicate: Sendable {
    /// The entity the predicate reads.
    package let entity: EntityDescription
    private let root: Node

    /// Types `expression` against `entity`; `format` is for errors; `entities` (the store's,
    /// by name) are where key paths through relationships lead.
    package init(expression: PredicateExpression, entity: EntityDescription, format: String,
                 entities: [String: EntityDescription] = [:], nilMatching: FetchPredicate.NilMatching = .nsPredicate) throws(FetchPredicateError) {
        var binder = PredicateBinder(entity: entity, format: format, entities: entities, nilMatching: nilMatching)
        self.root = try binder.bind(expression)
        self.entity = entity
    }

    /// A boolean expression for a WHERE clause on the entity's table, in `dialect`'s SQL
    /// (`PredicateSQLCompiler`), with its arguments in placeholder order.
    package func sql(_ dialect: some PredicateStringSQLDialect) -> (clause: String, arguments: [StoreValue]) {
        compiled(dialect)
    }

    /// The same in a dialect that cannot write string tests exactly (`PredicateStringSQLDialect`),
    /// or nil when the predicate has one: the store then filters it in memory.
    package func sql(ifNoStringTests dialect: some PredicateSQLDialect) -> (clause: String, arguments: [StoreValue])? {
        if usesStringFunctions && !(dialect is any PredicateStringSQLDialect) { return nil }
        return compiled(dialect)
    }

    private func compiled(_ dialect: some PredicateSQLDialect) -> (clause: String, arguments: [StoreValue]) {
        var compiler = PredicateSQLCompiler(dialect: dialect)
        let clause = compiler.compile(root, entity: entity, outer: dialect.quote(entity.name))
        return (clause, compiler.arguments)
    }

    /// In-memory evaluation on a row whose values are indexed like `entity.attributes`;
    /// key paths read related objects through `resolver` (false without one).
    package func evaluate(_ row: [StoreValue], primaryKey: Int64 = 0, resolver: (any PredicateResolver)? = nil) -> Bool {
        root.evaluate(row, primaryKey: primaryKey, resolver: resolver)
    }

    /// Whether it has a string test SQL cannot be trusted to answer as the in-memory
    /// evaluation does (`[c]`/`[d]` folding, `BEGINSWITH`…, `LIKE`): a store without
    /// SQLite's functions filters such predicates in memory.
    package var usesStringFunctions: Bool { root.usesStringFunctions }

    /// The entities the predicate's key paths read (every destination along them): where one
    /// of them has unsaved changes, rows unchanged themselves may match differently than the
    /// store's SQL says, so a fetch then tests every row in memory.
    package var pathEntities: Set<String> {
        var names = Set<String>()
        root.collectPathEntities(into: &names)
        return names
    }

    /// Attribute names the predicate reads.
    package var attributeNames: Set<String> {
        var names = Set<String>()
        root.collectAttributeNames(into: &names)
        return names
    }
}

extension BoundPredicate {
    /// A bound predicate's tree.
    package indirect enum Node: Sendable {
        case constant(Bool)
        case test(Test)
        case not(Node)
        case and([Node])
        case or([Node])
        /// A key path through a relationship (`BoundPredicate+KeyPaths.swift`).
        case path(PathNode)
        /// `SELF == %@`, `SELF != %@`, `SELF IN %@`: the object's own ID.
        case identity(IdentityTest)

        package func collectPathEntities(into names: inout Set<String>) {
            switch self {
            case .constant, .test, .identity: break
            case .not(let operand): operand.collectPathEntities(into: &names)
            case .and(let terms), .or(let terms): for term in terms { term.collectPathEntities(into: &names) }
            case .path(let path):
                names.insert(path.link.destination.name)
                path.inner?.collectPathEntities(into: &names)
            }
        }

        package func evaluate(_ row: [StoreValue], primaryKey: Int64, resolver: (any PredicateResolver)?) -> Bool {
            switch self {
            case .constant(let value): value
            case .test(let test): test.evaluate(row)
            case .not(let operand): !operand.evaluate(row, primaryKey: primaryKey, resolver: resolver)
            case .and(let terms): terms.allSatisfy { $0.evaluate(row, primaryKey: primaryKey, resolver: resolver) }
            case .or(let terms): terms.contains { $0.evaluate(row, primaryKey: primaryKey, resolver: resolver) }
            case .path(let path): path.evaluate(row, primaryKey: primaryKey, resolver: resolver)
            case .identity(let identity): identity.evaluate(primaryKey)
            }
        }

        /// The answer for an object that is not there — where a key path through a nil to-one
        /// leads (NSPredicate's rule): every attribute nil, every to-many empty, every `@count` nil.
        package var onNilObject: Bool {
            switch self {
            case .constant(let value): value
            case .test(let test): test.evaluate([])
            case .not(let operand): !operand.onNilObject
            case .and(let terms): terms.allSatisfy(\.onNilObject)
            case .or(let terms): terms.contains(where: \.onNilObject)
            case .path(let path): path.onNilObject
            case .identity(let identity): identity.negated
            }
        }

        package var usesStringFunctions: Bool {
            switch self {
            case .constant, .identity: false
            case .test(let test): test.usesStringFunctions
            case .not(let operand): operand.usesStringFunctions
            case .and(let terms), .or(let terms): terms.contains { $0.usesStringFunctions }
            case .path(let path): path.inner?.usesStringFunctions ?? false
            }
        }

        package func collectAttributeNames(into names: inout Set<String>) {
            switch self {
            case .constant, .identity: break
            case .path(let path): names.insert(path.link.relationship)
            case .test(let test): names.insert(test.attribute)
            case .not(let operand): operand.collectAttributeNames(into: &names)
            case .and(let terms), .or(let terms):
                for term in terms { term.collectAttributeNames(into: &names) }
            }
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=` on two non-null values.
    package enum Ordering: Sendable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

        package var sql: String {
            switch self {
            case .equal: "="
            case .notEqual: "<>"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
        }

        /// Whether the ordering holds for a `StoreValue.compare` result.
        package func holds(_ order: Int) -> Bool {
            switch self {
            case .equal: order == 0
            case .notEqual: order != 0
            case .less: order < 0
            case .lessOrEqual: order <= 0
            case .greater: order > 0
            case .greaterOrEqual: order >= 0
            }
        }
    }

    /// One test of one attribute. Values of `compare`, `oneOf` and `between`
    /// are already folded when there are options; the attribute is folded at
    /// evaluation (`swell_fold` in SQL).
    package struct Test: Sendable {
        package enum Kind: Sendable {
            /// `== NIL` (true) or `!= NIL` (false).
            case isNull(Bool)
            case compare(Ordering, StoreValue, PredicateStringOptions)
            /// `!= value` with NSPredicate's nil: true where the attribute is null.
            case distinct(StoreValue, PredicateStringOptions)
            /// A test NSPredicate answers false whatever the attribute holds: an ordering
            /// comparison, `BETWEEN` or a string operator with nil.
            case never
            case oneOf([StoreValue], includesNull: Bool, PredicateStringOptions)
            case between(StoreValue, StoreValue, PredicateStringOptions)
            case string(PredicateFunctions.StringOperation, String, PredicateStringOptions)
            case like(String, PredicateStringOptions)
        }

        package let attribute: String
        /// The attribute's index in a row.
        package let column: Int
        package let kind: Kind

        package var usesStringFunctions: Bool {
            switch kind {
            case .isNull, .never: false
            case .compare(_, _, let options), .distinct(_, let options), .oneOf(_, _, let options), .between(_, _, let options):
                !options.isEmpty
            case .string, .like: true
            }
        }

        package func evaluate(_ row: [StoreValue]) -> Bool {
            let value = column < row.count ? row[column] : .null
            switch kind {
            case .isNull(let wantsNull):
                return value.isNull == wantsNull
            case .compare(let ordering, let operand, let options):
                guard let value = Self.prepared(value, options) else { return false }
                return ordering.holds(StoreValue.compare(value, operand))
            case .distinct(let operand, let options):
                guard let value = Self.prepared(value, options) else { return true }
                return StoreValue.compare(value, operand) != 0
            case .never:
                return false
            case .oneOf(let values, let includesNull, let options):
                if value.isNull { return includesNull }
                guard let value = Self.prepared(value, options) else { return false }
                return values.contains { StoreValue.compare(value, $0) == 0 }
            case .between(let low, let high, let options):
                guard let value = Self.prepared(value, options) else { return false }
                return StoreValue.compare(value, low) >= 0 && StoreValue.compare(value, high) <= 0
            case .string(let operation, let operand, let options):
                guard case .text(let text) = value else { return false }
                return PredicateFunctions.stringOperation(operation, text, operand, options)
            case .like(let pattern, let options):
                guard case .text(let text) = value else { return false }
                return PredicateFunctions.like(text, pattern, options)
            }
        }

        /// The attribute's value ready to compare: folded when there are
        /// options; nil (the test is false) when it is null, or not text but
        /// must be folded, as `swell_fold` gives NULL then.
        private static func prepared(_ value: StoreValue, _ options: PredicateStringOptions) -> StoreValue? {
            if value.isNull { return nil }
            if options.isEmpty { return value }
            guard case .text(let text) = value else { return nil }
            return .text(PredicateFunctions.fold(text, options))
        }
    }
}

/// `SELF == %@`, `SELF != %@`, `SELF IN %@`: whether the object's ID is one of `primaryKeys`
/// (IDs of the predicate's entity; an ID of another entity or a nil matches no object).
package struct IdentityTest: Sendable {
    package let primaryKeys: [Int64]
    /// `!=`: the object is none of them.
    package let negated: Bool

    package func evaluate(_ primaryKey: Int64) -> Bool {
        primaryKeys.contains(primaryKey) != negated
    }
}
