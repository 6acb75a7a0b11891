import Foundation
import Logging
import SwellStore

/// Writes a flat source's column batches: a thread with its own private child context
/// of the view context, whose merge policy (`objectTrump`) makes each batch insert an
/// upsert. Each batch is one `BatchInsertRequest` executed from that context — one
/// transaction on the writer's queue — while the fetch thread fills the next one; its
/// rows count in the report once it returns. After a failed batch the run fails, and
/// the writer goes on writing the batches already read (earlier pages stay saved).
struct ColumnWriter: Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let container: PersistentContainer
    let state: SourceRunState
    let redactor: Redactor
    let logger: Logger

    /// Starts the writer's thread, taking from `queue`; it leaves `group` when the queue is closed and drained.
    func start(queue: BatchQueue<BatchColumns>, group: DispatchGroup) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            let context = container.newBackgroundContext()
            context.name = "\(source.name).writer"
            while let columns = queue.take() {
                write(columns, in: context)
            }
        }
        thread.name = "swell.write.\(source.name)"
        thread.start()
    }

    /// Writes one batch from `context` (a private child context of the view context).
    func write(_ columns: BatchColumns, in context: ManagedObjectContext) {
        guard columns.rowCount > 0 else { return }
        let request = BatchInsertRequest(entityName: entity.name, columns: columns)
        request.resultType = .changes
        logger.debug("writer saving", metadata: ["source": "\(source.name)", "worker": "\(context.name ?? "-")"])
        do {
            let result = try context.performAndWait {
                context.mergePolicy = .mergeByPropertyObjectTrump
                return try context.execute(request)
            }
            state.count(committed: [SaveScheduler.BatchCounts(inserted: result.inserted, updated: result.updated, unchanged: result.unchanged)])
        } catch {
            state.fail(PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error))
        }
    }
}
