import Foundation
import SwellStoreCore

extension ManagedObject {
    /// The attributes and relationships changed in the current event — since the last end of an
    /// event in the object's context (a `perform` block's end, `processPendingChanges()`, a
    /// main-queue turn) — with the values they had then (`NSNull()` for nil), as Core Data's
    /// `changedValuesForCurrentEvent()` gives them. `changedValues()` gives the new values since
    /// the last save instead.
    ///
    /// A context keeps each object's values at its first change in an event only from the first
    /// call of this method on one of its objects: until then nothing is paid, and that first call
    /// measures from the values last loaded or saved. Empty for a deleted object, or one in no
    /// context. Call it on the context's queue.
    public func changedValuesForCurrentEvent() -> [String: Any] {
        guard let context = managedObjectContext else { return [:] }
        context.assertOnQueue("read the changes of a \(entity.name) in the current event")
        let before: [StoreValue]
        if let kept = context.eventBaseValues[objectID] {
            before = kept
        } else if context.eventFollowers.changedValues {
            // Followed, and no change of this object since the event began.
            return [:]
        } else {
            context.followChangedValuesForCurrentEvent()
            // (An inserted object's loaded values are all nil.)
            before = loadedSnapshot()
        }
        guard !isDeleted else { return [:] }
        let now = currentValues()
        var result: [String: Any] = [:]
        for index in entity.attributes.indices where index < before.count && index < now.count && before[index] != now[index] {
            result[entity.attributes[index].name] = publicValue(before[index], at: index) ?? NSNull()
        }
        return result
    }
}
