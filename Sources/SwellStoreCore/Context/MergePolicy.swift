/// How a context's save resolves the conflicts it meets (set on the saving context):
/// two objects with the same key (uniqueness constraint), and objects changed or
/// deleted since the context read them (optimistic locking, Store guarantees 61;
/// `MergePolicy.resolveVersion` holds those rules).
///
/// For keys: the incoming object is the one being saved (from a child, or inserted
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

// MARK: The rules, in one place

extension MergePolicy {
    /// What a policy decides when an incoming object meets an existing one with its key.
    ///
    /// This extension is the one place the policies' rules live: a context's save
    /// (`ChangeResolver`) and a store's commit (`SQLiteCommitter`, and any other store)
    /// only apply what it decides.
    package enum Resolution: Sendable, Equatable {
        /// The save fails, naming both objects and the key.
        case fail
        /// The incoming object is dropped; the existing one stays as it was.
        case keepExisting
        /// The two become the existing object, each attribute by `rule(incomingSet:)`.
        case merge
    }

    /// Which value one attribute of the surviving object keeps, in a `.merge`.
    package enum AttributeRule: Sendable, Equatable {
        /// The existing value.
        case keepExisting
        /// The incoming value.
        case takeIncoming
        /// The incoming value where the existing one is nil, else the existing one.
        case fillNil
    }

    package var resolution: Resolution {
        switch self {
        case .error: .fail
        case .rollback: .keepExisting
        case .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite: .merge
        }
    }

    /// The rule for one attribute; `incomingSet`: whether the incoming change set it
    /// (an insert: set explicitly; an update: changed).
    package func rule(incomingSet: Bool) -> AttributeRule {
        switch self {
        case .overwrite: .takeIncoming
        case .mergeByPropertyObjectTrump: incomingSet ? .takeIncoming : .keepExisting
        case .mergeByPropertyStoreTrump: .fillNil
        case .error, .rollback: .keepExisting
        }
    }

    /// The surviving object's value of one attribute.
    package func merged(existing: StoreValue, incoming: StoreValue, incomingSet: Bool) -> StoreValue {
        switch rule(incomingSet: incomingSet) {
        case .keepExisting: existing
        case .takeIncoming: incoming
        case .fillNil: existing.isNull ? incoming : existing
        }
    }

    /// The attributes (indices below `count`) a merge may change, for the did-save
    /// notification's `updated` names: all for overwrite, none when nothing merges,
    /// else those the incoming change set.
    package func mayChange(mask: AttributeMask, count: Int) -> [Int] {
        switch self {
        case .overwrite: Array(0..<count)
        case .error, .rollback: []
        case .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump: mask.indices(below: count)
        }
    }
}
