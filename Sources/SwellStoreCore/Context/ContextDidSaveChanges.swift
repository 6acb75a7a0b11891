import Foundation

/// What one save moved: the object IDs it inserted, updated (with the changed
/// attribute names) and deleted. A value: it crosses queues, unlike
/// `Notification`, and is what `mergeChanges` needs.
public struct ContextDidSaveChanges: Sendable, Equatable {
    /// Objects new at the receiving level.
    public var inserted: Set<ObjectID> = []
    /// Objects changed at the receiving level, with the names of the changed attributes.
    public var updated: [ObjectID: Set<String>] = [:]
    /// Objects deleted at the receiving level.
    public var deleted: Set<ObjectID> = []
    /// New objects that became an existing object with the same key: incoming → survivor.
    /// (Two new rows of one key that took it as their ID map an ID to itself.) A row
    /// inserted with `insertRow` whose ID another object had is listed with the new ID it took.
    public var merged: [ObjectID: ObjectID] = [:]
    /// Existing objects that new objects with their key were merged into without changing any value.
    public var unchanged: Set<ObjectID> = []
    /// Updated or deleted objects that had changed since the saving context read them, whose
    /// changes its merge policy resolved (Store guarantees 61): the saver re-reads them.
    package var resolvedConflicts: Set<ObjectID> = []

    public init() {}

    /// Whether the save moved nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && merged.isEmpty }

    /// The changes carried by a did-save notification.
    public init?(notification: Notification) {
        guard let changes = notification.userInfo?["changes"] as? ContextDidSaveChanges else { return nil }
        self = changes
    }

    package var userInfo: [AnyHashable: Any] {
        ["inserted": inserted, "updated": Set(updated.keys), "deleted": deleted,
         "updatedAttributes": updated, "changes": self]
    }
}

extension ContextDidSaveChanges {
    /// Adds what a later part of the same save moved.
    package mutating func formUnion(_ other: ContextDidSaveChanges) {
        inserted.formUnion(other.inserted)
        updated.merge(other.updated) { $0.union($1) }
        deleted.formUnion(other.deleted)
        merged.merge(other.merged) { _, later in later }
        unchanged.formUnion(other.unchanged)
        unchanged.subtract(updated.keys)
        resolvedConflicts.formUnion(other.resolvedConflicts)
    }
}
