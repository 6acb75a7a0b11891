/// What to fetch: an entity, optionally filtered, sorted, limited and batched.
public struct FetchRequest: Sendable {
    /// The entity whose objects are fetched.
    public var entityName: String
    /// Only objects matching this predicate; nil for all.
    public var predicate: FetchPredicate?
    /// The order; ties are broken by the objects' primary keys (insertion order).
    public var sortDescriptors: [FetchSortDescriptor] = []
    /// At most this many objects; 0 for no limit.
    public var fetchLimit: Int = 0
    /// Skip this many objects first.
    public var fetchOffset: Int = 0
    /// When not 0, `fetch` returns objects whose values are loaded this many
    /// at a time, as they are used: about one batch is in memory at once.
    public var fetchBatchSize: Int = 0
    /// Relationships (to-one key paths) whose destinations are loaded with the fetch,
    /// one query per key path, instead of one per object on first access (Store guarantees 34).
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// What the fetch gives: objects (the default), their IDs, dictionaries, or a count.
    /// `fetch` gives objects, `fetchObjectIDs` IDs, `fetchDictionaries` dictionaries and
    /// `count(for:)` the count, whatever this says; it documents the request's intent, as
    /// Core Data's `resultType` does.
    public var resultType: FetchResultType = .managedObject
    /// For dictionary results: attribute names, to-one relationship names (their values are
    /// object IDs), to-one key paths (`spot.name`) and `ExpressionDescription`s; empty: every
    /// attribute.
    public var propertiesToFetch: [any FetchProperty] = []
    /// For dictionary results: the properties (attributes or to-one key paths) rows are
    /// grouped by; every fetched property that is not an expression must be one of them.
    public var propertiesToGroupBy: [String] = []
    /// For grouped dictionary results: which groups are kept, a predicate over the fetched
    /// properties by name (`total > 100`).
    public var havingPredicate: FetchPredicate?
    /// For dictionary results: a row equal to an earlier one is left out.
    public var returnsDistinctResults = false

    /// A request for every object of the named entity.
    public init(entityName: String) {
        self.entityName = entityName
    }
}

/// One key of a fetch request's order.
public struct FetchSortDescriptor: Sendable, Hashable {
    /// The attribute to sort by.
    public var key: String
    /// Ascending (nil first, `false` before `true`) or descending.
    public var ascending: Bool

    /// Sorts by `key`, ascending unless told otherwise.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

/// What a fetch gives (Core Data's `NSFetchRequestResultType`).
public enum FetchResultType: Sendable, Hashable {
    case managedObject
    case managedObjectID
    case dictionary
    case count
}

/// A property a dictionary fetch reads: an attribute name or key path (`String`), or an
/// `ExpressionDescription`.
public protocol FetchProperty: Sendable {}

extension String: FetchProperty {}

/// An aggregate over the fetched rows (or each group of them) for a dictionary fetch:
/// Core Data's `NSExpressionDescription` with a function expression.
public struct ExpressionDescription: FetchProperty, Hashable {
    /// The key of the result in each dictionary.
    public var name: String
    /// What is computed.
    public var function: AggregateFunction
    /// The attribute or to-one key path it is computed over.
    public var keyPath: String

    /// `function` over `keyPath`, named `name` in the results.
    public init(name: String, function: AggregateFunction, keyPath: String) {
        self.name = name
        self.function = function
        self.keyPath = keyPath
    }
}

/// The aggregates a dictionary fetch computes. Nulls are left out of every one, as SQL
/// leaves them out: `count` counts the values that are not null.
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    /// How many values are not null (an integer).
    case count
    /// The sum (an integer over integers, a double over doubles; 0 over no values).
    case sum
    /// The smallest value (of the attribute's type; absent over no values).
    case min
    /// The largest value (of the attribute's type; absent over no values).
    case max
    /// The mean (a double; absent over no values).
    case average
    /// How many different values are not null (an integer).
    case countDistinct
}
