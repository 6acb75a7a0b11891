import Foundation
import Logging
import SwellContexts
import SwellHTTP
import SwellPostgres
import SwellSQLite

/// Runs a pipeline's sources and exports against its store, and reports.
///
/// A writing run (sources) holds the store's lock for its whole length. Run it
/// off the main queue (`run` blocks); the main queue stays free for the view
/// context, which the run's saves pass through.
public struct PipelineRunner: Sendable {
    /// The pipeline to run.
    public var pipeline: PipelineFile
    /// The store to use: `--store`, else the file's `store` (never print it; see `store`).
    public var storePath: String
    /// How the upsert stage is sized (`--workers`, `--batch-size`).
    public var options: RunOptions
    /// `--only`: the sources (or `for_each` sources) and exports to take, by name (empty: all).
    public var only: Set<String>
    /// `--shard I/N`: only the sources at these positions (nil: all).
    public var shard: Shard?
    /// `--wait`: wait for the run that holds the store instead of throwing `.locked`.
    public var wait: Bool
    /// Where the run logs (stderr in `swell`).
    public var logger: Logger
    /// The counts the progress lines on stderr are read from.
    public var progress: ProgressCounter

    /// A runner of `pipeline`; `storePath` nil: the file's `store`.
    public init(pipeline: PipelineFile, storePath: String? = nil, options: RunOptions = RunOptions(), only: Set<String> = [],
                shard: Shard? = nil, wait: Bool = false, logger: Logger, progress: ProgressCounter = ProgressCounter()) {
        self.pipeline = pipeline
        self.storePath = storePath ?? pipeline.store
        self.options = options
        self.only = only
        self.shard = shard
        self.wait = wait
        self.logger = logger
        self.progress = progress
        redactor = Redactor(secrets: pipeline.secrets)
    }

    /// Stops the run from another thread (`swell` cancels it on SIGINT and SIGTERM).
    public let cancellation = RunCancellation()

    /// Hides the pipeline's secrets, and the tokens its sources are given while it runs
    /// (one redactor a runner: what one source learns, the others and the report hide too).
    public let redactor: Redactor

    /// The store, as messages show it (secrets and passwords hidden).
    public var store: StoreLocation { StoreLocation(storePath, redactor: redactor) }

    /// Checks `--only` names against the file.
    public func checkOnly() throws(PipelineError) {
        let known = Set(pipeline.sources.map(\.name) + pipeline.sources.compactMap(\.forEach?.source) + pipeline.exports.map(\.name))
        if let unknown = only.subtracting(known).sorted().first {
            throw PipelineError(.usage, "--only \(unknown): no source or export of that name in \(pipeline.path)")
        }
    }

    /// The sources this run takes, in file order: `--shard`'s positions, then `--only`'s names.
    /// A `for_each` from an entity is taken whole here: `--shard` applies to its items
    /// (`expansions(of:at:in:)`).
    public var selectedSources: [SourceSpec] {
        selectedPositions.map { pipeline.sources[$0] }
    }

    private var selectedPositions: [Int] {
        pipeline.sources.indices.filter { position in
            let source = pipeline.sources[position]
            let sharded = source.forEachEntity != nil || (shard?.takes(position: position) ?? true)
            return sharded && (only.isEmpty || only.contains { source.isNamed($0) })
        }
    }

    /// The sources `source` (at `position` in the file) runs as: itself, or for a `for_each`
    /// from an entity one per item the store holds now, item `k` at position `position + k`
    /// for `--shard`.
    /// An item that cannot be used is left out after `on_error` (`usable(_:)`).
    private func expansions(of source: SourceSpec, at position: Int, in container: PersistentContainer) throws(PipelineError) -> [SourceSpec] {
        guard let forEach = source.forEachEntity else { return try usable([source]) }
        let items: [String]
        do {
            items = try forEach.items(in: container, nilMatching: pipeline.predicateNilMatching)
        } catch {
            throw PipelineError(.io, "source \(source.name): cannot read the for_each items from \(forEach.entity): \(error)", underlying: error)
        }
        if items.isEmpty { logger.notice("for_each has no items: no request", metadata: ["source": "\(source.name)"]) }
        return try usable(items.enumerated().filter { shard?.takes(position: position + $0.offset) ?? true }
            .map { source.expanded(item: $0.element, index: $0.offset, pipeline: pipeline.name) })
    }

    /// Runs the sources (when `sources`) and then the exports (when `exports`); never throws: failures are in the report.
    public func run(sources runSources: Bool, exports runExports: Bool) -> (RunReport, PipelineError?) {
        let started = Date()
        var report = RunReport(pipeline: pipeline.name, startedAt: RunReport.timestamp(started), finishedAt: "", store: store.shown)
        var failure: PipelineError?
        var opened: PersistentContainer?
        // Held until the store is closed, below.
        var lock: StoreLock?
        do {
            try store.validate()   // before the lock file, which would be made beside a `memory://` "path"
            try checkOnly()
            // A SQLite store's lock is a file beside it; a PostgreSQL store's holds are in the database.
            if runSources && !store.isPostgres {
                lock = try StoreLock(store: store, wait: wait) { holder in
                    logger.notice("waiting for the run that holds the store", metadata: ["pid": "\(holder.map(String.init) ?? "unknown")", "store": "\(store)"])
                }
            }
            let container = try openStore(creating: runSources)
            opened = container
            if runSources {
                try deferDiskSync(container)
                let environment = RunEnvironment(options: options, logger: logger, redactor: redactor, progress: progress,
                                                 cancellation: cancellation, secretVariables: pipeline.secretVariables)
                let plan = networkPlan
                let engine = try startEngine(plan, in: container)
                defer { engine.stop() }
                // Resuming: for_each items a stopped run completed are not requested again.
                let forEachRuns = ForEachResume(container: container, template: SecretTemplate(variables: pipeline.secretVariables, redactor: redactor),
                                                restart: options.restart, logger: logger)
                for positions in positionGroups {
                    // Read when the run reaches them: a `for_each` from an entity sees what the sources before it saved.
                    var group: [SourceSpec] = []
                    for position in positions { group += try expansions(of: pipeline.sources[position], at: position, in: container) }
                    let items = group.first.map { ForEachResume.items(of: $0, among: group) } ?? []
                    // Items done before a stop come first (items complete in order): listed, not requested.
                    var sources = group
                    while let first = sources.first, let completed = try forEachRuns.completedItem(first, items: items) {
                        report.sources.append(completed)
                        try forEachRuns.itemFinished(first, among: group)
                        sources.removeFirst()
                    }
                    // The items of a `for_each` side by side, up to the concurrency: applied in item order.
                    let streams = SourceStreams(engine: engine, sources: sources, entity: { pipeline.entity(named: $0.entity) },
                                                plan: plan, container: container, environment: environment, forEachItems: items)
                    defer { streams.close() }
                    for (index, source) in sources.enumerated() {
                        guard let entity = pipeline.entity(named: source.entity) else { continue }
                        let hold = try holdSource(source.name, in: container)
                        defer { hold?.release() }
                        logger.notice("source started", metadata: ["source": "\(source.name)"])
                        if let interrupted = cancellation.error { throw interrupted }
                        var run = SourceRun(source: source, entity: entity, pipelineEntities: pipeline.entities,
                                            container: container, environment: environment)
                        run.pages = try streams.pages(forItem: index)
                        let (entry, error) = run.run()
                        report.sources.append(entry)
                        if let error { throw error }
                        try forEachRuns.itemFinished(source, among: group)
                    }
                }
            }
            if let interrupted = cancellation.error { throw interrupted }
            if runExports {
                for export in pipeline.exports where only.isEmpty || only.contains(export.name) {
                    if let interrupted = cancellation.error { throw interrupted }
                    guard let entity = pipeline.entity(named: export.entity) else { continue }
                    logger.debug("export started", metadata: ["export": "\(export.name)"])
                    let context = container.newBackgroundContext()
                    context.name = "export.\(export.name)"
                    var position: HistoryToken?
                    let entry = try context.performAndWait { () throws(PipelineError) -> RunReport.Export in
                        try ExportRun(export: export, entity: entity, nilMatching: pipeline.predicateNilMatching, cancellation: cancellation)
                            .run(in: context, position: &position)
                    }
                    // A delta export's position moves only now that its file is in place.
                    if let position { try keepPosition(position, of: export.name, in: container) }
                    report.exports.append(entry)
                    logger.notice("export written", metadata: ["export": "\(export.name)", "rows": "\(entry.rows)"])
                }
                try purgeHistory(in: container)
            }
        } catch let error as PipelineError {
            failure = PipelineError(error.kind, redactor(error.message), underlying: error.underlying)
        } catch {
            failure = PipelineError(.other, redactor("\(error)"), underlying: error)
        }
        if runSources, let opened {
            recordRun(in: opened, started: started, failure: failure, sources: report.sources)
        }
        if runSources, let opened, let syncFailure = syncDeferredCommits(opened), failure == nil {
            failure = syncFailure
        }
        if let opened { close(opened) }
        withExtendedLifetime(lock) {}
        let finished = Date()
        report.finishedAt = RunReport.timestamp(finished)
        report.durationS = SourceRun.rounded(finished.timeIntervalSince(started))
        if let failure {
            report.status = "failed"
            report.error = failure.message
        }
        return (report, failure)
    }

    /// The positions this run takes, in order, grouped by the source in the file they come
    /// from: the items of a `for_each` from a file or a list (expanded when the file was read,
    /// one position each) form one group, fetched side by side; a `for_each` from an entity is
    /// one position, expanded when the run reaches it.
    private var positionGroups: [[Int]] {
        var groups: [[Int]] = []
        for position in selectedPositions {
            let name = pipeline.sources[position].forEach?.source
            if let name, let last = groups.last?.last, pipeline.sources[last].forEach?.source == name {
                groups[groups.count - 1].append(position)
            } else {
                groups.append([position])
            }
        }
        return groups
    }

    /// How the run uses the network: the file's `concurrency` (or `--concurrency`), its hosts'
    /// budgets and its sources' (Pipeline file reference, "Real networks").
    private var networkPlan: NetworkPlan {
        let concurrency = options.concurrency(for: pipeline)
        let pipeline = self.pipeline
        var plan = NetworkPlan(concurrency: concurrency)
        plan.host = { url in
            guard let budget = pipeline.hostBudget(for: url) else { return nil }
            let bucket = budget.rateLimit.map {
                TokenBucketSpec(key: "host:\(budget.key)", tokensPerSecond: $0.tokensPerSecond, burst: Double($0.burst))
            }
            return ("\(budget.key)", budget.concurrency, bucket)
        }
        // One bucket per source in the file: a `for_each`'s items share it.
        plan.sourceBucket = { source in
            source.rateLimit.map {
                TokenBucketSpec(key: "source:\(source.forEach?.source ?? source.name)", tokensPerSecond: $0.tokensPerSecond, burst: Double($0.burst))
            }
        }
        plan.prefetch = { $0.prefetch(runConcurrency: concurrency) }
        return plan
    }

    /// The run's HTTP engine, for every HTTP source of the run. On a store many runners share,
    /// its buckets are the store's (`StoreTokenBuckets`: "One budget for many runners").
    private func startEngine(_ plan: NetworkPlan, in container: PersistentContainer) throws(PipelineError) -> HTTPEngine {
        let shared = StoreTokenBuckets.shared(by: container.persistentStoreCoordinator, logger: logger, redactor: redactor)
        do {
            return try HTTPEngine(HTTPEngine.Configuration(concurrency: plan.concurrency, userAgent: SwellVersion.userAgent,
                                                           sharedBuckets: shared))
        } catch {
            throw PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
        }
    }

    /// Closes the store before the run returns (and before its lock goes): the last connection
    /// to a SQLite store copies the WAL into the store file and removes it, so the file alone
    /// holds every commit of the run — a copy of it is a whole store. A store that cannot be
    /// closed cleanly loses nothing (its `-wal` file holds the last commits, and the next open
    /// takes them in); the run says so in a warning.
    private func close(_ container: PersistentContainer) {
        do {
            try container.close()
        } catch {
            logger.warning("the store could not be closed cleanly; its -wal file keeps the last commits until the next run opens it",
                           metadata: ["store": "\(store)", "error": "\(redactor("\(error)"))"])
        }
    }

    /// Syncs the run's commits, which did not wait for the disk (`deferDiskSync`), before the
    /// store closes: a failure here fails the run, as its commits may not be on disk.
    private func syncDeferredCommits(_ container: PersistentContainer) -> PipelineError? {
        do {
            try (container.persistentStoreCoordinator.persistentStore as? SQLiteStore)?.syncDeferredCommits()
            return nil
        } catch {
            return PipelineError(.io, redactor("the run's commits to the store \(store) could not be synced to disk: \(error)"),
                                 underlying: error)
        }
    }

    /// A run's commits do not wait for the disk one by one: the store syncs them all when the
    /// run closes it (group commit; each commit stays atomic and survives the process being
    /// killed, the README's "Durability").
    private func deferDiskSync(_ container: PersistentContainer) throws(PipelineError) {
        do {
            // A server store's commits are the server's to sync; an in-memory store has no disk.
            try (container.persistentStoreCoordinator.persistentStore as? SQLiteStore)?.deferDiskSyncUntilClose()
        } catch {
            throw PipelineError(.io, redactor("cannot open the store \(store): \(error)"), underlying: error)
        }
    }

    /// On a store many runners share (PostgreSQL): holds the source for this run, or
    /// throws `.locked` naming the runner that holds it (with `wait`, queues behind it).
    private func holdSource(_ source: String, in container: PersistentContainer) throws(PipelineError) -> PostgresSourceHold? {
        guard let holding = container.persistentStoreCoordinator.persistentStore as? PostgresStore else { return nil }
        do {
            return try holding.holdSource(source, wait: wait) { holder in
                logger.notice("waiting for the runner that holds the source",
                              metadata: ["source": "\(source)", "host": "\(holder.host)", "pid": "\(holder.pid)"])
            }
        } catch let error as SourceHeldError {
            throw PipelineError(.locked, "\(error.description) on the store \(store); use --wait to queue behind it", underlying: error)
        } catch {
            throw PipelineError(.io, redactor("cannot hold source \(source) on the store \(store): \(error)"), underlying: error)
        }
    }

    /// Keeps a line about this run in the store's history (for `swell status`).
    private func recordRun(in container: PersistentContainer, started: Date, failure: PipelineError?, sources: [RunReport.Source]) {
        var entry = RunReport(pipeline: pipeline.name, startedAt: RunReport.timestamp(started), finishedAt: RunReport.timestamp(Date()), store: store.shown)
        entry.sources = sources
        entry.durationS = SourceRun.rounded(Date().timeIntervalSince(started))
        entry.status = failure == nil ? "succeeded" : "failed"
        entry.error = failure.map { redactor($0.message) }
        let writer = container.writerContext
        let logger = self.logger, hide = self.redactor
        writer.performAndWait {
            // The history is a convenience for `swell status`: a run whose history cannot be kept
            // keeps its result and exit code, and says so in the log.
            var previous: String?
            do {
                previous = try writer.storeMetadata(forKey: RunHistory.key)
            } catch {
                logger.warning("the store's run history could not be read; it starts again with this run",
                               metadata: ["error": "\(hide("\(error)"))"])
            }
            writer.setStoreMetadata(RunHistory.appending(entry, to: previous), forKey: RunHistory.key)
            do {
                try writer.save()
            } catch {
                logger.warning("this run could not be kept in the store's run history", metadata: ["error": "\(hide("\(error)"))"])
            }
        }
    }

    /// Purges the history every delta export of the file has read and that is older than
    /// `history.keep_days` (README, "Delta exports"): it never grows without bound.
    private func purgeHistory(in container: PersistentContainer) throws(PipelineError) {
        guard pipeline.history else { return }
        let writer = container.writerContext
        do {
            try writer.performAndWait {
                guard let old = try writer.lastHistoryToken(before: Date().addingTimeInterval(-pipeline.historyKeepDays * 86_400)) else { return }
                var bound = old.value + 1
                // An export that never ran reads no history: its first run exports every row.
                for export in pipeline.exports where export.changesSinceLast {
                    if let position = try writer.storeMetadata(forKey: ExportRun.positionKey(export.name)).flatMap(Int64.init) {
                        bound = min(bound, position + 1)
                    }
                }
                // The store notes how far it purged (historyPurgedBefore): a delta export whose
                // position is older is refused, never followed past the gap.
                try writer.deleteHistory(before: HistoryToken(value: bound))
            }
        } catch {
            throw PipelineError(.io, redactor("cannot purge the store's history: \(error)"), underlying: error)
        }
    }

    /// Keeps a delta export's history position in the store (`ExportRun.positionKey`).
    private func keepPosition(_ position: HistoryToken, of export: String, in container: PersistentContainer) throws(PipelineError) {
        let writer = container.writerContext
        do {
            try writer.performAndWait {
                writer.setStoreMetadata(String(position.value), forKey: ExportRun.positionKey(export))
                try writer.save()
            }
        } catch {
            throw PipelineError(.io, redactor("export \(export): the file is written but its position could not be kept: \(error)"), underlying: error)
        }
    }

    /// Opens the store; an export-only run needs one to exist.
    func openStore(creating: Bool) throws(PipelineError) -> PersistentContainer {
        try store.validate()
        let url: URL
        if store.isPostgres {
            guard let parsed = URL(string: storePath) else {
                throw PipelineError(.usage, "the store \(store) is not a valid URL (libpq's URI syntax: postgres://user@host:port/database)")
            }
            url = parsed
        } else {
            if !creating && !FileManager.default.fileExists(atPath: storePath) {
                throw PipelineError(.io, "no store at \(store): run `swell import` (or `run`) first")
            }
            url = URL(fileURLWithPath: storePath)
        }
        let container = PersistentContainer(name: pipeline.name, managedObjectModel: pipeline.model, storeURL: url,
                                            options: PersistentStoreOptions(history: pipeline.history),
                                            storeTypes: [.sqlite, .postgres])   // a pipeline's two stores
        container.writerContext.logger = logger   // the whole stack reports through the run's log
        do {
            try container.loadPersistentStores()
        } catch {
            throw PipelineError(.io, redactor("cannot open the store \(store): \(error)"), underlying: error)
        }
        return container
    }
}
