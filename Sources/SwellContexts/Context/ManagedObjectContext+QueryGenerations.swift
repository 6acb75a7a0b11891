import Foundation
import Logging
import SwellStoreCore

extension ManagedObjectContext {
    // MARK: Query generations (pinned reads)

    /// The query generation this context is pinned to, or nil when it is unpinned (Store
    /// guarantees 56). Pass it to another context's ``setQueryGenerationFrom(_:)`` to pin that
    /// context to the same snapshot. Nil also for a child that reads through its parent's pin
    /// without one of its own. Any queue may read it.
    public var queryGenerationToken: QueryGenerationToken? {
        ownQueryGenerationLease.map { QueryGenerationToken(generation: $0.generation) }
    }

    /// Pins this context's reads to a state of the store (Core Data's query generations, Store
    /// guarantees 56): with ``QueryGenerationToken/current``, the store's last committed state,
    /// taken now; with another context's ``queryGenerationToken``, that context's snapshot; with
    /// nil, none (the context reads the newest state again).
    ///
    /// Fetches, counts, faults, `object(with:)`, relationships and result-type fetches of a pinned
    /// context — and of its children that have no pin of their own — answer from the snapshot
    /// (under the unsaved changes of the context and its parents) while other contexts and
    /// processes commit. The context moves to the store's newest state, staying pinned, when it
    /// saves (every `save()`, even one with nothing to save), is reset, or merges changes
    /// (`mergeChanges`, automatic merges), and when its root context commits (what it saw as its
    /// parents' unsaved changes is then in the store). Saves resolve uniqueness conflicts by the
    /// merge policy against the store's newest state, never the snapshot. Objects already
    /// registered keep their values: refresh them (`refreshAllObjects()`) or fetch again to see
    /// the new generation. Call on the context's queue.
    ///
    /// - Throws: `StoreError` `.invalidQueryGeneration` for a token of another store, or one whose
    ///   snapshot ended (no context was pinned to it any more); `.noPersistentStore`; a store
    ///   error when the snapshot cannot be opened (no connection).
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws(StoreError) {
        assertOnQueue("set the query generation")
        guard let token else {
            _ = replaceQueryGenerationLease(with: nil)
            return
        }
        guard let coordinator else { throw .noPersistentStore }
        let store = try coordinator.store
        let lease: QueryGenerationLease
        if let generation = token.generation {
            guard generation.store == ObjectIdentifier(store) else {
                throw .invalidQueryGeneration(reason: "the token was read from another store than \(displayName)'s")
            }
            lease = try generation.lease()
        } else {
            lease = try QueryGeneration(opening: store).lease()
        }
        coordinator.queryGenerationsUsed.store(true, ordering: .releasing)
        _ = replaceQueryGenerationLease(with: lease)
    }

    /// Moves this context, when pinned, to the store's newest state, staying pinned: after its
    /// save, its reset, or a merge.
    func advanceQueryGeneration(after action: String) {
        guard let coordinator, coordinator.queryGenerationsUsed.load(ordering: .acquiring) else { return }
        var opened: QueryGeneration?
        var held: [QueryGenerationLease] = []
        advanceQueryGeneration(after: action, coordinator: coordinator, sharing: &opened, holding: &held)
    }

    /// After a commit of this root context, before its committed changes leave its in-flight
    /// level: it and every descendant pinned to a generation move to the store's newest state
    /// (one new snapshot for all of them), so that no pinned context stops seeing what the
    /// commit moved from the levels into the store.
    func advanceQueryGenerationsAfterCommit() {
        guard let coordinator, coordinator.queryGenerationsUsed.load(ordering: .acquiring) else { return }
        var opened: QueryGeneration?
        // Leases a context did not take (it changed its pin meanwhile) are held until the walk
        // ends: the new generation must not close under the descendants still to move.
        var held: [QueryGenerationLease] = []
        var pending: [ManagedObjectContext] = [self]
        while let context = pending.popLast() {
            context.advanceQueryGeneration(after: "its root's commit", coordinator: coordinator, sharing: &opened, holding: &held)
            pending += context.children
        }
        held.removeAll()
    }

    /// Moves this context's own pin, if it has one, to `opened` (opening it, at the store's
    /// newest state, when nil). When no snapshot can be opened the context is left unpinned
    /// (reading the newest state, as a new pin would) and its `logger` says why.
    private func advanceQueryGeneration(after action: String, coordinator: PersistentStoreCoordinator,
                                        sharing opened: inout QueryGeneration?, holding held: inout [QueryGenerationLease]) {
        guard let current = ownQueryGenerationLease else { return }
        do {
            let generation = try opened ?? QueryGeneration(opening: coordinator.store)
            opened = generation
            if let released = replaceQueryGenerationLease(with: try generation.lease(), ifStill: current) { held.append(released) }
        } catch {
            _ = replaceQueryGenerationLease(with: nil, ifStill: current)
            logger.error("cannot pin the context to the store's newest state: it reads unpinned", metadata: [
                "context": "\(displayName)", "after": "\(action)", "error": "\(error)",
            ])
        }
    }

    /// Runs `body` against the store as this context reads it: the query generation it is pinned
    /// to (its own, or its nearest ancestor's), else the store's last committed state.
    ///
    /// Saves read the newest state (`coordinator.store`) instead: a merge policy decides against it.
    func readStore<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        guard let coordinator else { throw StoreError.noPersistentStore }
        // Also a pinned context reads nothing once its coordinator has no store.
        let store = try coordinator.store
        if coordinator.queryGenerationsUsed.load(ordering: .acquiring), let lease = queryGenerationLease {
            return try lease.generation.reader.read(body)
        }
        return try store.read(body)
    }
}
