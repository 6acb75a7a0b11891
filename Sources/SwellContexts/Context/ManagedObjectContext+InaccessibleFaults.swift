import SwellStoreCore
import Synchronization

extension ManagedObjectContext {
    /// Whether an object whose row is gone where this context reads — another context deleted it
    /// and saved, or a reset parent never had it — is marked deleted when it is next faulted,
    /// refreshed or looked up by ID (`isDeleted` true, values nil), as Core Data's
    /// `shouldDeleteInaccessibleFaults`. Default true. Set to false, such an object reads as an
    /// object with nil values that is not deleted. Either way a save that carries an edit to it
    /// fails with `StoreError.Kind.mergeConflict` naming it (Store guarantees 62).
    public var shouldDeleteInaccessibleFaults: Bool {
        get { deletesInaccessibleFaults.load(ordering: .relaxed) }
        set { deletesInaccessibleFaults.store(newValue, ordering: .relaxed) }
    }

    /// An object for an ID that exists nowhere this context can see: marked deleted, with nil
    /// values (Store guarantees 62) — never a live-looking ghost. Registered when this context
    /// has a change of it (so its change sets list it).
    func goneObject(for id: ObjectID, registering: Bool) -> ManagedObject {
        let entity = coordinator?.entitiesByName[id.entityName] ?? EntityDescription(name: id.entityName, attributes: [])
        let object = ManagedObject(id: id, entity: entity, attributeIndex: coordinator?.attributeIndices[entity.name] ?? [:],
                                   snapshot: Array(repeating: .null, count: entity.attributes.count))
        if shouldDeleteInaccessibleFaults { object.markGone() }
        if registering { register(object) } else { object.managedObjectContext = self }
        return object
    }
}
