import SwellStoreCore

/// What optimistic locking (Store guarantees 61) asks of a context's objects: their changes
/// based on what they read last, and their values after a save whose merge policy resolved a
/// conflict (`MergePolicy.resolveVersion` holds the rules).
extension ManagedObjectContext {
    /// Makes this level's update or delete of `id` based on `values` (what the object read last).
    func rebase(_ id: ObjectID, on values: [StoreValue]) {
        level.withLock { level in
            guard let row = level.row(id), row.kind != .inserted, row.base != nil else { return }
            level.pending.modify(id.entityName) { changes in changes.rows[id.primaryKey]?.base = values }
        }
    }

    /// After a save whose merge policy resolved a conflict on `object`: it takes the parent's (or
    /// the store's) values now, or leaves the context when the row is gone: the policy kept this
    /// context's deletion, or gave up its edit of a row deleted meanwhile (`.rollback`), which
    /// then reads as deleted (Store guarantees 62), not as the values it had.
    func retakeAfterConflict(_ object: ManagedObject, deletedHere: Bool) {
        switch parentViewReporting(of: object.objectID, while: "taking the values a merge policy kept") {
        case .values(let values):
            object.snapshot = values
        case .gone:
            unregister(object)
            object.managedObjectContext = nil
            if !deletedHere, shouldDeleteInaccessibleFaults { object.markGone() }
        case .unreadable:
            break   // it keeps the values it had (the context logged why)
        }
    }
}
