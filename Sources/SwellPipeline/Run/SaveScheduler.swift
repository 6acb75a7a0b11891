import Foundation
import Logging
import SwellContexts
import SwellLocks

/// Moves the batches upsert workers saved into the view context up the stack:
/// view → writer on its own serial queue (the view context's changes all came
/// from workers, so the main queue does no per-row work), writer → disk on the
/// writer's queue, with at most one save waiting at a time.
///
/// It numbers the saved batches, counts them in the report once the writer has
/// committed them (so the report tells what is on disk), and holds workers back
/// while saved batches are not on disk (backpressure: memory stays bounded when
/// the disk is slower than parsing).
///
/// `Sendable`: its own state is a `LockedValue` and the `SaveBacklog` (which locks itself).
final class SaveScheduler: Sendable {
    /// What one worker save did to the rows it moved.
    struct BatchCounts: Sendable {
        var inserted = 0
        var updated = 0
        var unchanged = 0
        /// Version 2: counts of the entities nested records went into.
        var nested: [String: RunReport.Counts] = [:]
    }

    private let container: PersistentContainer
    private let state: SourceRunState
    private let backlog: SaveBacklog<BatchCounts>
    private let sourceName: String
    private let logger: Logger
    private let redactor: Redactor
    /// Serialises the view → writer moves, off the main queue.
    private let saver = DispatchQueue(label: "swell.saver")
    /// Whether a save is waiting on the saver's queue.
    private let scheduled = LockedValue(false)

    init(container: PersistentContainer, state: SourceRunState, backlog: SaveBacklog<BatchCounts>, sourceName: String,
         logger: Logger, redactor: Redactor) {
        self.container = container
        self.state = state
        self.backlog = backlog
        self.sourceName = sourceName
        self.logger = logger
        self.redactor = redactor
    }

    /// A worker's batch is in the view context: number it, keep its counts until
    /// the writer commits it, and ask for it to be written.
    func batchSaved(_ counts: BatchCounts) {
        backlog.batchSaved(counts)
        requestSave()
    }

    /// Waits until every batch saved so far is on disk (or the run failed): a source with
    /// nested records looks its keys and links up in the store, so it must find there
    /// what its earlier batches wrote.
    func waitForDisk() {
        backlog.waitUntilCommitted { state.failure != nil }
    }

    /// Schedules a view → writer move and a writer save, at most one waiting at a time.
    private func requestSave() {
        let schedule = scheduled.withLock { scheduled -> Bool in
            if scheduled { return false }
            scheduled = true
            return true
        }
        guard schedule else { return }
        saver.async { [self] in
            scheduled.withLock { $0 = false }
            let moved = backlog.savedCount
            do {
                try moveViewChangesToWriter()
            } catch {
                state.fail(PipelineError(.io, redactor("source \(sourceName): saving into the writer failed: \(error)"), underlying: error))
                return
            }
            let writer = container.writerContext
            writer.perform { [self] in
                logger.debug("writer saving", metadata: ["source": "\(sourceName)", "batches": "\(moved)"])
                do {
                    try writer.save()
                    state.count(committed: backlog.committed(upTo: moved))
                } catch {
                    state.fail(PipelineError(.io, redactor("source \(sourceName): writing the store failed: \(error)"), underlying: error))
                    backlog.committed(upTo: moved, written: false)
                }
            }
        }
    }

    /// Saves the view context into the writer: off the main queue when only
    /// workers' changes are there, else (something edited its objects) on it.
    private func moveViewChangesToWriter() throws {
        let view = container.viewContext
        if try BulkSession(view).saveIntoParentOffQueue() == nil {
            try view.performAndWait { try view.save() }
        }
    }

    /// The last save, after the workers ended: `metadata` (the incremental
    /// cursor, HTTP validators, the source's position removed; a nil value removes
    /// its key) is set in the view context, then everything saved so far moves to
    /// the writer and goes to disk in one transaction, and every batch counts in the report.
    func saveLast(metadata: [String: String?]) throws {
        let view = container.viewContext
        let writer = container.writerContext
        if !metadata.isEmpty {
            view.performAndWait {
                for (key, value) in metadata { view.setStoreMetadata(value, forKey: key) }
            }
        }
        try saver.sync { try moveViewChangesToWriter() }
        try writer.performAndWait { try writer.save() }
        // Everything saved so far is on disk now.
        state.count(committed: backlog.committed(upTo: .max))
    }
}
