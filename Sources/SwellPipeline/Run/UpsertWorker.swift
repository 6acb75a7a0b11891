import Foundation
import Logging
import SwellCSV
import SwellCalendar
import SwellContexts

/// An upsert worker: a thread with its own private child context of the view context,
/// taking chunks of records from its queue; its `RecordBatchBuilder` maps them (the key
/// came mapped from the router), rejects the bad ones and de-duplicates, and the worker
/// writes and saves what it built.
///
/// Workers are the objects write stage (`WriteStage.objects`): records with nested objects
/// of the shapes `GraphShape` leaves out, and append mode's, read whole as trees
/// (`TreeRecordSink`) and routed by key. An append-mode record goes into columns, and
/// every `batchSize` records become one batch insert executed from the worker's context
/// (`runFlat`).
///
/// Records with nested objects are upserted object by object (`NestedUpsert`) into the
/// worker's context, which every `batchSize` records saves into the view context and lets the rows go;
/// after each save the worker waits until the batches are on disk (its look-ups read the
/// store), and the `SaveScheduler` moves them up.
///
/// A failed run does not stop a worker: it keeps saving the valid records already
/// fetched, so earlier pages stay saved.
///
/// Each save carries the source's position (`PositionBook`, the worker's lane its number):
/// the router says when a page is complete, and when positions are kept a full batch waits
/// for that word or the next records, so it says which pages its records of are whole.
struct UpsertWorker: Sendable {
    /// Maps, rejects and de-duplicates each chunk, and counts what it kept.
    let builder: RecordBatchBuilder
    let batchSize: Int
    let container: PersistentContainer
    let scheduler: SaveScheduler
    /// Every entity of the pipeline (nested mappings upsert into them).
    let pipelineEntities: [PipelineEntity]
    /// The run's log: a failure the run cannot report (it reports its first) goes here.
    let logger: Logger
    /// Where the source's position is kept.
    let positions: PositionBook

    private var source: SourceSpec { builder.source }
    private var entity: PipelineEntity { builder.entity }
    private var mapper: RecordMapper { builder.mapper }
    private var state: SourceRunState { builder.state }
    private var redactor: Redactor { builder.redactor }

    /// Starts worker `number` on its own thread, taking from `queue`; it leaves `group` when the queue is closed and drained.
    func start(number: Int, queue: BatchQueue<WorkerInput>, group: DispatchGroup) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            run(number: number, queue: queue)
        }
        thread.name = "swell.upsert.\(source.name).\(number)"
        thread.start()
    }

    private func run(number: Int, queue: BatchQueue<WorkerInput>) {
        let context = container.newBackgroundContext()
        context.name = "\(source.name).upsert.\(number)"
        let patterns = DatePatterns()
        guard !source.nested.isEmpty else {
            runFlat(number: number, context: context, queue: queue, patterns: patterns)
            return
        }
        var unsaved = 0
        context.performAndWait { BulkSession(context).reserveRows(batchSize, entity: mapper.entity) }
        // Version 2: records with nested objects are upserted object by object (`NestedUpsert`).
        var graph: NestedUpsert?
        if !source.nested.isEmpty {
            do {
                graph = try context.performAndWait { () throws -> NestedUpsert in
                    let root = try BulkSession(context).entity(named: entity.name)
                    let plans = try source.nested.map {
                        try NestedPlan(mapping: $0, parent: root, pipelineEntities: pipelineEntities,
                                       storage: { try BulkSession(context).entity(named: $0) }, dates: source.dates)
                    }
                    return NestedUpsert(root: root, plans: plans)
                }
            } catch {
                state.fail(error as? PipelineError ?? PipelineError(.other, "source \(source.name): \(error)", underlying: error))
                while queue.take() != nil {}
                return
            }
        }
        /// Records of the batch that arrived unchanged: they count with the batch's save.
        var unchanged = 0
        /// Pages before this one have all their records of this worker taken (`WorkerInput.pageComplete`).
        var whole = 0
        /// The batch is full and waits for word of its page or the next records (positions kept).
        var savePending = false
        let keepsPositions = positions.keepsPositions
        /// On the context's queue: `work` inserts and says whether the batch is
        /// full; a full batch is saved, and so are the valid records when `work` failed.
        func step(_ work: () throws -> Bool) -> (SaveScheduler.BatchCounts?, PipelineError?) {
            context.performAndWait {
                do {
                    guard try work() else { return (nil, nil) }
                    unsaved = 0
                    return (try saveBatch(in: context, lane: number, wholePages: keepsPositions ? whole : nil,
                                          unchanged: &unchanged, graph: &graph), nil)
                } catch {
                    unsaved = 0
                    // The run fails with `error`; saving the valid records may fail too, and
                    // then `error` (the first failure) is the one reported, and this one logged.
                    let failure = error as? PipelineError ?? savingFailed(error)
                    // The batch's page is not saved whole: later saves keep the position before it.
                    positions.cap(at: whole)
                    do {
                        return (try saveBatch(in: context, lane: number, wholePages: keepsPositions ? whole : nil,
                                              unchanged: &unchanged, graph: &graph), failure)
                    } catch {
                        logger.error("saving the valid records of a failed batch failed too", metadata: [
                            "source": "\(source.name)", "worker": "\(context.name ?? "-")",
                            "error": "\(savingFailed(error).message)", "after": "\(failure.message)",
                        ])
                        return (nil, failure)
                    }
                }
            }
        }
        /// Saves what `work` leaves (when it says to), as a step does, and hands the save on.
        func saveStep(_ work: () throws -> Bool) {
            let (saved, failure) = step(work)
            if let saved { scheduler.batchSaved(saved) }
            // The run fails, but this worker keeps saving the valid records already fetched.
            if let failure { state.fail(failure) }
            // Nested records wait for the saved batches to be on disk (their look-ups read the store).
            if saved != nil { scheduler.waitForDisk() }
        }
        while let input = queue.take() {
            guard case .records(let chunk) = input else {
                if case .pageComplete(let page) = input { whole = page + 1 }
                if savePending {
                    savePending = false
                    saveStep { true }
                } else if unsaved == 0 {
                    positions.advance(lane: number, to: whole)
                }
                continue
            }
            if savePending {
                savePending = false
                saveStep { true }
            }
            saveStep {
                unchanged += try insert(chunk, in: context, patterns: patterns, graph: &graph)
                unsaved += chunk.count
                guard unsaved >= batchSize else { return false }
                savePending = keepsPositions
                return !keepsPositions
            }
        }
        if unsaved > 0 {
            let (saved, failure) = step { true }
            if let saved { scheduler.batchSaved(saved) }
            if let failure { state.fail(failure) }
        }
        guard graph != nil else { return }
        // Last, once everything is on disk (stored rows, so their delete rules apply when the
        // deletes are saved): the objects `cascade` relationships let go of that nothing holds any more.
        // Not after a failure: the record that would have listed one again may never have come.
        scheduler.waitForDisk()
        guard state.failure == nil else { return }
        let (saved, failure) = step { try graph!.finish(in: context) > 0 }
        if let saved { scheduler.batchSaved(saved) }
        if let failure { state.fail(failure) }
    }

    /// A flat source in append mode (the others are read straight into columns on the
    /// fetch thread: `ColumnRecordSink`): each chunk's records are mapped into columns,
    /// the keys already stored are rejected, and every `batchSize` records go to the
    /// store as one batch insert (`ColumnWriter.write`). After a bad record the worker
    /// goes on writing the valid records already fetched.
    private func runFlat(number: Int, context: ManagedObjectContext, queue: BatchQueue<WorkerInput>, patterns: DatePatterns) {
        let writer = ColumnWriter(source: source, entity: entity, container: container, state: state, redactor: redactor, logger: logger,
                                  positions: positions)
        var batch = ColumnBatch(entity: mapper.entity)
        var unwritten = Set<[StoreValue]>()
        let keepsPositions = positions.keepsPositions
        /// Pages before this one have all their records of this worker taken; a full batch waits for word of its page.
        var whole = 0
        var writePending = false
        func write() {
            writePending = false
            guard batch.count > 0 else { return }
            unwritten.removeAll()
            writer.write(batch.take(), lane: number, wholePages: keepsPositions ? whole : nil, in: context)
        }
        while let input = queue.take() {
            guard case .records(let chunk) = input else {
                if case .pageComplete(let page) = input { whole = page + 1 }
                if writePending { write() } else if batch.count == 0 { positions.advance(lane: number, to: whole) }
                continue
            }
            if writePending { write() }
            do {
                try context.performAndWait { try builder.map(chunk, into: &batch, unwritten: &unwritten, in: context, patterns: patterns) }
            } catch {
                // The chunk's page is not saved whole: later writes keep the position before it.
                positions.cap(at: whole)
                state.fail(error as? PipelineError ?? PipelineError(.other, redactor("source \(source.name): \(error)"), underlying: error))
            }
            if batch.count >= batchSize {
                if keepsPositions { writePending = true } else { write() }
            }
        }
        write()
    }

    private func savingFailed(_ error: any Error) -> PipelineError {
        PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error)
    }

    /// Maps a chunk of records with nested objects (`RecordBatchBuilder`) and writes them into
    /// the worker's context through `NestedUpsert` (not saved yet); returns how many arrived unchanged.
    private func insert(_ chunk: [IncomingRecord], in context: ManagedObjectContext, patterns: DatePatterns,
                        graph: inout NestedUpsert?) throws -> Int {
        let built = try builder.nodes(for: chunk, graph: &graph!, in: context, patterns: patterns)
        try graph!.write(built.nodes, in: context)
        let unchanged = graph!.takeUnchanged(of: entity.name)
        builder.count(built.accepted, chunk: chunk, rejected: built.rejected)
        if let firstBad = built.firstBad { throw firstBad }
        return unchanged
    }

    /// Saves the worker's context into the view context, with the source's position (lane
    /// `lane`'s records of pages before `wholePages` saved), and lets its rows go; the
    /// records that arrived unchanged since the last save count with it.
    private func saveBatch(in context: ManagedObjectContext, lane: Int, wholePages: Int?, unchanged: inout Int,
                           graph: inout NestedUpsert?) throws -> SaveScheduler.BatchCounts {
        let changes: ContextDidSaveChanges
        do {
            changes = try positions.committing(lane: lane, wholePages: wholePages) { metadata in
                for (key, value) in metadata { context.setStoreMetadata(value, forKey: key) }
                return try BulkSession(context).save()
            }
        } catch let error as StoreError {
            throw savingFailed(error)
        }
        context.reset()
        BulkSession(context).reserveRows(batchSize, entity: mapper.entity)
        defer { unchanged = 0 }
        guard var writer = graph else {
            return SaveScheduler.BatchCounts(inserted: changes.inserted.count, updated: changes.updated.count,
                                             unchanged: changes.unchanged.count + unchanged)
        }
        // With nested records the save holds several entities: each counts on its own.
        let perEntity = NestedCounts(changes, entities: writer.entities)
        var counts = SaveScheduler.BatchCounts()
        let own = perEntity.counts[entity.name] ?? RunReport.Counts()
        counts.inserted = own.inserted
        counts.updated = own.updated + (writer.touched[entity.name] ?? 0)
        counts.unchanged = own.unchanged + unchanged
        for (name, entityCounts) in perEntity.counts where name != entity.name {
            var total = entityCounts
            total.unchanged += writer.unchanged[name] ?? 0
            total.updated += writer.touched[name] ?? 0
            counts.nested[name] = total
        }
        for (name, found) in writer.unchanged where name != entity.name && perEntity.counts[name] == nil {
            counts.nested[name] = RunReport.Counts(unchanged: found)
        }
        writer.batchSaved()
        graph = writer
        return counts
    }
}
