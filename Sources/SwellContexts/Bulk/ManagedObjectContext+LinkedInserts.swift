import Foundation
import SwellStoreCore

/// How many rows of one entity a linked batch insert inserted, updated and left unchanged.
public struct LinkedInsertCounts: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0

    public init() {}
}

/// Rows of one entity that point at a linked insert's records by a to-one (the inverse of
/// the records' to-many `inverse`), planned after the records, from their IDs: each request
/// carries a reference column named `relationship` (`BatchColumns.references`). Stored rows
/// whose `relationship` names one of `owners` and that no request carries are unlinked (their
/// to-one set to nil): each owner's set becomes exactly the rows that point at it.
public struct LinkedChildren: Sendable {
    public var entity: String
    public var requests: [BatchInsertRequest]
    public var relationship: String
    public var inverse: String
    public var owners: [Int64]

    public init(entity: String, requests: [BatchInsertRequest], relationship: String, inverse: String, owners: [Int64]) {
        self.entity = entity
        self.requests = requests
        self.relationship = relationship
        self.inverse = inverse
        self.owners = owners
    }
}

/// A linked batch insert's nested request `request` (by position) could not be planned.
public struct LinkedInsertFailure: Error {
    public let request: Int
    public let error: any Error
}

extension ManagedObjectContext {
    /// Batch inserts of columns whose last one links its rows to those of the others, as one
    /// transaction (the pipeline's nested records; package use only): the `nested` requests
    /// are decided against the store first, in order, each giving every row's primary key
    /// (the stored row's, or the one its new row gets); `records` makes the last request
    /// from them (to-one IDs and member lists, `BatchColumns.references`, `memberLists`);
    /// then all of it is committed at once on the root's queue, so a failure writes nothing.
    /// A new nested row whose key another writer stores meanwhile becomes that row, and the
    /// records' links follow it (Store guarantees 32). Counts by entity; a record whose only change
    /// is a link counts as updated, a nested row only when its own attributes changed.
    ///
    /// Every request's `storeMetadata` is committed in that one transaction (a later request's
    /// value for a key over an earlier one's).
    ///
    /// `children` (given each record row's ID) makes the rows that point at the records
    /// (`LinkedChildren`), planned last; a record whose set of them changed (one inserted,
    /// changed, moved away or unlinked) counts as updated.
    ///
    /// Call it on this context's queue, not from the main queue (it waits for the root's).
    ///
    /// - Throws: `LinkedInsertFailure` when a nested request cannot be planned (its error
    ///   inside, e.g. `StoreError.invalidBatchRow` with its row; children's requests are
    ///   numbered after the nested ones), else what `execute` throws.
    package func executeLinkedInserts(_ nested: [BatchInsertRequest],
                                      records: ([[Int64]]) throws -> BatchInsertRequest,
                                      children: (([Int64]) throws -> [LinkedChildren])? = nil) throws -> [String: LinkedInsertCounts] {
        assertOnQueue("execute linked batch inserts")
        let root = rootContext
        let policy = mergePolicy
        let (counts, mergeHere, changes) = try root.performAndWait {
            try root.linkedInsertsAtRoot(nested, records: records, children: children, policy: policy, executedIn: self)
        }
        if mergeHere { mergeChanges(changes) }
        return counts
    }

    private func linkedInsertsAtRoot(_ nested: [BatchInsertRequest], records: ([[Int64]]) throws -> BatchInsertRequest,
                                     children: (([Int64]) throws -> [LinkedChildren])?, policy: MergePolicy,
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
            var writer = BatchWriter(coordinator: coordinator, store: store, policy: policy, author: transactionAuthor, contextName: name,
                                     entity: entity)
            writer.reportsPrimaryKeys = primaryKeys
            writer.checksRules = !request.rulesChecked
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
        plans.append(try plan(last, primaryKeys: children != nil))
        let recordsPlan = plans.count - 1
        var followers = ChildLinks()
        if let children {
            let recordKeys = plans[plans.count - 1].outcome.primaryKeys
            let newRecords = Set(plans[plans.count - 1].ids)
            var number = nested.count
            for group in try children(recordKeys) {
                try followers.plan(group, newOwners: newRecords, store: store, entities: coordinator.entitiesByName) { request in
                    defer { number += 1 }
                    do {
                        plans.append(try plan(request, primaryKeys: true))
                    } catch {
                        throw LinkedInsertFailure(request: number, error: error)
                    }
                    return plans[plans.count - 1].outcome.primaryKeys
                } matching: { request in try makePlan(request).storeQuery }
            }
        }
        // Every new row before the rows that point at them; updates and links after (CommitDriver's order).
        var changes = StoreChangeSet(operations: followers.unlinks, mergePolicy: policy)
        changes.author = transactionAuthor
        changes.contextName = name
        // Every request's store metadata goes in the one transaction (the records' last).
        for request in nested + [last] { changes.metadata.merge(request.storeMetadata) { _, later in later } }
        for planned in plans {
            changes.columnInserts += planned.columnInserts
            changes.operations += planned.operations
            changes.columnUpdates += planned.columnUpdates
            changes.linkWrites += planned.linkWrites
        }
        var result = StoreCommitResult()
        if !changes.operations.isEmpty || !changes.columnInserts.isEmpty || !changes.columnUpdates.isEmpty || !changes.linkWrites.isEmpty
            || !changes.metadata.isEmpty {
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
            // A nested row counts as updated for its own attributes, not for a link another row
            // changed; a row pointing at the records by its own to-one, for that too.
            if id.entityName == last.entityName || followers.concerns(id.primaryKey, of: id.entityName)
                || entities[id.entityName]?.attributes.contains(where: { attribute in
                    attribute.destination == nil && attribute.join == nil && names.contains(attribute.name)
                }) == true {
                counts[id.entityName, default: LinkedInsertCounts()].updated += 1
            }
        }
        var notice = ContextDidSaveChanges()
        notice.inserted = result.inserted
        notice.updated = result.updated
        notice.deleted = result.deleted
        // A record whose children changed counts as updated: its to-many changed.
        let touched = followers.touchedOwners(after: result)
        let unchangedRecords = touched.isEmpty ? [] : Set(plans[recordsPlan].outcome.unchangedKeys?.keys ?? [])
        for (owner, inverse) in touched {
            let id = ObjectID(entityName: last.entityName, primaryKey: owner, storeIdentifier: store.identifier)
            guard !result.inserted.contains(id) else { continue }
            notice.updated[id, default: []].insert(inverse)
            guard result.updated[id] == nil else { continue }   // counted as updated above
            if unchanged.remove(id) != nil {
                counts[last.entityName, default: LinkedInsertCounts()].updated += 1
            } else if unchangedRecords.contains(owner) {
                counts[last.entityName, default: LinkedInsertCounts()].unchanged -= 1
                counts[last.entityName, default: LinkedInsertCounts()].updated += 1
            }
        }
        for id in unchanged { counts[id.entityName, default: LinkedInsertCounts()].unchanged += 1 }
        return (counts, announce(notice, coordinator: coordinator, executedIn: caller), notice)
    }
}
