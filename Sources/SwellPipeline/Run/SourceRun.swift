import Foundation
import Logging
import SwellContexts
import SwellHTTP

/// How a run's upsert stage is sized.
public struct RunOptions: Sendable {
    /// Upsert workers of a flat appended source, each on its own private child context of
    /// the view context (the one stage with workers side by side: `WriteStage.objects`).
    public var workers: Int
    /// Records of one commit, whatever the write stage (one batch insert of flat records,
    /// one transaction of objects and links, one worker save): also a resume point. nil:
    /// swell's default for the source (`flatBatchSize`, `nestedBatchSize`).
    public var batchSize: Int?
    /// `--concurrency`: requests in flight at once across the run, over the file's top-level
    /// `concurrency` (`concurrency(for:)`); nil: the file's.
    public var concurrency: Int?
    /// `--restart`: every kept position is ignored and dropped; each source starts at its first page.
    public var restart = false

    /// A flat source's default batch: its rows go to the store as one batch insert (one
    /// transaction) of this many rows (BENCHMARKS.md: fewer, larger batches write faster, and
    /// the four batches in flight stay within the memory bar).
    public static let flatBatchSize = 10_000
    /// A source with nested mappings: records of one graph transaction, or of one worker save.
    public static let nestedBatchSize = 5_000

    /// `workers` (default: the number of cores), `batchSize` (default: chosen per source) and
    /// `concurrency` (default: the file's), each at least 1; `restart`: `--restart`.
    public init(workers: Int = ProcessInfo.processInfo.activeProcessorCount, batchSize: Int? = nil, concurrency: Int? = nil,
                restart: Bool = false) {
        self.workers = max(1, workers)
        self.batchSize = batchSize.map { max(1, $0) }
        self.concurrency = concurrency.map { max(1, $0) }
        self.restart = restart
    }

    /// The batch size for a source with (`nested`) or without nested mappings.
    func batchSize(nested: Bool) -> Int {
        batchSize ?? (nested ? Self.nestedBatchSize : Self.flatBatchSize)
    }
}

/// Runs one source through the three-level stack, wiring its stages: this
/// thread fetches pages (`PageLoop`) and reads them with the projection
/// (`ProjectionPages`) into the sink of the source's `WriteStage`, chosen once from the
/// shape of its records: columns (`ColumnRecordSink` → `ColumnWriter`, batch inserts),
/// graph batches (`GraphRecordSink` → `GraphWriter`, a transaction each) or trees
/// (`TreeRecordSink` → `RecordRouter` → `UpsertWorker`s on private child contexts of the
/// view context, whose saves the `SaveScheduler` moves to the writer and to disk on
/// their own queues). The main queue never waits for disk. Replace deletions
/// (`ReplaceSweeper`), the incremental cursor and HTTP validators go in the last
/// writer save, only when every page arrived. Each saved batch keeps where the source
/// stands (`PositionBook`); a source that stopped starts there next time.
struct SourceRun {
    let source: SourceSpec
    let entity: PipelineEntity
    /// Every entity of the pipeline (nested mappings upsert into them).
    let pipelineEntities: [PipelineEntity]
    let container: PersistentContainer
    /// What the run's stages share: options, log, redactor, progress, cancellation, tokens.
    let environment: RunEnvironment
    /// Its request builder, page stream and kept position on the run's engine (`SourceStreams`);
    /// nil: the source makes its own, one request at a time.
    var pages: SourcePages? = nil
    /// The items of the source's `for_each` in this run, when it makes its own `pages` (part of
    /// its position's fingerprint); empty otherwise.
    var forEachItems: [String] = []

    private var options: RunOptions { environment.options }
    private var logger: Logger { environment.logger }
    private var redactor: Redactor { environment.redactor }
    private var progress: ProgressCounter { environment.progress }
    private var cancellation: RunCancellation { environment.cancellation }

    /// Runs the source; returns its report entry and the failure, if any.
    func run() -> (RunReport.Source, PipelineError?) {
        let started = Date()
        let counts = progress.source(source.name)
        var failed = true
        defer { counts.finish(failed: failed) }
        // Records win, property by property, over what is stored: at every level (the workers
        // take the view context's), and at the writer's commit over what another runner saved
        // since the run read it (Store guarantees 61).
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        container.writerContext.mergePolicy = .mergeByPropertyObjectTrump
        let batchSize = options.batchSize(nested: !source.nested.isEmpty)
        let backlog = SaveBacklog<SaveScheduler.BatchCounts>()
        let state = SourceRunState(source: source, backlog: backlog, cancellation: cancellation)
        let scheduler = SaveScheduler(container: container, state: state, backlog: backlog, sourceName: source.name,
                                      logger: logger, redactor: redactor)
        let sourcePages: SourcePages
        var ownEngine: HTTPEngine?
        do {
            if let pages {
                sourcePages = pages
            } else {
                let engine = try HTTPEngine(HTTPEngine.Configuration(concurrency: 1, userAgent: SwellVersion.userAgent))
                ownEngine = engine
                sourcePages = try SourceStreams.pages(for: source, item: 0, entity: entity, engine: engine, plan: .sequential,
                                                      container: container, environment: environment, forEachItems: forEachItems)
            }
            // Resuming: where an earlier run of the source stopped (README, "Resuming a stopped source").
            try sourcePages.positions.begin(state: state, container: container)
        } catch {
            let failure = error as? PipelineError ?? PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
            state.fail(failure)
            return (state.report, failure)
        }
        defer { ownEngine?.stop() }
        let positions = sourcePages.positions
        let sweeper = source.mode == .replace ? positions.makeSweeper(entity: entity.description) : nil
        let cursor = IncrementalCursor(source: source, entity: entity)
        let rejects = RejectsWriter(path: source.rejects, source: source.name, redactor: redactor)
        let mapper = RecordMapper(source: source, entity: entity)
        var builder = RecordBatchBuilder(source: source, entity: entity, mapper: mapper, state: state, rejects: rejects,
                                         sweeper: sweeper, cursor: cursor, redactor: redactor, progress: counts)
        positions.equip(&builder)
        let worker = UpsertWorker(builder: builder, batchSize: batchSize, container: container, scheduler: scheduler,
                                  pipelineEntities: pipelineEntities, logger: logger, positions: positions)
        let capturePaths = Paginator.capturePaths(source.pagination, hasMore: source.hasMore) + (source.isGraphQL ? [GraphQLAnswer.errorsPath] : [])
        if let stream = sourcePages.stream {
            counts.watchNetwork { [weak stream] in (stream?.inFlight ?? 0, stream?.waitedSeconds ?? 0) }
        }
        let pageLoop = PageLoop(source: source, container: container, environment: environment, state: state,
                                cursor: cursor, counts: counts, pages: sourcePages)
        let group = DispatchGroup()
        let validators: [String: String]?
        switch WriteStage.choose(for: source, workers: options.workers, graphShape: { graphShape(state: state) }) {
        case .columns:
            let batches = BatchQueue<PositionedBatch<BatchColumns>>(capacity: 0)
            ColumnWriter(source: source, entity: entity, container: container, state: state, redactor: redactor, logger: logger,
                         positions: positions)
                .start(queue: batches, group: group)
            let rejecter = RecordRejecter(source: source, rejects: rejects, redactor: redactor)
            let sink = ColumnRecordSink(mapper: mapper, rejecter: rejecter, batchSize: batchSize, output: batches, state: state,
                                        progress: counts, sweeper: sweeper, cursor: cursor, positions: positions)
            var pages = ProjectionPages(sink: sink, source: source, capturePaths: capturePaths, closeOutput: batches.close)
            validators = pageLoop.run(into: &pages)
        case .graph(let shape):
            let batches = BatchQueue<PositionedBatch<GraphBatch>>(capacity: 0)
            GraphWriter(source: source, entity: entity, shape: shape, container: container, state: state, redactor: redactor, logger: logger,
                        positions: positions)
                .start(queue: batches, group: group)
            let rejecter = RecordRejecter(source: source, rejects: rejects, redactor: redactor)
            let sink = GraphRecordSink(shape: shape, mapper: mapper, rejecter: rejecter, batchSize: batchSize, output: batches, state: state,
                                       progress: counts, sweeper: sweeper, cursor: cursor, positions: positions)
            var pages = ProjectionPages(sink: sink, source: source, capturePaths: capturePaths, closeOutput: batches.close)
            validators = pageLoop.run(into: &pages)
        case .objects(let workers):
            let queues = (0..<workers).map { _ in BatchQueue<WorkerInput>(capacity: 4) }
            positions.split(into: workers)
            for (number, queue) in queues.enumerated() {
                worker.start(number: number, queue: queue, group: group)
            }
            // Chunks of at most a batch, so a worker's batch never holds more than `batchSize` records.
            let router = RecordRouter(queues: queues, chunk: min(batchSize, RecordRouter.largestChunk), mapper: mapper,
                                      sendsPageMarks: positions.keepsPositions)
            var pages = ProjectionPages(sink: TreeRecordSink(router: router), source: source,
                                        capturePaths: capturePaths, closeOutput: { queues.forEach { $0.close() } })
            validators = pageLoop.run(into: &pages)
        }
        group.wait()
        do { try rejects.close() } catch { state.fail(error) }
        finish(validators: state.failure == nil ? validators : nil, state: state, scheduler: scheduler, sweeper: sweeper, cursor: cursor,
               positions: positions)
        var report = state.report
        report.requests = (sourcePages.stream?.requestCount ?? 0) + sourcePages.builder.tokenRequests
        report.waitedS = Self.rounded(sourcePages.stream?.waitedSeconds ?? 0)
        report.durationS = Self.rounded(Date().timeIntervalSince(started))
        report.resumedFrom = positions.resumedFrom
        failed = state.failure != nil
        return (report, state.failure)
    }

    static func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    /// The source's nested mappings, when `GraphShape` admits them (nil: none, or another
    /// shape, which `UpsertWorker` writes object by object; or a mapping the store's model
    /// lacks, which the worker reports).
    private func graphShape(state: SourceRunState) -> GraphShape? {
        guard !source.nested.isEmpty else { return nil }
        let context = container.newBackgroundContext()
        return context.performAndWait { () -> GraphShape? in
            // An entity or relationship the store's model lacks is not lost: the upsert worker
            // builds the same plans and fails the run with that error.
            guard let root = try? BulkSession(context).entity(named: entity.name),
                  let plans = try? source.nested.map({
                      try NestedPlan(mapping: $0, parent: root, pipelineEntities: pipelineEntities,
                                     storage: { try BulkSession(context).entity(named: $0) }, dates: source.dates)
                  }) else { return nil }
            return GraphShape(root: root, plans: plans)
        }
    }

    /// The last saves: what the workers saved, then (only when `validators` is
    /// given: the run is complete) replace deletions, the incremental cursor,
    /// HTTP validators and the source's position removed, in the writer's last transaction.
    private func finish(validators: [String: String]?, state: SourceRunState, scheduler: SaveScheduler,
                        sweeper: ReplaceSweeper?, cursor: IncrementalCursor?, positions: PositionBook) {
        do {
            var deleted = 0
            var metadata: [String: String?] = [:]
            // A sweep that fails leaves nothing in the view context (it saves there once, at
            // its end); the batches saved before it still go to disk, as after any failure,
            // and the run then fails without the cursor and validators.
            var sweepFailure: (any Error)?
            if let validators {
                do {
                    deleted = try sweeper?.sweep(in: container) ?? 0
                    if let cursor, let largest = state.largestCursor {
                        metadata[cursor.metadataKey] = cursor.text(largest)
                    }
                    for (key, validator) in validators { metadata[key] = validator }
                    metadata.merge(positions.completion(pages: state.report.pages)) { _, position in position }
                } catch {
                    sweepFailure = error
                }
            }
            // A source that stops keeps where its writers' saved pages end, with its last save.
            if validators == nil || sweepFailure != nil { metadata.merge(positions.stopped()) { _, position in position } }
            try scheduler.saveLast(metadata: metadata)
            if let sweepFailure { throw sweepFailure }
            state.count(deleted: deleted)
        } catch let error as PipelineError {
            state.fail(error)
        } catch {
            state.fail(PipelineError(.io, redactor("source \(source.name): writing the store failed: \(error)"), underlying: error))
        }
    }
}
