import SwellStoreCore

/// Undo and redo of a context's own edits (Store guarantees 54): every value set, relationship
/// change (each side is a column change of its own, so both sides come back), insert and delete
/// made on this context registers its inverse with the context's `undoManager`. Changes that
/// arrive from a child's save, a merge or a refresh are not the context's edits and are not
/// recorded; batch requests write the store directly and are not recorded either.
///
/// Undo works on values, not on snapshots of the level: an undo after a save puts the old value
/// back as a new change (which the next save moves), as Core Data does.
extension ManagedObjectContext {
    /// Undoes the newest group of this context's undo manager (Core Data's `undo()`); nothing
    /// without one. Call it on the context's queue.
    public func undo() {
        assertOnQueue("undo")
        undoManagerStorage?.undo()
    }

    /// Redoes the group the newest `undo()` undid (Core Data's `redo()`).
    public func redo() {
        assertOnQueue("redo")
        undoManagerStorage?.redo()
    }

    /// Ends the current event (Core Data's `processPendingChanges()`; a `perform` block's end
    /// does the same): the edits made since the last event form one undo group, and fetched
    /// results controllers report what they changed before this returns.
    public func processPendingChanges() {
        assertOnQueue("process pending changes")
        endEvent()
    }

    /// What one registration undoes.
    enum UndoStep {
        /// An attribute (or relationship column) had `old`.
        case value(ManagedObject, attribute: Int, old: StoreValue)
        /// The object was inserted.
        case insert(ManagedObject)
        /// The object was deleted; `before` is its row at this level before (nil: it had none),
        /// `values` its values then (to bring it back once the deletion is saved).
        case delete(ManagedObject, before: PendingRow?, values: [StoreValue])
        /// The object's insert was undone; `row` puts it back.
        case reinsert(ManagedObject, row: PendingRow)
        /// The object's delete was undone; deleting it again redoes it.
        case deleteAgain(ManagedObject)
    }

    /// The undo manager recording this context's edits now, or nil.
    var recordingUndoManager: UndoManager? {
        guard let undoManager = undoManagerStorage, undoManager.isUndoRegistrationEnabled else { return nil }
        return undoManager
    }

    /// Registers `step` with the undo manager, opening an event group when none is open: it closes
    /// when the `perform` block ends, or else on the queue's next turn.
    func registerUndo(_ step: UndoStep, with undoManager: UndoManager) {
        let opens = undoManager.groupingLevel == 0 && undoManager.groupsByEvent
        undoManager.registerUndo(withTarget: self) { context in context.undo(step) }
        if opens, let serial = undoManager.openEventGroup {
            queue.async { [weak self] in self?.closeUndoEventGroup(serial) }
        }
    }

    /// Closes the event group a `perform` block's edits opened (the one numbered `serial`, when
    /// given). First the delete rules run for this event's deletes, as Core Data propagates
    /// deletes at the end of an event: what they do joins the deletes' group, so one undo puts a
    /// delete and its cascade back together (a save applies the rules again; they find nothing new).
    func closeUndoEventGroup(_ serial: UInt64? = nil) {
        guard let undoManager = undoManagerStorage, let open = undoManager.openEventGroup, serial == nil || serial == open else { return }
        if let coordinator, coordinator.hasRelationships,
           level.withLock({ $0.unsegmented.entities.values.contains { $0.rows.values.contains { $0.kind == .deleted } } }) {
            // A failure here (a fetch that cannot be read) is met again, and thrown, by the save.
            _ = try? applyDeleteRules(coordinator: coordinator)
        }
        undoManager.closeEventGroup(serial)
    }

    private func undo(_ step: UndoStep) {
        switch step {
        case .value(let object, let index, let old):
            guard object.managedObjectContext === self else { return }
            recordChange(of: object, attribute: index, to: old)
            forgetChangeIfUnchanged(object, attribute: index)
        case .insert(let object):
            guard object.managedObjectContext === self else { return }
            if let row = level.withLock({ $0.row(object.objectID) }), row.kind == .inserted {
                // Not saved since: the object leaves the context as if never inserted.
                putRow(nil, of: object)
                unregister(object)
                object.managedObjectContext = nil
                if let undoManager = recordingUndoManager { registerUndo(.reinsert(object, row: row), with: undoManager) }
            } else {
                delete(object)
            }
        case .deleteAgain(let object):
            delete(object)
        case .reinsert(let object, let row):
            register(object)
            putRow(row, of: object)
            if let undoManager = recordingUndoManager { registerUndo(.insert(object), with: undoManager) }
        case .delete(let object, let before, let values):
            let current = level.withLock { $0.row(object.objectID) }
            if let before, before.kind == .inserted {
                // Deleting a new object took it out of the context: it comes back as it was.
                register(object)
                putRow(before, of: object)
                if let undoManager = recordingUndoManager { registerUndo(.insert(object), with: undoManager) }
            } else if current?.kind == .deleted, object.managedObjectContext === self {
                putRow(before, of: object)
                if let undoManager = recordingUndoManager { registerUndo(.deleteAgain(object), with: undoManager) }
            } else {
                // The deletion was saved: the object comes back as a new insert of its last values.
                register(object)
                let sequence = level.withLock { $0.pending.takeSequence() }
                putRow(PendingRow(kind: .inserted, values: values, mask: .empty, sequence: sequence), of: object)
                if let undoManager = recordingUndoManager { registerUndo(.insert(object), with: undoManager) }
            }
        }
    }

    /// Drops an updated row's change of `index` when the value is the loaded one again (and the
    /// row, when nothing else changed): undoing every change leaves the object unchanged.
    private func forgetChangeIfUnchanged(_ object: ManagedObject, attribute index: Int) {
        let snapshot = object.loadedSnapshot()
        guard index < snapshot.count else { return }
        let id = object.objectID
        let emptied = level.withLock { level -> Bool in
            guard let row = level.row(id), row.kind == .updated, row.mask.contains(index), row.values[index] == snapshot[index] else { return false }
            return level.pending.modify(id.entityName) { changes -> Bool in
                guard var row = changes.rows[id.primaryKey] else { return false }
                row.mask.remove(index)
                if row.mask == .empty {
                    changes.removeRow(id.primaryKey)
                    return true
                }
                changes.rows[id.primaryKey] = row
                return false
            }
        }
        if emptied { retained.removeValue(forKey: id) }
    }

    /// Sets (or, with nil, removes) an object's row at this level, keeping the key index right.
    private func putRow(_ row: PendingRow?, of object: ManagedObject) {
        noteEventEdit(of: object)
        let id = object.objectID
        let keyIndices = object.entity.keyIndices
        let snapshot = row?.kind == .updated ? object.loadedSnapshot() : []
        level.withLock { level in
            level.hasObjectEdits = true
            level.pending.modify(id.entityName) { changes in
                guard let row else {
                    changes.removeRow(id.primaryKey)
                    return
                }
                changes.rows[id.primaryKey] = row
                guard !keyIndices.isEmpty, row.kind != .deleted else {
                    changes.setKey(nil, for: id.primaryKey)
                    return
                }
                var values = row.values
                if row.kind == .updated {
                    // An updated row is in the key index only when it changes the key.
                    guard keyIndices.contains(where: row.mask.contains) else {
                        changes.setKey(nil, for: id.primaryKey)
                        return
                    }
                    values = snapshot
                    row.mask.overlay(row.values, onto: &values)
                }
                let key = keyIndices.map { values[$0] }
                changes.setKey(key.contains(where: \.isNull) ? nil : key, for: id.primaryKey)
            }
        }
        if row == nil { retained.removeValue(forKey: id) } else { retained[id] = object }
    }
}
