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
    /// one query per key path, instead of one per object on first access (store.md 34).
    public var relationshipKeyPathsForPrefetching: [String] = []

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
