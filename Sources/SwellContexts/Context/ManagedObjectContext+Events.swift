import SwellStoreCore
import Synchronization

/// What waits for the end of a context's events (confined to the context's queue).
struct EventFollowers {
    /// A fetched results controller observes the context.
    var controllers = false
    /// `changedValuesForCurrentEvent()` was asked for: each object's values before its first
    /// change in an event are kept until the event ends.
    var changedValues = false

    var any: Bool { controllers || changedValues }
}

/// Something that hears of the end of each event in a context (a fetched results controller).
protocol ContextEventObserver: ContextChangeObserver {
    /// Called on the context's queue when an event ends (Core Data's `processPendingChanges`).
    func contextDidEndEvent()
}

/// Events (Core Data's "end of the event", `processPendingChanges()`): a `perform` or
/// `performAndWait` block, for a main-queue context used directly the main queue's turn, or
/// the span up to an explicit `processPendingChanges()`. At an event's end its undo group closes
/// (Store guarantees 54) and fetched results controllers report what it changed (64).
///
/// A context with no controller, no undo manager and no `changedValuesForCurrentEvent()` caller
/// does nothing at the end of a block and one flag test per edit.
extension ManagedObjectContext {
    /// Counts the changes to this context's own level (its edits, children's saves into it, its
    /// saves and rollbacks): an event after which it differs changed something.
    var changeVersion: UInt64 {
        level.withLock { $0.pendingVersion }
    }

    /// Ends the current event: its undo group closes (running the delete rules of its deletes),
    /// controllers report what it changed, and the values kept for `changedValuesForCurrentEvent()` go.
    func endEvent() {
        closeUndoEventGroup()
        guard eventFollowers.any else { return }
        if eventFollowers.controllers { notifyEventObservers() }
        eventBaseValues.removeAll(keepingCapacity: true)
    }

    /// Called by every edit of this context's objects, before the change: keeps the object's
    /// values when `changedValuesForCurrentEvent()` is followed, and makes sure the event ends
    /// when the queue's turn does (a main-queue context edited outside `perform`). Nothing else
    /// when nothing follows events.
    func noteEventEdit(of object: ManagedObject? = nil) {
        guard eventFollowers.any else { return }
        if eventFollowers.changedValues, let object, eventBaseValues[object.objectID] == nil {
            eventBaseValues[object.objectID] = object.currentValues()
        }
        guard !eventEndScheduled else { return }
        eventEndScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            eventEndScheduled = false
            endEvent()
        }
    }

    /// Starts following events for a fetched results controller (on the queue).
    func addEventObserver(_ observer: any ContextEventObserver) {
        addObserver(observer)
        eventFollowers.controllers = true
        followsEvents.store(true, ordering: .relaxed)
    }

    /// Starts keeping each object's values at its first change in an event (on the queue).
    func followChangedValuesForCurrentEvent() {
        guard !eventFollowers.changedValues else { return }
        eventFollowers.changedValues = true
        followsEvents.store(true, ordering: .relaxed)
    }

    private func notifyEventObservers() {
        changeObservers.removeAll { $0.observer == nil }
        guard !changeObservers.isEmpty else {
            // The last controller went: events cost nothing again.
            eventFollowers.controllers = false
            followsEvents.store(eventFollowers.changedValues, ordering: .relaxed)
            return
        }
        for weak in changeObservers {
            (weak.observer as? any ContextEventObserver)?.contextDidEndEvent()
        }
    }
}
