import SwellLocks
import SwellContexts

/// What the stages of one source run share: the report's counts, the run's
/// first failure, and the largest incremental cursor value seen. The fetch
/// thread, the upsert workers and the save queues all write to it.
///
/// `Sendable`: a `LockedValue` guards it.
final class SourceRunState: Sendable {
    private struct Shared {
        var report: RunReport.Source
        var failure: PipelineError?
        var largestCursor: StoreValue?
    }

    private let shared: LockedValue<Shared>
    /// Workers waiting for saved batches to reach disk, let go when the run fails.
    private let backlog: SaveBacklog<SaveScheduler.BatchCounts>

    /// The run's cancellation: once cancelled, its reason is this source's failure.
    let cancellation: RunCancellation

    init(source: SourceSpec, backlog: SaveBacklog<SaveScheduler.BatchCounts>, cancellation: RunCancellation = RunCancellation()) {
        self.cancellation = cancellation
        var report = RunReport.Source(name: source.name, entity: source.entity)
        if !source.nested.isEmpty {
            // Every entity nested records go into is listed, at zero until a batch counts.
            var nested: [String: RunReport.Counts] = [:]
            func note(_ mappings: [NestedMapping]) {
                for mapping in mappings where mapping.destination != source.entity {
                    nested[mapping.destination] = RunReport.Counts()
                    note(mapping.nested)
                }
            }
            note(source.nested)
            report.nested = nested
        }
        shared = LockedValue(Shared(report: report))
        self.backlog = backlog
    }

    /// The run's first failure, if any.
    var failure: PipelineError? { cancellation.error ?? shared.withLock { $0.failure } }

    /// The report entry as counted so far.
    var report: RunReport.Source { shared.withLock { $0.report } }

    /// The largest incremental cursor value the workers saw.
    var largestCursor: StoreValue? { shared.withLock { $0.largestCursor } }

    /// Fails the run (the first failure is the one reported) and lets every
    /// worker waiting for the writer go.
    func fail(_ error: PipelineError) {
        shared.withLock { shared in
            if shared.failure == nil { shared.failure = error }
        }
        backlog.release()
    }

    /// A page arrived (or was not modified).
    func count(_ page: FetchedPage) {
        shared.withLock { shared in
            shared.report.pages += 1
            shared.report.bytes += page.bytes
            shared.report.retries += page.retries
            if page.notModified { shared.report.notModified += 1 }
        }
    }

    /// Retries of a page that failed after them.
    func count(retries: Int) {
        shared.withLock { $0.report.retries += retries }
    }

    /// A worker took a chunk of `records`, of which it rejected `rejected`; `cursor` is the chunk's largest cursor value.
    func count(records: Int, rejected: Int, cursor: StoreValue?) {
        shared.withLock { shared in
            shared.report.records += records
            shared.report.rejected += rejected
            shared.largestCursor = IncrementalCursor.larger(shared.largestCursor, cursor)
        }
    }

    /// Batches the writer committed: they count in the report now.
    func count(committed: [SaveScheduler.BatchCounts]) {
        shared.withLock { shared in
            for counts in committed {
                shared.report.inserted += counts.inserted
                shared.report.updated += counts.updated
                shared.report.unchanged += counts.unchanged
                for (entity, nested) in counts.nested {
                    var total = shared.report.nested?[entity] ?? RunReport.Counts()
                    total.inserted += nested.inserted
                    total.updated += nested.updated
                    total.unchanged += nested.unchanged
                    shared.report.nested = (shared.report.nested ?? [:]).merging([entity: total]) { _, new in new }
                }
            }
        }
    }

    /// Replace deleted `deleted` rows, now on disk.
    func count(deleted: Int) {
        shared.withLock { $0.report.deleted = deleted }
    }
}
