import Foundation
import Logging
import SwellCSV
import SwellCalendar
import SwellStore

/// An upsert worker: a thread with its own private child context of the view context,
/// taking chunks of records from its queue and mapping each (the key came mapped from
/// the router); bad ones go to the rejects file (or fail the run).
///
/// Workers take the records of sources that the fetch thread cannot read straight
/// into batches (`ColumnRecordSink`, `GraphRecordSink`): records with nested objects of
/// the shapes `GraphShape` leaves out, and append mode's.
/// An append-mode record goes into columns, and every `batchSize` records become one
/// batch insert executed from the worker's context (`runFlat`).
///
/// Records with nested objects go through the graph writer into the worker's context,
/// which every `batchSize` records saves into the view context and lets the rows go;
/// after each save the worker waits until the batches are on disk (its look-ups read the
/// store), and the `SaveScheduler` moves them up.
///
/// A failed run does not stop a worker: it keeps saving the valid records already
/// fetched, so earlier pages stay saved.
struct UpsertWorker: Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let mapper: RecordMapper
    let batchSize: Int
    let container: PersistentContainer
    let state: SourceRunState
    let scheduler: SaveScheduler
    let rejects: RejectsWriter
    /// Replace mode: where the keys seen go.
    let sweeper: ReplaceSweeper?
    /// Incremental sync: the cursor attribute whose largest value is kept.
    let cursor: IncrementalCursor?
    let redactor: Redactor
    let progress: SourceProgress
    /// Every entity of the pipeline (nested mappings upsert into them).
    let pipelineEntities: [PipelineEntity]
    /// The run's log: a failure the run cannot report (it reports its first) goes here.
    let logger: Logger

    /// Starts worker `number` on its own thread, taking from `queue`; it leaves `group` when the queue is closed and drained.
    func start(number: Int, queue: BatchQueue<[IncomingRecord]>, group: DispatchGroup) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            run(number: number, queue: queue)
        }
        thread.name = "swell.upsert.\(source.name).\(number)"
        thread.start()
    }

    private func run(number: Int, queue: BatchQueue<[IncomingRecord]>) {
        let context = container.newBackgroundContext()
        context.name = "\(source.name).upsert.\(number)"
        let patterns = DatePatterns()
        guard !source.nested.isEmpty else {
            runFlat(context: context, queue: queue, patterns: patterns)
            return
        }
        var unsaved = 0
        context.performAndWait { context.reserveRows(batchSize, entity: mapper.entity) }
        // Version 2: records with nested objects go through the graph writer.
        var graph: NestedUpsert?
        if !source.nested.isEmpty {
            do {
                graph = try context.performAndWait { () throws -> NestedUpsert in
                    let root = try context.entityDescription(named: entity.name)
                    let plans = try source.nested.map {
                        try NestedPlan(mapping: $0, parent: root, pipelineEntities: pipelineEntities,
                                       storage: { try context.entityDescription(named: $0) }, dates: source.dates)
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
        /// On the context's queue: `work` inserts and says whether the batch is
        /// full; a full batch is saved, and so are the valid records when `work` failed.
        func step(_ work: () throws -> Bool) -> (SaveScheduler.BatchCounts?, PipelineError?) {
            context.performAndWait {
                do {
                    guard try work() else { return (nil, nil) }
                    unsaved = 0
                    return (try saveBatch(in: context, unchanged: &unchanged, graph: &graph), nil)
                } catch {
                    unsaved = 0
                    // The run fails with `error`; saving the valid records may fail too, and
                    // then `error` (the first failure) is the one reported, and this one logged.
                    let failure = error as? PipelineError ?? savingFailed(error)
                    do {
                        return (try saveBatch(in: context, unchanged: &unchanged, graph: &graph), failure)
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
        while let chunk = queue.take() {
            let (saved, failure) = step {
                unchanged += try insert(chunk, in: context, patterns: patterns, graph: &graph)
                unsaved += chunk.count
                return unsaved >= batchSize
            }
            if let saved { scheduler.batchSaved(saved) }
            // The run fails, but this worker keeps saving the valid records already fetched.
            if let failure { state.fail(failure) }
            // Nested records wait for the saved batches to be on disk (their look-ups read the store).
            if saved != nil { scheduler.waitForDisk() }
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
    private func runFlat(context: ManagedObjectContext, queue: BatchQueue<[IncomingRecord]>, patterns: DatePatterns) {
        let writer = ColumnWriter(source: source, entity: entity, container: container, state: state, redactor: redactor, logger: logger)
        var batch = ColumnBatch(entity: mapper.entity)
        var unwritten = Set<[StoreValue]>()
        func write() {
            guard batch.count > 0 else { return }
            unwritten.removeAll()
            writer.write(batch.take(), in: context)
        }
        while let chunk = queue.take() {
            do {
                try context.performAndWait { try map(chunk, into: &batch, unwritten: &unwritten, in: context, patterns: patterns) }
            } catch {
                state.fail(error as? PipelineError ?? PipelineError(.other, redactor("source \(source.name): \(error)"), underlying: error))
            }
            if batch.count >= batchSize { write() }
        }
        write()
    }

    /// Maps a chunk of a flat source's records into `batch`; bad ones go to the rejects
    /// file, or the first is thrown after the valid ones are in the batch.
    /// `unwritten`: append mode's keys of the records in `batch` (not in the store yet).
    private func map(_ chunk: [IncomingRecord], into batch: inout ColumnBatch, unwritten: inout Set<[StoreValue]>,
                     in context: ManagedObjectContext, patterns: DatePatterns) throws {
        var firstBad: PipelineError?
        var rejected = 0
        var accepted: [(IncomingRecord, [StoreValue])] = []
        accepted.reserveCapacity(chunk.count)
        for item in chunk {
            switch mapper.map(item.record, key: item.key, using: patterns) {
            case .success(let values): accepted.append((item, values))
            case .failure(let bad): try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
            }
        }
        if source.mode == .append {
            accepted = try dropExisting(accepted, in: context, seen: &unwritten, firstBad: &firstBad, rejected: &rejected)
        }
        for (_, values) in accepted { batch.append(values) }
        count(accepted, chunk: chunk, rejected: rejected)
        if let firstBad { throw firstBad }
    }

    private func savingFailed(_ error: any Error) -> PipelineError {
        PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error)
    }

    /// Maps a chunk of records with nested objects and writes them into the worker's
    /// context through the graph writer (not saved yet); returns how many arrived unchanged.
    private func insert(_ chunk: [IncomingRecord], in context: ManagedObjectContext, patterns: DatePatterns,
                        graph: inout NestedUpsert?) throws -> Int {
        var firstBad: PipelineError?
        var rejected = 0
        var accepted: [(IncomingRecord, [StoreValue])] = []
        var trees: [String: MappedNode] = [:]
        for item in chunk {
            switch mapper.map(item.record, key: item.key, using: patterns) {
            case .success(let values):
                if let graph {
                    var padded = values
                    padded += Array(repeating: .null, count: graph.root.attributes.count - values.count)
                    switch NestedPlan.mapLinks(of: item.record, plans: graph.plans, place: "", patterns: patterns) {
                    case .success(let links):
                        accepted.append((item, values))
                        trees["\(item.index)#\(item.page)"] = MappedNode(values: padded, key: mapper.keyIndices.map { values[$0] },
                                                                            mapped: Array(values.indices), links: links)
                    case .failure(let bad):
                        try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
                    }
                }
            case .failure(let bad):
                try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
            }
        }
        if source.mode == .append {
            var seen = Set<[StoreValue]>()
            accepted = try dropExisting(accepted, in: context, seen: &seen, firstBad: &firstBad, rejected: &rejected)
        }
        var nodes = accepted.compactMap { trees["\($0.0.index)#\($0.0.page)"] }
        // A to-one given by an unknown key is a bad record (on_error applies), found before any write.
        let unknown = try graph!.unknownKeyReferences(nodes, in: context)
        if !unknown.isEmpty {
            for (position, bad) in unknown.sorted(by: { $0.key < $1.key }) {
                try reject(accepted[position].0, message: bad.message, attribute: bad.path, firstBad: &firstBad, rejected: &rejected)
            }
            accepted = accepted.enumerated().filter { unknown[$0.offset] == nil }.map(\.element)
            nodes = nodes.enumerated().filter { unknown[$0.offset] == nil }.map(\.element)
        }
        try graph!.write(nodes, in: context)
        let unchanged = graph!.takeUnchanged(of: entity.name)
        count(accepted, chunk: chunk, rejected: rejected)
        if let firstBad { throw firstBad }
        return unchanged
    }

    /// Counts a chunk's records, and notes their keys (replace) and cursor values.
    private func count(_ accepted: [(IncomingRecord, [StoreValue])], chunk: [IncomingRecord], rejected: Int) {
        let keyIndices = mapper.keyIndices
        var keys: [[StoreValue]] = []
        var largest: StoreValue?
        for (_, values) in accepted {
            if sweeper != nil { keys.append(keyIndices.map { values[$0] }) }
            if let cursor { largest = cursor.largest(largest, values) }
        }
        state.count(records: chunk.count, rejected: rejected, cursor: largest)
        sweeper?.saw(keys)
        progress.addRecords(chunk.count)
    }

    /// Saves the worker's context into the view context and lets its rows go; the
    /// records that arrived unchanged since the last save count with it.
    private func saveBatch(in context: ManagedObjectContext, unchanged: inout Int, graph: inout NestedUpsert?) throws -> SaveScheduler.BatchCounts {
        let changes: ContextDidSaveChanges
        do {
            changes = try context.saveReturningChanges()
        } catch let error as StoreError {
            throw savingFailed(error)
        }
        context.reset()
        context.reserveRows(batchSize, entity: mapper.entity)
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

    /// A bad record: into the rejects file (`on_error: skip`), or the chunk's failure (`fail`).
    private func reject(_ item: IncomingRecord, message: String, attribute: String?, firstBad: inout PipelineError?, rejected: inout Int) throws {
        let rejecter = RecordRejecter(source: source, rejects: rejects, redactor: redactor)
        if let failure = try rejecter.reject(page: item.page, index: item.index, record: item.record, message: message, attribute: attribute) {
            if firstBad == nil { firstBad = failure }
        } else {
            rejected += 1
        }
    }

    /// Append mode: a record whose key is stored already (or came earlier in the run) is a bad record.
    /// `seen`: the keys of records accepted earlier and not in the store yet.
    private func dropExisting(_ accepted: [(IncomingRecord, [StoreValue])], in context: ManagedObjectContext, seen: inout Set<[StoreValue]>,
                              firstBad: inout PipelineError?, rejected: inout Int) throws -> [(IncomingRecord, [StoreValue])] {
        let keyIndices = mapper.keyIndices
        let existing = try KeyLookup(entity: mapper.entity).existing(accepted.map { item in keyIndices.map { item.1[$0] } }, in: context)
        var kept: [(IncomingRecord, [StoreValue])] = []
        for (item, values) in accepted {
            let key = keyIndices.map { values[$0] }
            if existing.contains(key) || !seen.insert(key).inserted {
                let shown = zip(entity.key, key).map { "\($0)=\(describe($1))" }.joined(separator: ", ")
                try reject(item, message: "\(entity.key.first ?? "key"): \(shown) exists already (mode: append)", attribute: entity.key.first,
                           firstBad: &firstBad, rejected: &rejected)
            } else {
                kept.append((item, values))
            }
        }
        return kept
    }
}
