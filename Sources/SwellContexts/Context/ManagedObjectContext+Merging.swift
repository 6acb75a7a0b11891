import Foundation
import SwellStoreCore

/// Something that hears of changes that reached a context (a fetched results controller).
protocol ContextChangeObserver: AnyObject {
    /// Called on the context's queue after a save into, from or merged into the context.
    func contextDidChange(_ changes: ContextDidSaveChanges)
}

/// A weak reference to an observer.
struct WeakObserver {
    weak var observer: (any ContextChangeObserver)?
}

extension ManagedObjectContext {
    // MARK: Merging

    /// Brings the changes of another context's save into this one (for a context
    /// that is not the saver's parent, like two roots on one coordinator):
    /// updated objects re-read their saved values (keeping unsaved changes),
    /// deleted objects leave the context. A context pinned to a query generation moves to the
    /// store's newest state first, staying pinned. Call on this context's queue.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let changes = ContextDidSaveChanges(notification: notification) else { return }
        mergeChanges(changes)
    }

    /// Brings a save's changes into this context; see `mergeChanges(fromContextDidSave:)`.
    public func mergeChanges(_ changes: ContextDidSaveChanges) {
        assertOnQueue("merge changes")
        advanceQueryGeneration(after: "merging changes")
        refreshRegistered(changes)
    }

    /// Re-reads the registered objects a save touched and tells observers.
    func refreshRegistered(_ changes: ContextDidSaveChanges) {
        // A context with no objects (the pipeline's view context) only tells its observers.
        guard registry.contains(where: { $0.value.object != nil }) else {
            notifyObservers(changes)
            return
        }
        for id in changes.deleted {
            guard let object = registeredObject(for: id), pendingRow(for: id)?.kind != .inserted else { continue }
            // Only an object the parent no longer has leaves; one that could not be read stays (logged).
            if case .gone = parentViewReporting(of: id, while: "merging a save") {
                level.withLock { level in level.pending.entities[id.entityName]?.removeRow(id.primaryKey) }
                unregister(object)
                object.managedObjectContext = nil
                object.markGone()
            }
        }
        for id in Set(changes.updated.keys).union(changes.merged.values) {
            guard let object = registeredObject(for: id) else { continue }
            refresh(object, mergeChanges: true)
        }
        notifyObservers(changes)
    }

    /// Re-reads an object's saved values from the parent (or the store). With
    /// `mergeChanges` true its unsaved changes stay on top; with false they are dropped.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        assertOnQueue("refresh a \(object.entity.name)")
        guard object.managedObjectContext === self else { return }
        let id = object.objectID
        if !mergeChanges {
            noteEventEdit()
            let wasInserted = level.withLock { level -> Bool in
                guard let row = level.pending.row(id) else { return false }
                if row.kind == .inserted { return true }
                level.pending.entities[id.entityName]?.removeRow(id.primaryKey)
                return false
            }
            if wasInserted { return }
            retained.removeValue(forKey: id)
        }
        let pending = pendingRow(for: id)
        if pending?.kind == .inserted { return }
        switch parentViewReporting(of: id, while: "refreshing an object") {
        case .values(let values):
            object.snapshot = values
            object.isGone = false
            // The object's unsaved change is now based on what was just read (optimistic locking:
            // what the next save checks it against).
            if pending != nil { rebase(id, on: values) }
        case .gone:
            // Deleted where this context reads (Store guarantees 62): marked deleted, not a ghost.
            if shouldDeleteInaccessibleFaults { object.markGone() }
        case .unreadable:
            break
        }
    }

    /// Refreshes every registered object, keeping unsaved changes.
    public func refreshAllObjects() {
        assertOnQueue("refresh all objects")
        for object in registry.values.compactMap(\.object) {
            refresh(object, mergeChanges: true)
        }
    }

    func addObserver(_ observer: any ContextChangeObserver) {
        changeObservers.removeAll { $0.observer == nil }
        changeObservers.append(WeakObserver(observer: observer))
    }

    func notifyObservers(_ changes: ContextDidSaveChanges) {
        for weak in changeObservers {
            weak.observer?.contextDidChange(changes)
        }
    }
}
