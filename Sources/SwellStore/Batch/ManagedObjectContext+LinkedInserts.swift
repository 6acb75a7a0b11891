import Foundation

/// How many rows of one entity a linked batch insert inserted, updated and left unchanged.
package struct LinkedInsertCounts: Sendable, Equatable {
    package var inserted = 0
    package var updated = 0
    package var unchanged = 0

    package init() {}
}

/// A linked batch insert's nested request `request` (by position) could not be planned.
package struct LinkedInsertFailure: Error {
    package let request: Int
    package let error: any Error
}

extension ManagedObjectContext {
    /// Batch inserts of columns whose last one links its rows to those of the others, as one
    /// transaction (the pipeline's nested records; package use only): the `nested` requests
    /// are decided against the store first, in order, each giving every row's primary key
    /// (the stored row's, or the one its new row gets); `records` makes the last request
    /// from them (to-one IDs and member lists, `BatchColumns.references`, `memberLists`);
    /// then all of it is committed at once on the root's queue, so a failure writes nothing.
    /// A new nested row whose key another writer stores meanwhile becomes that row, and the
    /// records' links follow it (store.md 32). Counts by entity; a record whose only change
    /// is a link counts as updated, a nested row only when its own attributes changed.
    ///
    /// Call it on this context's queue, not from the main queue (it waits for the root's).
    ///
    /// - Throws: `LinkedInsertFailure` when a nested request cannot be planned (its error
    ///   inside, e.g. `StoreError.invalidBatchRow` with its row), else what `execute` throws.
    package func executeLinkedInserts(_ nested: [BatchInsertRequest],
                                      records: ([[Int64]]) throws -> BatchInsertRequest) throws -> [String: LinkedInsertCounts] {
        assertOnQueue("execute linked batch inserts")
        let root = rootContext
        let policy = mergePolicy
        let (counts, mergeHere, changes) = try root.performAndWait {
            try root.linkedInsertsAtRoot(nested, records: records, policy: policy, executedIn: self)
        }
        if mergeHere { mergeChanges(changes) }
        return counts
    }

    private func linkedInsertsAtRoot(_ nested: [BatchInsertRequest], records: ([[Int64]]) throws -> BatchInsertRequest, policy: MergePolicy,
                                     executedIn caller: ManagedObjectContext) throws -> ([String: LinkedInsertCounts], Bool, ContextDidSaveChanges) {
        guard let coordinator else { throw StoreError.noPersistentStore }
        let store = try coordinator.store
        /// The entities planned, by name.
        var entities: [String: EntityDescription] = [:]
        func plan(_ request: BatchInsertRequest, primaryKeys: Bool) throws -> BatchWriter.PlannedInsert {
            guard case .columns(let columns) = request.rows else {
                throw StoreError.unsupported(store: "Swell", what: "linked batch inserts of rows other than columns")
            }
            let entity = try coordinator.entity(named: request.entityName)
            entities[entity.name] = entity
            var writer = BatchWriter(coordinator: coordinator, store: store, policy: policy, entity: entity)
            writer.reportsPrimaryKeys = primaryKeys
            return try writer.plan(columns, comparedAhead: nil)
        }
        var plans: [BatchWriter.PlannedInsert] = []
        var keys: [[Int64]] = []
        for (index, request) in nested.enumerated() {
            do {
                plans.append(try plan(request, primaryKeys: true))
            } catch {
                throw LinkedInsertFailure(request: index, error: error)
            }
            keys.append(plans[plans.count - 1].outcome.primaryKeys)
        }
        let last = try records(keys)
        plans.append(try plan(last, primaryKeys: false))
        // Every new row before the rows that point at them; updates and links after (CommitDriver's order).
        var changes = StoreChangeSet(operations: [], mergePolicy: policy)
        for planned in plans {
            changes.columnInserts += planned.columnInserts
            changes.operations += planned.operations
            changes.columnUpdates += planned.columnUpdates
            changes.linkWrites += planned.linkWrites
        }
        var result = StoreCommitResult()
        if !changes.operations.isEmpty || !changes.columnInserts.isEmpty || !changes.columnUpdates.isEmpty || !changes.linkWrites.isEmpty {
            coordinator.beginCommit()
            do {
                result = try store.commit(changes)
            } catch {
                coordinator.noteFailedCommit()
                throw error
            }
            coordinator.noteCommit(touched: .anyRow)
        }
        var counts: [String: LinkedInsertCounts] = [:]
        for planned in plans { counts[planned.entity, default: LinkedInsertCounts()].unchanged += planned.outcome.unchangedKeys?.keys.count ?? 0 }
        for id in result.inserted { counts[id.entityName, default: LinkedInsertCounts()].inserted += 1 }
        var unchanged = Set<ObjectID>()
        for planned in plans { unchanged.formUnion(planned.outcome.unchanged) }
        // A new row whose key another writer stored meanwhile became that row (by the policy).
        for survivor in result.merged.values where !result.inserted.contains(survivor) && result.updated[survivor] == nil {
            unchanged.insert(survivor)
        }
        for (id, names) in result.updated where !result.inserted.contains(id) {
            unchanged.remove(id)
            // A nested row counts as updated for its own attributes, not for a link another row changed.
            if id.entityName == last.entityName
                || entities[id.entityName]?.attributes.contains(where: { attribute in
                    attribute.destination == nil && attribute.join == nil && names.contains(attribute.name)
                }) == true {
                counts[id.entityName, default: LinkedInsertCounts()].updated += 1
            }
        }
        for id in unchanged { counts[id.entityName, default: LinkedInsertCounts()].unchanged += 1 }
        var notice = ContextDidSaveChanges()
        notice.inserted = result.inserted
        notice.updated = result.updated
        notice.deleted = result.deleted
        return (counts, announce(notice, coordinator: coordinator, executedIn: caller), notice)
    }
}
