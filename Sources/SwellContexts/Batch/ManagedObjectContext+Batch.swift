import Foundation
import SwellLocks
import SwellStoreCore

extension ManagedObjectContext {
    // MARK: Batch requests (Store guarantees 37–43)

    /// Runs a batch request on this context's stack and returns what it did.
    ///
    /// The request runs on the root (writer) context's queue, serialised with its saves,
    /// as one transaction: all of it is on disk, or none of it. No object is registered in
    /// any context; afterwards the root context, other root contexts and children of the
    /// root that merge changes from their parent automatically (a container's view context)
    /// merge the change notice, as after a save. Other contexts learn of it through
    /// `mergeChanges(fromRemoteContextSave:into:)` with `result.changes`. A context's
    /// unsaved changes to a row the request wrote meet it at that context's save, under its
    /// merge policy, as with any row another context saved.
    ///
    /// Call it on this context's queue (in `perform`); it waits for the root's queue. From
    /// the main queue, prefer `try await execute(_:)`, which does not block it.
    ///
    /// - Throws: `StoreError.invalidBatchRow`, `.constraintConflict` (merge policy `.error`),
    ///   `.typeMismatch`, `.unknownAttribute`, `.invalidPredicate`, `.invalidExpression`,
    ///   `.missingRequiredValue`, `.deleteDenied`, or the store's error; nothing is written then.
    @discardableResult
    @available(*, noasync, message: "in async code use `try await execute(_:)`: it runs on the writer's queue without blocking the caller's")
    public func execute(_ request: any BatchRequest) throws -> BatchResult {
        assertOnQueue("execute a batch request")
        let root = rootContext
        let policy = mergePolicy
        let (result, mergeHere): (BatchResult, Bool)
        if Thread.isMainThread && !root.queue.isCurrent {
            // Not on the main thread even while the main queue waits (Store guarantees 38): a
            // synchronous dispatch would run the block on the calling thread.
            let done = DispatchSemaphore(value: 0)
            let outcome = LockedValue<Result<(BatchResult, Bool), any Error>?>(nil)
            root.perform {
                outcome.withLock { $0 = Result { try root.executeAtRoot(request, policy: policy, executedIn: self) } }
                done.signal()
            }
            done.wait()
            (result, mergeHere) = try outcome.withLock { $0! }.get()
        } else {
            (result, mergeHere) = try root.performAndWait { () throws -> (BatchResult, Bool) in
                try root.executeAtRoot(request, policy: policy, executedIn: self)
            }
        }
        if mergeHere { mergeChanges(result.notice) }
        return result
    }

    /// Compares a batch insert of columns with the stored rows now, on this context's queue
    /// and a reader's snapshot, so that its execution soon after (from any context of this
    /// coordinator) has less to do on the writer's queue: a pipeline compares batch *k + 1*
    /// while batch *k* is written. At the execution, the rows a commit since may have written
    /// are compared again (all of them after a save or a failed commit, while another root
    /// context's commit is under way, when the comparison is many commits old or was made on
    /// another coordinator), so the request does what it would have done without this. A request
    /// whose rows are not columns, or a comparison that fails, is left to the execution.
    package func compareAhead(_ request: BatchInsertRequest) {
        assertOnQueue("compare a batch insert ahead")
        // Errors are dropped on purpose: comparing ahead only saves the execution work, and the
        // execution meets the same store, entity and columns, and throws what is wrong with them.
        guard let coordinator, case .columns(let columns) = request.rows,
              let store = try? coordinator.store, let entity = try? coordinator.entity(named: request.entityName) else { return }
        let writer = BatchWriter(coordinator: coordinator, store: store, policy: mergePolicy, author: transactionAuthor, contextName: name,
                                     entity: entity)
        request.comparedAhead = try? writer.compareAhead(columns)
    }

    /// Runs a batch request on this context's stack from any queue or task, without
    /// blocking the caller's queue; see `execute(_:)`.
    @discardableResult
    public func execute(_ request: any BatchRequest) async throws -> BatchResult {
        let root = rootContext
        let policy = mergePolicy
        return try await root.perform(schedule: .enqueued) { () throws -> BatchResult in
            try root.executeAtRoot(request, policy: policy, executedIn: nil).0
        }
    }

    /// Brings a batch request's change notice (`BatchResult.changes`: `"inserted"`,
    /// `"updated"`, `"deleted"` object IDs), or any such notice, into `contexts`: their
    /// registered objects that were updated take the stored values (keeping their unsaved
    /// changes), deleted ones are deleted in them, and their fetched results controllers
    /// report the changes. Runs on each context's queue and waits for it.
    public static func mergeChanges(fromRemoteContextSave changes: [String: Set<ObjectID>], into contexts: [ManagedObjectContext]) {
        let notice = ContextDidSaveChanges(notice: changes)
        for context in contexts {
            context.performAndWait { context.mergeChanges(notice) }
        }
    }

    /// The context at the root of this one's chain (the writer of a container's stack).
    var rootContext: ManagedObjectContext {
        var context = self
        while let parent = context.parent { context = parent }
        return context
    }

    /// On the root's queue: runs the request, then the contexts that merge by themselves
    /// take its notice (`executedIn`, when one of them, is left to its caller, which is on
    /// its queue: returned true).
    private func executeAtRoot(_ request: any BatchRequest, policy: MergePolicy,
                               executedIn caller: ManagedObjectContext?) throws -> (BatchResult, Bool) {
        guard let coordinator else { throw StoreError.noPersistentStore }
        let store = try coordinator.store
        let outcome: BatchWriter.Outcome
        let writtenKind: BatchResult.Written
        switch request {
        case let insert as BatchInsertRequest:
            var writer = BatchWriter(coordinator: coordinator, store: store, policy: policy, author: transactionAuthor, contextName: name,
                                     entity: try coordinator.entity(named: insert.entityName))
            writer.reportsPrimaryKeys = insert.reportsPrimaryKeys
            writer.checksRules = !insert.rulesChecked
            writer.metadata = insert.storeMetadata
            outcome = try writer.insert(insert)
            writtenKind = .insertedAndUpdated
        case let update as BatchUpdateRequest:
            let writer = BatchWriter(coordinator: coordinator, store: store, policy: policy, author: transactionAuthor, contextName: name,
                                     entity: try coordinator.entity(named: update.entityName))
            var fetch = FetchRequest(entityName: update.entityName)
            fetch.predicate = update.predicate
            outcome = try writer.update(update, plan: makePlan(fetch))
            writtenKind = .insertedAndUpdated
        case let delete as BatchDeleteRequest:
            outcome = try batchDelete(delete, coordinator: coordinator, store: store, policy: policy)
            writtenKind = .deleted
        default:
            throw StoreError.unsupported(store: "Swell", what: "the batch request \(type(of: request))")
        }
        var result = BatchResult(resultType: request.resultType, written: writtenKind, changes: outcome.changes, unchanged: outcome.unchanged,
                                 unchangedKeys: outcome.unchangedKeys)
        result.primaryKeys = outcome.primaryKeys
        return (result, announce(outcome.changes, coordinator: coordinator, executedIn: caller))
    }

    /// On the root's queue, after a batch commit: the root takes `changes`, and so do the
    /// contexts that merge by themselves (`caller`, when one of them, is left to its caller,
    /// which is on its queue: returns true).
    func announce(_ changes: ContextDidSaveChanges, coordinator: PersistentStoreCoordinator, executedIn caller: ManagedObjectContext?) -> Bool {
        guard !changes.isEmpty else { return false }
        var mergeInCaller = false
        refreshRegistered(changes)
        let others = coordinator.rootContexts.filter { $0 !== self && $0.automaticallyMergesChangesFromParent }
        for context in others + children.filter(\.automaticallyMergesChangesFromParent) {
            if context === caller {
                mergeInCaller = true
            } else {
                context.perform { context.mergeChanges(changes) }
            }
        }
        return mergeInCaller
    }

    /// A batch delete: the rows it names are deleted with their delete rules by a context of
    /// its own on this root's coordinator, saved as one transaction (a `deny` refuses it all).
    private func batchDelete(_ request: BatchDeleteRequest, coordinator: PersistentStoreCoordinator, store: any PersistentStore,
                             policy: MergePolicy) throws -> BatchWriter.Outcome {
        var ids: [ObjectID] = []
        switch request.target {
        case .fetch(let fetch):
            let plan = try makePlan(fetch)
            try store.read { reader in
                try reader.forEachRow(plan.storeQuery) { ids.append(objectID(plan.entity.name, $0.primaryKey)) }
            }
        case .objectIDs(let requested):
            // IDs of no stored object (deleted, or of another store) are skipped.
            let byEntity = Dictionary(grouping: requested.filter { $0.storeIdentifier == store.identifier }, by: \.entityName)
            for (name, group) in byEntity.sorted(by: { $0.key < $1.key }) {
                let entity = try coordinator.entity(named: name)
                let found = try store.read { reader in try reader.rows(primaryKeys: group.map(\.primaryKey), entity: entity) }
                ids += group.filter { found[$0.primaryKey] != nil }
            }
        }
        guard !ids.isEmpty else { return BatchWriter.Outcome() }
        let deleter = ManagedObjectContext(concurrencyType: .privateQueue)
        deleter.name = name ?? "batch delete"
        deleter.transactionAuthor = transactionAuthor
        deleter.persistentStoreCoordinator = coordinator
        deleter.mergePolicy = policy
        deleter.logger = logger
        var outcome = BatchWriter.Outcome()
        outcome.changes = try deleter.performAndWait { () throws -> ContextDidSaveChanges in
            for id in Set(ids) { deleter.delete(deleter.object(with: id)) }
            return try deleter.saveReturningChanges()
        }
        return outcome
    }
}

extension ContextDidSaveChanges {
    /// The changes of a change notice (`"inserted"`, `"updated"`, `"deleted"` IDs; updated
    /// attributes unnamed).
    init(notice: [String: Set<ObjectID>]) {
        self.init()
        inserted = notice["inserted"] ?? []
        deleted = notice["deleted"] ?? []
        for id in notice["updated"] ?? [] { updated[id] = [] }
    }
}

extension BatchResult {
    /// Which rows `count` and `objectIDs` report.
    enum Written {
        case insertedAndUpdated
        case deleted
    }

    /// The result as a did-save notice.
    var notice: ContextDidSaveChanges { ContextDidSaveChanges(notice: changes) }
}
