import Foundation
import SwellStoreCore

extension ManagedObjectContext {
    // MARK: Saving

    /// Moves this context's inserts, updates and deletes one level up: into the
    /// parent context, or — for a root context — into the store, as one store
    /// transaction. Nothing reaches disk until a root context saves.
    ///
    /// Uniqueness constraints are resolved at the receiving level with its merge
    /// policy. On error nothing moves: this context keeps its changes. A context pinned
    /// to a query generation moves to the store's newest state, staying pinned (and so,
    /// when a root context commits, do its pinned descendants).
    ///
    /// Every object it moves is validated first (Store guarantees 55): required values, attribute
    /// rules, to-many counts and the entity's validation closures. Any failure fails the
    /// save, listing every failure in `StoreError.validationFailures`.
    ///
    /// - Throws: `StoreError.validationFailed` (or, when every failure is a missing
    ///   required value or relationship, `.missingRequiredValue` / `.missingRequiredRelationship`),
    ///   `.typeMismatch`, `.unknownAttribute`, `.constraintConflict`, `.deleteDenied`, or a store error.
    public func save() throws {
        _ = try saveReturningChanges()
    }

    /// Saves and returns what the save moved (empty when there was nothing to save).
    package func saveReturningChanges() throws -> ContextDidSaveChanges {
        assertOnQueue("save")
        let invalid = level.withLock { $0.invalidValues }
        if let first = invalid.first { throw first }
        guard let coordinator else { throw StoreError.noPersistentStore }
        // What the delete rules change is recorded for undo: at the end of the event of the
        // deletes (`closeUndoEventGroup`) when grouping by event, else here as one group.
        let ownGroup = recordingUndoManager.map { $0.groupingLevel == 0 && !$0.groupsByEvent } ?? false
        if ownGroup { undoManagerStorage?.beginUndoGrouping() }
        defer { if ownGroup { undoManagerStorage?.endUndoGrouping() } }
        let denied = try applyDeleteRules(coordinator: coordinator)
        // Segments came from children's saves, which validated them: only the rest is checked here
        // (and the counts the segments' links change).
        let (snapshot, segments, isEmpty, hasMetadata) = level.withLock { ($0.unsegmented, $0.segments, $0.isEmpty, !$0.metadata.isEmpty) }
        guard !isEmpty || hasMetadata else {
            // A pinned context moves to the newest state at every save (Store guarantees 56).
            advanceQueryGeneration(after: "saving")
            return ContextDidSaveChanges()
        }
        try validateForSave(snapshot, segments: segments, denied: denied, coordinator: coordinator)
        var moved: ContextDidSaveChanges
        if let parent {
            moved = try save(into: parent, coordinator: coordinator) ?? ContextDidSaveChanges()
            advanceQueryGeneration(after: "saving")
        } else {
            // (A pinned root moves to the newest state inside, with its pinned descendants.)
            moved = try saveToStore(coordinator: coordinator)
        }
        if coordinator.hasRelationships { noteInverseToManyChanges(of: snapshot, in: &moved, coordinator: coordinator) }
        let changes = moved
        var saved = snapshot
        if coordinator.hasRelationships { saved.redirectReferences(merged: changes.merged, entities: coordinator.entitiesByName) }
        didSave(changes, saved: saved)
        if let parent {
            parent.childDidSave(changes, from: self)
        } else {
            for root in coordinator.rootContexts where root !== self && root.automaticallyMergesChangesFromParent {
                root.perform { root.mergeChanges(changes) }
            }
        }
        return changes
    }

    /// Child save: resolve and apply under this context's lock, then the parent's
    /// (locks are always taken child before parent), without waiting for the parent's queue.
    ///
    /// The store's rows the changes need are read first, holding no lock: a
    /// fetch on the parent (the view context on the main queue) waits for this
    /// save's in-memory work at most, never for the disk. Under the locks the
    /// read is only checked: when this level's changes or the store changed in
    /// between (a writer commit ended), it is read again; after a few such
    /// rounds the save reads under the locks as a last resort.
    private func save(into parent: ManagedObjectContext, coordinator: PersistentStoreCoordinator,
                      onlyWithoutObjectEdits: Bool = false) throws -> ContextDidSaveChanges? {
        let store = try coordinator.store
        // The saving context's policy decides every conflict its save meets (Store guarantees 61).
        let policy = mergePolicy
        let entities = coordinator.entitiesByName
        for attempt in 1...Self.prefetchAttempts + 1 {
            let (request, version) = level.withLock { own in
                (StorePrefetch.Request(layer: own.unsegmented, entities: entities), own.pendingVersion)
            }
            // nil: read under the locks (the last attempt).
            var prefetched: StorePrefetch?
            let generation = coordinator.commitGeneration
            if attempt <= Self.prefetchAttempts {
                prefetched = request.isEmpty ? StorePrefetch() : try request.read(from: store, entities: entities)
            }
            let outcome = try level.withLock { (own: inout LevelState) throws -> SaveOutcome in
                // Without edits of its own objects, every row came from a child's save, which validated it.
                if onlyWithoutObjectEdits && own.hasObjectEdits { return .saved(nil) }
                if prefetched != nil && own.pendingVersion != version { return .readAgain }
                return try parent.level.withLock { (target: inout LevelState) throws -> SaveOutcome in
                    let moving = own.unsegmented
                    // The levels above are copied before the store's state is checked: a
                    // commit that ended after the read is then still in the writer's in-flight level.
                    var farther: [String: [EntityChanges]] = [:]
                    for entity in Set(moving.entities.keys).union(own.segments.flatMap(\.entities.keys)) {
                        farther[entity] = parent.layerChainAbove(entity: entity, targetInFlight: target.inFlight)
                    }
                    if prefetched != nil && !request.isEmpty && coordinator.commitGeneration != generation { return .readAgain }
                    var changes = ContextDidSaveChanges()
                    /// Resolves a layer row by row into the parent's changes, by the parent's merge policy.
                    func resolveRowByRow(_ layer: ChangeLayer, prefetched: StorePrefetch?) throws {
                        var resolver = ChangeResolver(
                            target: target.pending, policy: policy, entities: entities,
                            storeIdentifier: coordinator.storeIdentifier, store: store,
                            newID: { (entity: String) throws(StoreError) in try coordinator.allocatePrimaryKeys(for: entity, count: 1).lowerBound },
                            farther: farther, prefetched: prefetched)
                        try resolver.apply(layer)
                        target.pending = resolver.target
                        if coordinator.hasRelationships {
                            target.pending.redirectReferences(merged: resolver.changes.merged, entities: entities)
                        }
                        changes.formUnion(resolver.changes)
                    }
                    if !moving.isEmpty {
                        if let prefetched, let whole = Self.wholeIfNoKeyMeets(moving, sameLevel: target.layers, farther: farther,
                                                                                 prefetched: prefetched, entities: entities) {
                            // New objects whose keys meet nothing: the layer moves as it is (no per-row work but the look-ups).
                            target.appendSegment(whole)
                            insertIDs(of: whole, into: &changes, storeIdentifier: coordinator.storeIdentifier)
                        } else {
                            try resolveRowByRow(moving, prefetched: prefetched)
                        }
                    }
                    // Segments move as they are when their keys still meet nothing above (a
                    // sibling of this context may have saved one of them into the parent since
                    // they were checked: then they are resolved row by row).
                    for segment in own.segments {
                        if Self.wholeIfNoKeyMeets(segment, sameLevel: target.layers, farther: farther, prefetched: nil,
                                                  entities: entities) != nil {
                            target.appendSegment(segment)
                            insertIDs(of: segment, into: &changes, storeIdentifier: coordinator.storeIdentifier)
                        } else {
                            try resolveRowByRow(segment, prefetched: nil)
                        }
                    }
                    _ = own.takeLayers()
                    own.hasObjectEdits = false
                    target.metadata.merge(own.metadata) { _, new in new }
                    own.metadata.removeAll()
                    return .saved(changes)
                }
            }
            if case .saved(let changes) = outcome { return changes }
        }
        // Not reached: the last attempt reads under the locks, so it saves or throws.
        preconditionFailure("a child's save ended without saving or throwing")
    }

    /// `layer` marked as key-checked when it holds only new objects and none of their
    /// keys meets another object: not in the layer itself, at the receiving level
    /// (`sameLevel`), above it (`farther`), or in the store (`prefetched`; nil for a
    /// segment, whose keys were checked against the store when it was made), and none
    /// whose ID is its key (`insertRow`) meets another object with that ID. Then the
    /// parent takes it whole, as a segment; otherwise nil (resolve row by row).
    private static func wholeIfNoKeyMeets(_ layer: ChangeLayer, sameLevel: [ChangeLayer], farther: [String: [EntityChanges]],
                                          prefetched: StorePrefetch?, entities: [String: EntityDescription]) -> ChangeLayer? {
        for (entityName, changes) in layer.entities where !changes.rows.isEmpty {
            guard let entity = entities[entityName] else { return nil }
            let keyIndices = entity.keyIndices
            var keyed = 0
            for row in changes.rows.values {
                guard row.kind == .inserted else { return nil }
                if !keyIndices.isEmpty && !keyIndices.contains(where: { row.values[$0].isNull }) { keyed += 1 }
            }
            guard keyed > 0 else { continue }
            // Every keyed row is in the key index (one object per key), and its keys were looked up in the store.
            guard changes.keyOfRow.count == keyed else { return nil }
            let stored: [[StoreValue]: StoreRow]?
            if let prefetched {
                guard let rows = prefetched.rowsByKey[entityName] else { return nil }
                stored = rows
            } else {
                stored = nil
            }
            let levels = sameLevel.compactMap { $0.entities[entityName] } + (farther[entityName] ?? [])
            let others = levels.filter { !$0.keyIndex.isEmpty }
            // Where the key is the rowid (one attribute), a row whose ID is its key must not meet another object's ID.
            let idsFromKeys = entity.rowidKeyIndex != nil
            let displaced = prefetched?.displacedIDs[entityName] ?? []
            let withRows = idsFromKeys ? levels.filter { !$0.rows.isEmpty } : []
            for (primaryKey, key) in changes.keyOfRow {
                guard changes.keyIndex[key] == primaryKey, stored?[key] == nil else { return nil }
                for other in others where other.keyIndex[key] != nil { return nil }
                if idsFromKeys, key[0] == .integer(primaryKey) {
                    if displaced.contains(primaryKey) { return nil }
                    for other in withRows where other.rows[primaryKey] != nil { return nil }
                }
            }
        }
        var whole = layer
        whole.keysChecked = true
        return whole
    }

    /// Adds the IDs of a layer's rows (all inserts) to a save's inserted objects.
    private func insertIDs(of layer: ChangeLayer, into changes: inout ContextDidSaveChanges, storeIdentifier: String) {
        for (entityName, entityChanges) in layer.entities {
            changes.inserted.reserveCapacity(changes.inserted.count + entityChanges.rows.count)
            for primaryKey in entityChanges.rows.keys {
                changes.inserted.insert(ObjectID(entityName: entityName, primaryKey: primaryKey, storeIdentifier: storeIdentifier))
            }
        }
    }

    /// Where a root save's committed rows are freed, off the saving queue.
    private static let releaseQueue = DispatchQueue(label: "swell.release", qos: .utility)

    /// How often a child's save reads the store before its locks (then once more under them).
    private static var prefetchAttempts: Int { 3 }

    private enum SaveOutcome {
        case saved(ContextDidSaveChanges?)
        case readAgain
    }

    /// The levels above this context (its in-flight save, then its ancestors), nearest first.
    fileprivate func layerChainAbove(entity: String, targetInFlight: [ChangeLayer]) -> [EntityChanges] {
        var result: [EntityChanges] = []
        for layer in targetInFlight.reversed() {
            if let changes = layer.entities[entity], !changes.rows.isEmpty { result.append(changes) }
        }
        return result + layerChain(entity: entity, includeSelf: false)
    }

    /// Root save: the pending changes become the in-flight set (still visible to
    /// readers) while they are committed; new changes from children keep arriving.
    private func saveToStore(coordinator: PersistentStoreCoordinator) throws -> ContextDidSaveChanges {
        let store = try coordinator.store
        let (inFlight, metadata) = level.withLock { level -> ([ChangeLayer], [String: String?]) in
            let layers = level.takeLayers()
            let metadata = level.metadata
            level.inFlight = layers
            level.metadata.removeAll()
            level.hasObjectEdits = false
            return (layers, metadata)
        }
        let operations = ChangeLayer.operations(inFlight)
        let result: StoreCommitResult
        coordinator.beginCommit()
        do {
            var changes = StoreChangeSet(operations: operations, metadata: metadata, mergePolicy: mergePolicy)
            changes.author = transactionAuthor
            changes.contextName = name
            result = try store.commit(changes)
        } catch {
            coordinator.noteFailedCommit()
            level.withLock { level in
                // The failed changes go back under those that arrived meanwhile.
                level.pending = ChangeLayer.folded(inFlight + level.takeLayers())
                level.inFlight = []
                level.metadata.merge(metadata) { newer, _ in newer }
            }
            throw error
        }
        // Counted before the in-flight level goes: a child's save that read the store
        // before this commit sees the count change, or still finds the rows in flight.
        coordinator.noteCommit()
        // Before the in-flight level goes: pinned contexts that saw these changes there read them
        // from their new snapshot now, and so do the saved objects below — the survivors of
        // merges with other writers' rows too (Store guarantees 56).
        advanceQueryGenerationsAfterCommit()
        level.withLock { $0.inFlight = [] }
        // The committed rows are freed on another queue: the root's save is the serial stage.
        let committed = (inFlight, operations)
        Self.releaseQueue.async { withExtendedLifetime(committed) {} }
        var changes = ContextDidSaveChanges()
        changes.inserted = result.inserted
        changes.updated = result.updated
        changes.deleted = result.deleted
        changes.merged = result.merged
        changes.resolvedConflicts = result.resolvedConflicts
        return changes
    }

    /// After a save: registered objects take their saved values, the context lets
    /// them go, and observers hear of it.
    private func didSave(_ changes: ContextDidSaveChanges, saved layer: ChangeLayer) {
        // Whether some registered object is not among the edited ones (a worker's own inserts are).
        let holdsUnedited = registry.count > retained.count
        for (id, object) in retained {
            if changes.resolvedConflicts.contains(id) {
                // Its change met a newer state the policy merged with: the object takes the values
                // the parent (or the store) has now.
                retakeAfterConflict(object, deletedHere: layer.row(id)?.kind == .deleted)
                continue
            }
            if let survivor = changes.merged[id] {
                unregister(object)
                object.objectID = survivor
                if registeredObject(for: survivor) == nil,
                   case .values(let values) = parentViewReporting(of: survivor, while: "taking the survivor of a merge") {
                    object.snapshot = values
                    register(object)
                } else {
                    object.managedObjectContext = nil
                }
                continue
            }
            guard let row = layer.row(id), row.kind != .deleted, !changes.deleted.contains(id) else {
                unregister(object)
                object.managedObjectContext = nil
                continue
            }
            if row.kind == .inserted {
                object.snapshot = row.values
            } else if !object.isFault {
                // (A fault whose batch could not be read stays a fault: its values are read again later.)
                var values = object.loadedSnapshot()
                row.mask.overlay(row.values, onto: &values)
                object.snapshot = values
            }
        }
        if holdsUnedited { takeSavedValues(changes) }
        retained.removeAll()
        NotificationCenter.default.post(name: Self.didSaveNotification, object: self, userInfo: changes.userInfo)
        notifyObservers(changes)
    }

    /// After a save moved changes that came from children (or `insertRow`): the registered
    /// objects they touched, which this context never edited itself, take their values from
    /// the parent, which now has them. Without this an object would fall back to what it
    /// loaded before the child's save once this level's copy of the change moved up.
    /// Objects whose deletion moved up leave the context. (The objects this context edited,
    /// `retained`, were brought up to date from the saved rows before.)
    private func takeSavedValues(_ changes: ContextDidSaveChanges, includingEdited: Bool = false) {
        // (Called before `retained` is emptied: the objects in it are skipped.)
        var touched: [ObjectID] = []
        let changedCount = changes.inserted.count + changes.updated.count + changes.deleted.count + changes.merged.count
        if changedCount < registry.count {
            touched = Array(changes.inserted) + Array(changes.updated.keys) + Array(changes.deleted) + Array(changes.merged.keys)
        } else {
            touched = registry.keys.filter { id in
                changes.inserted.contains(id) || changes.updated[id] != nil || changes.deleted.contains(id) || changes.merged[id] != nil
            }
        }
        for id in touched {
            guard includingEdited || retained[id] == nil, let object = registeredObject(for: id),
                  object.managedObjectContext === self else { continue }
            if let survivor = changes.merged[id] {
                // The object now is the survivor: it takes that ID unless another object has it here.
                unregister(object)
                if let kept = registeredObject(for: survivor) {
                    object.managedObjectContext = nil
                    refresh(kept, mergeChanges: true)
                } else {
                    object.objectID = survivor
                    register(object)
                    refresh(object, mergeChanges: true)
                }
                continue
            }
            if changes.deleted.contains(id), pendingRow(for: id) == nil {
                unregister(object)
                object.managedObjectContext = nil
                continue
            }
            refresh(object, mergeChanges: true)
        }
    }

    /// Moves this child context's changes into its parent from any thread, when
    /// they all came from its children's saves (or `insertRow`), so no object of
    /// this context depends on them: the pipeline saves the main-queue context
    /// this way, so the main queue does no per-row work. The did-save notice is
    /// then posted on the context's queue. Returns nil (and moves nothing) when
    /// the context's own objects have changes: then `save()` on its queue is needed.
    package func saveIntoParentOffQueue() throws -> ContextDidSaveChanges? {
        guard let parent, let coordinator else { return nil }
        if let first = level.withLock({ $0.invalidValues.first }) { throw first }
        guard let changes = try save(into: parent, coordinator: coordinator, onlyWithoutObjectEdits: true) else { return nil }
        if !changes.isEmpty {
            perform { [self] in
                // Objects edited here since the move (in `retained`) take the parent's values too.
                takeSavedValues(changes, includingEdited: true)
                NotificationCenter.default.post(name: Self.didSaveNotification, object: self, userInfo: changes.userInfo)
                notifyObservers(changes)
            }
            parent.childDidSave(changes, from: self)
        }
        return changes
    }

    /// Called on the saver's queue after a child saved into this context.
    func childDidSave(_ changes: ContextDidSaveChanges, from child: ManagedObjectContext) {
        for sibling in children where sibling !== child && sibling.automaticallyMergesChangesFromParent {
            sibling.perform { sibling.mergeChanges(changes) }
        }
        perform { self.refreshRegistered(changes) }
    }

    // MARK: Discarding

    /// Discards every unsaved change: inserted objects leave the context,
    /// updated and deleted ones return to their last saved values. Empties the undo manager.
    public func rollback() {
        assertOnQueue("roll back")
        noteEventEdit()
        undoManagerStorage?.removeAllActions()
        let discarded = discardPendingChanges()
        for (entity, changes) in discarded.entities {
            for (key, row) in changes.rows where row.kind == .inserted {
                let id = objectID(entity, key)
                if let object = registeredObject(for: id) {
                    unregister(object)
                    object.managedObjectContext = nil
                }
            }
        }
        retained.removeAll()
    }

    /// Forgets every registered object and discards unsaved changes. Objects
    /// handed out before are detached (their context becomes nil). Empties the undo manager.
    /// A context pinned to a query generation moves to the store's newest state, staying pinned.
    public func reset() {
        assertOnQueue("reset")
        noteEventEdit()
        undoManagerStorage?.removeAllActions()
        discardPendingChanges()
        advanceQueryGeneration(after: "resetting")
        for weak in registry.values {
            weak.object?.managedObjectContext = nil
            weak.object?.prefetchedObjects = []
        }
        registry.removeAll()
        strongRegistry.removeAll()
        retained.removeAll()
    }

    /// Empties this level's unsaved changes (rows, invalid values, metadata) and returns the rows.
    @discardableResult
    private func discardPendingChanges() -> ChangeLayer {
        level.withLock { level -> ChangeLayer in
            let pending = level.pending
            level.pending = ChangeLayer()
            level.invalidValues.removeAll()
            level.metadata.removeAll()
            level.hasObjectEdits = false
            return pending
        }
    }
}
