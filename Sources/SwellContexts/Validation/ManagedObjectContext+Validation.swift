import SwellStoreCore

/// Validation on save (Store guarantees 55): every object a save moves is checked, and a save
/// with any failure throws them all in one error and moves nothing.
extension ManagedObjectContext {
    /// Throws every validation failure of the rows a save moves from `layer` (the rows not in a
    /// segment: a segment came from a child's save, which checked it).
    ///
    /// Inserted objects: every required column, every rule, the counted to-manys, the entity's
    /// insert validation. Updated: the changed columns, the counted to-manys, the update
    /// validation. Deleted: the delete validation. An object whose to-one moved counts again
    /// for the to-manys it left and joined.
    ///
    /// `segments` (inserts children saved, each checked there) are looked at for one thing only:
    /// the counted to-manys their to-ones and links join — two siblings' inserts, each within a
    /// maximum alone, may exceed it together. `denied` are the delete rule's refusals, listed with the rest.
    func validateForSave(_ layer: ChangeLayer, segments: [ChangeLayer], denied: [ValidationFailure],
                         coordinator: PersistentStoreCoordinator) throws {
        var failures = denied
        var recount: Set<ObjectID> = []
        // Looked up once: a save may move millions of rows, most of them with nothing to check.
        let storeIdentifier = coordinator.storeIdentifier
        func objectID(_ entity: String, _ key: Int64) -> ObjectID {
            ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
        }
        for segment in segments {
            for (entityName, changes) in segment.entities {
                guard let plan = coordinator.validationPlans[entityName], !plan.countedThroughColumn.isEmpty else { continue }
                for row in changes.rows.values {
                    for (index, destination, isJoin) in plan.countedThroughColumn {
                        if isJoin {
                            for key in JoinTable.decode(row.values[index]) { recount.insert(objectID(destination, key)) }
                        } else if case .integer(let key) = row.values[index] {
                            recount.insert(objectID(destination, key))
                        }
                    }
                }
            }
        }
        for (entityName, changes) in layer.entities where !changes.rows.isEmpty {
            guard let plan = coordinator.validationPlans[entityName], !plan.checksNothing,
                  let entity = coordinator.entitiesByName[entityName] else { continue }
            let hasValueChecks = !plan.required.isEmpty || !plan.checked.isEmpty
            for (primaryKey, row) in changes.rows {
                let id = objectID(entityName, primaryKey)
                switch row.kind {
                case .deleted:
                    if plan.validators.delete != nil, let failure = plan.closureFailure(.delete, of: object(with: id)) {
                        failures.append(failure)
                    }
                case .inserted, .updated:
                    let inserted = row.kind == .inserted
                    if hasValueChecks {
                        plan.valueFailures(row.values, at: inserted ? nil : row.mask, object: id, entity: entity, into: &failures)
                    }
                    if !plan.counted.isEmpty { recount.insert(id) }
                    let validator = inserted ? plan.validators.insert : plan.validators.update
                    if validator != nil, let failure = plan.closureFailure(inserted ? .insert : .update, of: object(with: id)) {
                        failures.append(failure)
                    }
                }
                for (index, destination, isJoin) in plan.countedThroughColumn where row.kind != .updated || row.mask.contains(index) {
                    func keys(_ value: StoreValue) -> [Int64] {
                        if isJoin { return JoinTable.decode(value) }
                        if case .integer(let key) = value { return [key] }
                        return []
                    }
                    // The destinations it joined, and those it left.
                    if row.kind != .deleted {
                        for key in keys(row.values[index]) { recount.insert(objectID(destination, key)) }
                    }
                    if row.kind != .inserted {
                        for key in keys((registeredObject(for: id) ?? object(with: id)).loadedSnapshot()[index]) {
                            recount.insert(objectID(destination, key))
                        }
                    }
                }
            }
        }
        for id in recount where layer.row(id)?.kind != .deleted {
            guard let plan = coordinator.validationPlans[id.entityName] else { continue }
            let destination = object(with: id)
            plan.countFailures(of: destination, into: &failures)
            // Its to-many changed from the other side: it is updated (the did-save notice says
            // so), and its update validation runs, unless its own row was checked above.
            if layer.row(id) == nil, !segments.contains(where: { $0.row(id) != nil }), plan.validators.update != nil,
               let failure = plan.closureFailure(.update, of: destination) {
                failures.append(failure)
            }
        }
        guard !failures.isEmpty else { return }
        // The same order for the same changes, whatever the dictionaries' order.
        failures.sort { ($0.object.entityName, $0.object.primaryKey, $0.key ?? "") < ($1.object.entityName, $1.object.primaryKey, $1.key ?? "") }
        throw StoreError.validationFailed(failures)
    }
}
