import Foundation

/// A store's options beyond its URL.
public struct PersistentStoreOptions: Sendable, Hashable {
    /// Persistent history tracking (Core Data's `NSPersistentHistoryTrackingKey`): once on,
    /// every transaction that changes the store records a `HistoryTransaction`, whichever
    /// process or coordinator wrote it. It stays on for the store.
    public var history: Bool

    public init(history: Bool = false) {
        self.history = history
    }
}

/// Where a transaction is in a store's history: ordered, `Codable` (keep it between runs).
public struct HistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The transaction's number in the store: larger is later.
    public let value: Int64

    public init(value: Int64) {
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.value < rhs.value }

    public var description: String { "\(value)" }
}

/// One transaction of a store's history: a root save, a batch request, a `swell` run's commit.
public struct HistoryTransaction: Sendable {
    public let token: HistoryToken
    public let timestamp: Date
    /// The committing context's `transactionAuthor`.
    public let author: String?
    /// The committing context's `name`.
    public let contextName: String?
    public let changes: [HistoryChange]

    package init(token: HistoryToken, timestamp: Date, author: String?, contextName: String?, changes: [HistoryChange]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.changes = changes
    }

    /// The transaction as a change notice (`inserted`, `updated`, `deleted` object IDs) for
    /// `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`.
    public var changeNotice: [String: Set<ObjectID>] {
        var notice: [String: Set<ObjectID>] = ["inserted": [], "updated": [], "deleted": []]
        for change in changes {
            switch change.changeType {
            case .insert: notice["inserted"]!.insert(change.objectID)
            case .update: notice["updated"]!.insert(change.objectID)
            case .delete: notice["deleted"]!.insert(change.objectID)
            }
        }
        return notice
    }
}

/// One object's change in a `HistoryTransaction`.
///
/// `@unchecked Sendable`: every field is a `let`; `deletedKey` and `previousKey` are typed
/// `[String: Any]` (Core Data's tombstone shape) but hold only the values a store reads back —
/// `Int`, `Double`, `String`, `Bool`, `Date` — which are all Sendable.
public struct HistoryChange: @unchecked Sendable {
    /// What happened to the object.
    public enum ChangeType: String, Sendable, Hashable, Codable {
        case insert, update, delete
    }

    public let objectID: ObjectID
    public let entityName: String
    public let changeType: ChangeType
    /// For an update: the attributes and relationships it changed.
    public let updatedProperties: Set<String>
    /// For a delete: the values of the object's key (its uniqueness constraint), gone from
    /// the table (empty for an entity without a key); nil for other changes. Values are
    /// `String`, `Int`, `Double`, `Bool` or `Date`; a nil value leaves its name out.
    /// (`@unchecked Sendable`: the values are those immutable types.)
    public let deletedKey: [String: Any]?
    /// For an update that changed the object's key: the key's values before it, in the
    /// same form as `deletedKey` (a reader that keeps rows by key holds the row under
    /// them); nil for other changes.
    public let previousKey: [String: Any]?
}

/// What `CommitDriver` gives a store to record for one transaction: its changes grouped,
/// one group per entity, change type and set of updated names, each group's objects a
/// sorted list of primary keys (a bulk insert is one group whose keys are one range), so
/// recording costs a few rows however many objects a transaction touched.
package struct HistoryRecord: Sendable {
    package struct Group: Sendable {
        package var entity: String
        package var type: HistoryChange.ChangeType
        /// For updates: the attributes and relationships changed (sorted).
        package var updated: [String]
        /// The objects' primary keys, ascending.
        package var primaryKeys: [Int64]
        /// For deletes: each object's key values; for updates of which some changed a key:
        /// those objects' keys before, the others' empty (aligned with `primaryKeys`).
        package var keysBefore: [[String: StoreValue]]?

        package init(entity: String, type: HistoryChange.ChangeType, updated: [String], primaryKeys: [Int64],
                     keysBefore: [[String: StoreValue]]? = nil) {
            self.entity = entity
            self.type = type
            self.updated = updated
            self.primaryKeys = primaryKeys
            self.keysBefore = keysBefore
        }
    }

    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var groups: [Group]

    package var isEmpty: Bool { groups.isEmpty }

    /// The record of a commit's result; `keysBefore` are the deleted rows' key values and the
    /// old keys of rows whose key changed, read before the commit wrote.
    package init(result: StoreCommitResult, author: String?, contextName: String?, keysBefore: [RowReference: [String: StoreValue]]) {
        timestamp = Date()
        self.author = author
        self.contextName = contextName
        var groups: [Group] = []
        var inserted: [String: [Int64]] = [:]
        for id in result.inserted { inserted[id.entityName, default: []].append(id.primaryKey) }
        for (entity, keys) in inserted.sorted(by: { $0.key < $1.key }) {
            groups.append(Group(entity: entity, type: .insert, updated: [], primaryKeys: keys.sorted()))
        }
        struct UpdateKey: Hashable { var entity: String; var names: [String] }
        var updated: [UpdateKey: [Int64]] = [:]
        for (id, properties) in result.updated where !result.inserted.contains(id) {
            updated[UpdateKey(entity: id.entityName, names: properties.sorted()), default: []].append(id.primaryKey)
        }
        for (key, keys) in updated.sorted(by: { ($0.key.entity, $0.key.names.joined(separator: ",")) < ($1.key.entity, $1.key.names.joined(separator: ",")) }) {
            let sorted = keys.sorted()
            let before = sorted.map { keysBefore[RowReference(entity: key.entity, primaryKey: $0)] }
            groups.append(Group(entity: key.entity, type: .update, updated: key.names, primaryKeys: sorted,
                                keysBefore: before.contains { $0 != nil } ? before.map { $0 ?? [:] } : nil))
        }
        var deleted: [String: [Int64]] = [:]
        for id in result.deleted { deleted[id.entityName, default: []].append(id.primaryKey) }
        for (entity, keys) in deleted.sorted(by: { $0.key < $1.key }) {
            let sorted = keys.sorted()
            groups.append(Group(entity: entity, type: .delete, updated: [], primaryKeys: sorted,
                                keysBefore: sorted.map { keysBefore[RowReference(entity: entity, primaryKey: $0)] ?? [:] }))
        }
        self.groups = groups
    }
}

/// A row by entity and primary key.
package struct RowReference: Sendable, Hashable {
    package var entity: String
    package var primaryKey: Int64

    package init(entity: String, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }
}

/// The store metadata key under which each store keeps how far its history was ever purged
/// (never moved back); `ManagedObjectContext.historyPurgedBefore` reads it.
package enum PersistentHistoryKeys {
    package static let purgedBefore = "swell.history.purged_before"
}
