/// How a context resolves two objects with the same key (uniqueness
/// constraint) when changes are saved into it.
///
/// The incoming object is the one being saved (from a child, or inserted
/// directly in a root context); the existing one is what the receiving level
/// already holds. The result is always one object, which keeps the existing
/// object's ID.
public enum MergePolicy: Sendable, Hashable {
    /// The save fails; the error names the conflicting objects and the key. The default.
    case error
    /// The incoming values win, property by property (an upsert): attributes the incoming object set replace the existing ones.
    case mergeByPropertyObjectTrump
    /// The existing values win; the incoming object only fills attributes that are nil in the existing one.
    case mergeByPropertyStoreTrump
    /// The incoming object replaces the existing one entirely: attributes it did not set become nil.
    case overwrite
    /// The incoming object is discarded; the existing one stays as it was.
    case rollback

    /// Shorthand for `.mergeByPropertyObjectTrump`.
    public static let objectTrump = MergePolicy.mergeByPropertyObjectTrump
    /// Shorthand for `.mergeByPropertyStoreTrump`.
    public static let storeTrump = MergePolicy.mergeByPropertyStoreTrump
}
