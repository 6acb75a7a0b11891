import Foundation
import SwellStoreCore

/// A context's registered objects and the changes recorded on them: inserting, deleting,
/// setting values, and the unsaved row each object has at this level.
extension ManagedObjectContext {
    // MARK: Registered objects

    /// Every object this context has handed out that is still alive.
    public var registeredObjects: Set<ManagedObject> {
        assertOnQueue("list registered objects")
        return Set(registry.values.compactMap(\.object))
    }

    /// The object this context has registered for `id` (handed out and still alive, or kept
    /// with unsaved changes), or nil: never reads the store or makes an object (Core Data's
    /// `registeredObject(for:)`). Call it on the context's queue.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        registry[id]?.object
    }

    func register(_ object: ManagedObject) {
        object.managedObjectContext = self
        registry[object.objectID] = WeakObject(object)
        if retainsRegisteredObjects { strongRegistry[object.objectID] = object }
        if registry.count > registrySweepThreshold {
            registry = registry.filter { $0.value.object != nil }
            registrySweepThreshold = max(1024, registry.count * 2)
        }
    }

    func unregister(_ object: ManagedObject) {
        if registry[object.objectID]?.object === object { registry.removeValue(forKey: object.objectID) }
        if strongRegistry[object.objectID] === object { strongRegistry.removeValue(forKey: object.objectID) }
        retained.removeValue(forKey: object.objectID)
    }

    // MARK: Changes

    /// Inserts a new object of the named entity. The entity must be in the
    /// coordinator's model (a programming error otherwise).
    public func insertNewObject(forEntityName name: String) -> ManagedObject {
        assertOnQueue("insert a \(name)")
        guard let entity = coordinator?.entitiesByName[name] else {
            preconditionFailure("SwellStore: context \(displayName) has no coordinator, or its model has no entity named '\(name)'")
        }
        return ManagedObject(entity: entity, insertInto: self)
    }

    func insert(_ object: ManagedObject) {
        noteEventEdit(of: object)
        register(object)
        retained[object.objectID] = object
        level.withLock { level in
            level.hasObjectEdits = true
            let sequence = level.pending.takeSequence()
            level.pending.modify(object.entity.name) { changes in
                changes.rows[object.objectID.primaryKey] = PendingRow(kind: .inserted, values: object.snapshot, mask: .empty, sequence: sequence)
            }
        }
        if let undoManager = recordingUndoManager { registerUndo(.insert(object), with: undoManager) }
    }

    /// Marks an object deleted; the deletion moves up with the next save.
    public func delete(_ object: ManagedObject) {
        assertOnQueue("delete a \(object.entity.name)")
        guard object.managedObjectContext === self else { return }
        noteEventEdit()
        let id = object.objectID
        let undoManager = recordingUndoManager
        let before = undoManager == nil ? nil : level.withLock { $0.row(id) }
        let values = undoManager == nil ? [] : object.currentValues()
        // What the delete was based on, for the save's version check: the values read, when they are
        // in memory (a fault's are not read for a delete).
        let base = object.isFault ? nil : object.snapshot
        let wasInserted = level.withLock { level -> Bool in
            level.hasObjectEdits = true
            let newSequence = level.pending.takeSequence()
            return level.pending.modify(id.entityName) { changes in
                let wasInserted = changes.rows[id.primaryKey]?.kind == .inserted
                changes.markDeleted(id.primaryKey, sequence: newSequence, base: base)
                return wasInserted
            }
        }
        if wasInserted {
            unregister(object)
            object.managedObjectContext = nil
        } else {
            retained[id] = object
        }
        if let undoManager, before?.kind != .deleted { registerUndo(.delete(object, before: before, values: values), with: undoManager) }
    }

    func recordChange(of object: ManagedObject, attribute index: Int, to value: StoreValue) {
        noteEventEdit(of: object)
        let id = object.objectID
        let entity = object.entity
        let keyIndices = entity.uniquenessConstraint.compactMap { object.attributeIndex[$0] }
        let snapshot = object.loadedSnapshot()
        let undoManager = recordingUndoManager
        let old = undoManager == nil ? nil : object.storeValue(at: index)
        let changed = level.withLock { level -> Bool in
            level.hasObjectEdits = true
            let newSequence = level.pending.takeSequence()
            return level.pending.modify(entity.name) { changes -> Bool in
            var row: PendingRow
            if let existing = changes.rows[id.primaryKey] {
                row = existing
                if row.kind == .deleted { return false }
            } else {
                if snapshot[index] == value { return false }
                // The snapshot is what the save checks the object against (optimistic locking).
                row = PendingRow(kind: .updated, values: snapshot, mask: .empty, sequence: newSequence, base: snapshot)
            }
            row.values[index] = value
            row.mask.insert(index)
            changes.rows[id.primaryKey] = row
            if keyIndices.contains(index) {
                var current = snapshot
                if row.kind == .inserted { current = row.values } else {
                    for i in row.mask.indices(below: current.count) { current[i] = row.values[i] }
                }
                let key = keyIndices.map { current[$0] }
                changes.setKey(key.contains(where: \.isNull) ? nil : key, for: id.primaryKey)
            }
            return true
            }
        }
        if changed { retained[id] = object }
        if changed, let undoManager, let old, old != value { registerUndo(.value(object, attribute: index, old: old), with: undoManager) }
    }

    /// The next primary key for a new object, from a block reserved at the coordinator.
    ///
    /// When the store cannot hand out IDs, the object gets one that never reaches the store
    /// and `failure` is set: the caller records it, so this context's next save throws it.
    func nextPrimaryKey(for entity: String, from coordinator: PersistentStoreCoordinator,
                        failure: inout StoreError?) -> Int64 {
        if let range = reservedKeys[entity], !range.isEmpty {
            reservedKeys[entity] = range.dropFirst()
            return range.lowerBound
        }
        do {
            let range = try coordinator.allocatePrimaryKeys(for: entity, count: 256)
            reservedKeys[entity] = range.dropFirst()
            return range.lowerBound
        } catch {
            failure = error
            // Negative: never an ID the store handed out, so it meets no other object here.
            return -coordinator.unloadedIDs.allocate(for: entity, count: 1).lowerBound
        }
    }

    /// The store's identifier, looked up once.
    func storeIdentifier(of coordinator: PersistentStoreCoordinator) -> String {
        if let cachedStoreIdentifier { return cachedStoreIdentifier }
        let identifier = coordinator.storeIdentifier
        if coordinator.storeURL != nil { cachedStoreIdentifier = identifier }
        return identifier
    }

    func recordInvalidValue(_ error: StoreError) {
        level.withLock { $0.invalidValues.append(error) }
    }

    /// This context's own unsaved change of an object, if any.
    func pendingRow(for id: ObjectID) -> PendingRow? {
        level.withLock { level in
            if let row = level.row(id) { return row }
            for layer in level.inFlight.reversed() {
                if let row = layer.row(id) { return row }
            }
            return nil
        }
    }

    /// Whether a save would move anything: true exactly when `insertedObjects`, `updatedObjects`
    /// or `deletedObjects` is not empty (Store guarantees 62), or store metadata was set
    /// (`setStoreMetadata`). A value refused by `setValue` (the wrong type, an unknown key) changes
    /// no object, so it does not count, though the next `save()` throws it.
    public var hasChanges: Bool {
        assertOnQueue("ask for changes")
        return level.withLock { !$0.isEmpty || !$0.metadata.isEmpty }
    }

    /// Objects inserted here (or saved into this context by children) and not yet saved.
    public var insertedObjects: Set<ManagedObject> { objects(of: .inserted) }
    /// Objects changed here (or by children's saves) and not yet saved.
    public var updatedObjects: Set<ManagedObject> { objects(of: .updated) }
    /// Objects deleted here (or by children's saves) and not yet saved.
    public var deletedObjects: Set<ManagedObject> { objects(of: .deleted) }

    private func objects(of kind: PendingRow.Kind) -> Set<ManagedObject> {
        assertOnQueue("list changed objects")
        let ids = level.withLock { level in
            level.pending.entities.flatMap { entity, changes in
                changes.rows.filter { $0.value.kind == kind }.map { (entity, $0.key) }
            }
        }
        var result = Set<ManagedObject>()
        for (entity, key) in ids {
            let id = ObjectID(entityName: entity, primaryKey: key, storeIdentifier: coordinator?.storeIdentifier ?? "")
            // A change of an object gone from the levels above still shows (as a deleted object),
            // so the sets always agree with `hasChanges` (Store guarantees 62).
            result.insert(registeredObject(for: id) ?? materializeReporting(id, while: "listing changed objects")
                          ?? goneObject(for: id, registering: true))
        }
        return result
    }
}
