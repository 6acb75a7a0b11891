import Foundation
import Logging
import SwellContexts

/// Writes a flat source's column batches in two stages, each a thread with its own private
/// child context of the view context, whose merge policy (`objectTrump`) makes each batch
/// insert an upsert: the comparer compares batch *k + 1* with the stored rows
/// (`compareAhead`, on a reader's snapshot) while the writer executes batch *k* as one
/// `BatchInsertRequest` — one transaction on the writer's queue, in which only the rows
/// batch *k* wrote since are compared again. Meanwhile the fetch thread fills the next
/// batch. A batch's rows count in the report once it returns. After a failed batch the
/// run fails, and the writer goes on writing the batches already read (earlier pages stay
/// saved). Each batch insert carries the source's position in its own transaction
/// (`PositionBook.committing`).
struct ColumnWriter: Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let container: PersistentContainer
    let state: SourceRunState
    let redactor: Redactor
    let logger: Logger
    let positions: PositionBook

    /// Starts the comparer's and the writer's threads, taking from `queue`; they leave
    /// `group` when the queue is closed and drained.
    func start(queue: BatchQueue<PositionedBatch<BatchColumns>>, group: DispatchGroup) {
        let compared = BatchQueue<PositionedBatch<BatchInsertRequest>>(capacity: 0)
        group.enter()
        let comparer = Thread {
            defer { group.leave() }
            defer { compared.close() }
            let context = container.newBackgroundContext()
            context.name = "\(source.name).comparer"
            context.performAndWait { context.mergePolicy = mergePolicy }
            while let columns = queue.take() {
                guard columns.batch.rowCount > 0 else { continue }
                let request = request(columns.batch)
                context.performAndWait { BulkSession(context).compareAhead(request) }
                compared.put(PositionedBatch(batch: request, wholePages: columns.wholePages))
            }
        }
        comparer.name = "swell.compare.\(source.name)"
        group.enter()
        let writer = Thread {
            defer { group.leave() }
            let context = container.newBackgroundContext()
            context.name = "\(source.name).writer"
            while let request = compared.take() {
                write(request.batch, wholePages: request.wholePages, in: context)
            }
        }
        writer.name = "swell.write.\(source.name)"
        comparer.start()
        writer.start()
    }

    /// How a row meets its stored row: the record's attributes win (upsert, replace), or the
    /// stored row stays as it is (`mode: insert`: an insert-or-ignore, counted unchanged).
    private var mergePolicy: MergePolicy {
        source.mode == .insert ? .rollback : .mergeByPropertyObjectTrump
    }

    private func request(_ columns: BatchColumns) -> BatchInsertRequest {
        let request = BatchInsertRequest(entityName: entity.name, columns: columns)
        request.resultType = .changes
        request.rulesChecked = true  // the mapper checked every record
        return request
    }

    /// Writes one batch from `context` (a private child context of the view context): the
    /// records of lane `lane` (an upsert worker) of the pages before `wholePages` are in it or
    /// saved before (nil: no position kept).
    func write(_ columns: BatchColumns, lane: Int = 0, wholePages: Int?, in context: ManagedObjectContext) {
        guard columns.rowCount > 0 else { return }
        write(request(columns), lane: lane, wholePages: wholePages, in: context)
    }

    /// Executes one batch insert from `context`, with the source's position in its transaction.
    private func write(_ request: BatchInsertRequest, lane: Int = 0, wholePages: Int?, in context: ManagedObjectContext) {
        logger.debug("writer saving", metadata: ["source": "\(source.name)", "worker": "\(context.name ?? "-")"])
        do {
            let result = try positions.committing(lane: lane, wholePages: wholePages) { metadata in
                try context.performAndWait {
                    context.mergePolicy = mergePolicy
                    request.storeMetadata = metadata
                    return try context.execute(request)
                }
            }
            state.count(committed: [SaveScheduler.BatchCounts(inserted: result.inserted, updated: result.updated, unchanged: result.unchanged)])
        } catch {
            state.fail(PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error))
        }
    }
}
