import ArgumentParser
import Foundation
import Logging
import SwellPipeline

/// The `swell` command: sync remote JSON into a local store and export it as gzipped CSV.
@main
struct Swell: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swell",
        abstract: "Sync remote JSON into a local store and export it as gzipped CSV.",
        discussion: """
        Exit codes: 0 done, 64 bad arguments or pipeline file, 65 bad record or page, 69 source unavailable, \
        73 export or rejects file not writable, 74 store unusable, 75 store held by another run, 1 anything else.
        """,
        version: SwellVersion.current,
        subcommands: [RunCommand.self, ImportCommand.self, ExportCommand.self, ValidateCommand.self, StatusCommand.self, SeedCommand.self, InitCommand.self]
    )

    /// Runs the command after capping glibc's malloc arenas at two. Each busy
    /// thread (fetch, workers, saver, writer) would otherwise get an arena of
    /// its own that keeps freed memory: measured, two arenas hold 8 MiB less
    /// at the same speed (BENCHMARKS.md). `MALLOC_ARENA_MAX` still wins if set.
    static func main() async {
        if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil {
            limitMallocArenas(to: 2)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// How much progress to show on stderr.
enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never
}

/// Options shared by `run`, `import` and `export`.
struct RunFlags: ParsableArguments {
    @Argument(help: "The pipeline file (YAML).", completion: .file(extensions: ["yml", "yaml"]))
    var pipeline: String

    @Option(help: "The store to use, over the file's `store`.")
    var store: String?

    @Option(name: .customLong("only"), help: "Only this source or export (repeatable).",
            completion: .custom { words, _, _ in PipelineFileLoader.completionNames(words: words) })
    var only: [String] = []

    @Option(help: "Write the run report (JSON) here, also when the run fails.")
    var report: String?

    @Option(help: "Upsert workers for flat sources with mode: append (default: the number of cores). Other flat sources are read into columns on their fetch thread and written by one writer; a source with nested mappings is written by one worker, in the order its records came.")
    var workers: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("batch-size"), help: "Records of one commit, each a resume point: one batch insert of a flat source, one transaction of objects and links (or one worker save) with nested mappings. Default: 10000 for flat sources, 5000 with nested mappings, chosen for speed and memory (BENCHMARKS.md); at most about four batches are in flight.")
    var batchSize: Int?

    @Option(help: "(run, import) Requests in flight at once across the run, 1 to 256, over the file's top-level concurrency (default 4 in a version-4 file, 1 in older ones).")
    var concurrency: Int?

    @Option(help: "Progress on stderr: auto (when stderr is a terminal), always, never.")
    var progress: ProgressMode = .auto

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning or error.",
            completion: .list(["trace", "debug", "info", "notice", "warning", "error"]))
    var logLevel: String = "notice"

    @Flag(help: "When another run holds the store, wait for it instead of exiting 75.")
    var wait = false

    @Flag(help: "(run, import) Ignore and drop every kept position: each source starts at its first page, also one that stopped.")
    var restart = false

    @Option(help: "(run, import) Only the sources whose position in the file (after for_each expansion, from 0) is I modulo N: N runners with 0/N … N-1/N cover every source once.")
    var shard: String?

    @Flag(name: .customLong("measure-main-queue"),
          help: "Measure the main queue during the run (longest stall, busy share) and print it on stderr (a benchmark aid).")
    var measureMainQueue = false

    func validate() throws {
        guard workers >= 1 else { throw ValidationError("--workers must be at least 1, not \(workers)") }
        if let shard, Shard(shard) == nil {
            throw ValidationError("--shard \(shard): must be I/N with 0 <= I < N (like 0/3)")
        }
        if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be at least 1, not \(batchSize)") }
        if let concurrency, !PipelineFile.concurrencyRange.contains(concurrency) {
            throw ValidationError("--concurrency must be between 1 and 256, not \(concurrency)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \"\(logLevel)\" must be one of trace, debug, info, notice, warning, error")
        }
    }
}

extension RunFlags {
    /// Loads the file, runs, writes the report and the summary, and exits with the contract's code.
    func execute(sources: Bool, exports: Bool) async throws {
        let logger = CommandSupport.bootstrapLogging(level: Logger.Level(rawValue: logLevel) ?? .notice)
        if let shard, !sources {
            throw ValidationError("--shard \(shard): only run and import take a shard (export writes every export)")
        }
        if let concurrency, !sources {
            throw ValidationError("--concurrency \(concurrency): only run and import make requests (export reads the store)")
        }
        if restart && !sources {
            throw ValidationError("--restart: only run and import take it (export fetches nothing)")
        }
        let file = try CommandSupport.loadPipeline(pipeline, report: report)
        let counter = ProgressCounter()
        let options = RunOptions(workers: workers, batchSize: batchSize, concurrency: concurrency, restart: restart)
        logger.debug("run options", metadata: ["concurrency": "\(options.concurrency(for: file))", "workers": "\(options.workers)"])
        let runner = PipelineRunner(pipeline: file, storePath: store, options: options,
                                    only: Set(only), shard: shard.flatMap(Shard.init), wait: wait, logger: logger, progress: counter)
        let terminal = isatty(STDERR_FILENO) != 0
        let showProgress = progress == .always || (progress == .auto && terminal)
        let ticker = showProgress ? ProgressTicker(counter: counter, terminal: terminal) : nil
        let probe = measureMainQueue ? MainQueueProbe() : nil
        let interrupts = InterruptHandler(cancelling: runner.cancellation, logger: logger)
        let (runReport, failure) = await CommandSupport.offMainQueue { runner.run(sources: sources, exports: exports) }
        interrupts.stop()
        ticker?.stop()
        if let probe { FileHandle.standardError.write(Data((probe.finish().summary + "\n").utf8)) }
        var exitFailure = failure
        if let path = report {
            do {
                try runReport.write(to: path)
            } catch {
                CommandSupport.printError("cannot write the report \(path): \(error.localizedDescription)")
                if exitFailure == nil { exitFailure = PipelineError(.cannotCreate, "cannot write the report \(path)", underlying: error) }
            }
        }
        for source in runReport.sources {
            print("source \(source.name): \(source.records) records from \(source.pages) pages (\(source.inserted) inserted, \(source.updated) updated, \(source.unchanged) unchanged, \(source.deleted) deleted, \(source.rejected) rejected, \(source.notModified) not modified)")
        }
        for export in runReport.exports {
            print("export \(export.name): \(export.rows) rows to \(export.path)")
        }
        if let exitFailure {
            CommandSupport.printError(exitFailure.message)
            throw ExitCode(exitFailure)
        }
    }
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Fetch, parse and upsert every source, then write every export.",
        discussion: "Example: swell run pipelines/surf-journal.yml --report out/report.json")
    @OptionGroup var flags: RunFlags
    func run() async throws { try await flags.execute(sources: true, exports: true) }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Fetch, parse and upsert the sources only.",
        discussion: "Example: swell import pipelines/surf-journal.yml --workers 2 --batch-size 10000")
    @OptionGroup var flags: RunFlags
    func run() async throws { try await flags.execute(sources: true, exports: false) }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the exports from what the store holds (takes no lock; reads the last committed state).",
        discussion: "Example: swell export pipelines/surf-journal.yml --only journal-csv")
    @OptionGroup var flags: RunFlags
    func run() async throws { try await flags.execute(sources: false, exports: true) }
}

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check the pipeline file and its predicates without touching the store or the network.",
        discussion: "Example: swell validate pipelines/surf-journal.yml")
    @Argument(help: "The pipeline file (YAML).", completion: .file(extensions: ["yml", "yaml"])) var pipeline: String
    func run() async throws {
        let file = try CommandSupport.loadPipeline(pipeline)
        print("\(pipeline): ok (\(file.entities.count) entities, \(file.sources.count) sources, \(file.exports.count) exports)")
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the store's entities with row counts, incremental state and the last runs.",
        discussion: "Example: swell status pipelines/surf-journal.yml")
    @Argument(help: "The pipeline file (YAML).", completion: .file(extensions: ["yml", "yaml"])) var pipeline: String
    @Option(help: "The store to use, over the file's `store`.") var store: String?
    func run() async throws {
        let file = try CommandSupport.loadPipeline(pipeline)
        let path = store ?? file.store
        let lines = await CommandSupport.offMainQueue { () -> Result<[String], PipelineError> in
            Result { () throws(PipelineError) -> [String] in try StatusReader(pipeline: file, storePath: path).lines() }
        }
        switch lines {
        case .success(let lines): lines.forEach { print($0) }
        case .failure(let error):
            CommandSupport.printError(error.message)
            throw ExitCode(error)
        }
    }
}

struct SeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Install a seed store (with its -wal and -shm files) when no store is there, or with --force.",
        discussion: "Example: swell seed pipelines/surf-journal.yml --from seeds/journal.sqlite")
    @Argument(help: "The pipeline file (YAML).", completion: .file(extensions: ["yml", "yaml"])) var pipeline: String
    @Option(help: "The seed store file.") var from: String
    @Option(help: "The store to use, over the file's `store`.") var store: String?
    @Flag(help: "Replace an existing store.") var force = false
    @Flag(help: "When another run holds the store, wait for it instead of exiting 75.") var wait = false
    func run() async throws {
        let file = try CommandSupport.loadPipeline(pipeline)
        let redactor = Redactor(secrets: file.secrets)
        let location = StoreLocation(store ?? file.store, redactor: redactor)
        let outcome = await CommandSupport.offMainQueue { () -> Result<Bool, PipelineError> in
            Result { () throws(PipelineError) -> Bool in
                try Seeding.install(seed: from, store: location, redactor: redactor, force: force, wait: wait)
            }
        }
        switch outcome {
        case .success(true): print("seeded \(location) from \(from)")
        case .success(false): print("a store exists at \(location); nothing done (use --force to replace it)")
        case .failure(let error):
            CommandSupport.printError(error.message)
            throw ExitCode(error)
        }
    }
}

/// glibc's `mallopt(M_ARENA_MAX, count)`, looked up at run time (`<malloc.h>`
/// is not in Swift's Glibc module). Does nothing where there is no `mallopt`.
private func limitMallocArenas(to count: Int32) {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
    guard let symbol = dlsym(nil, "mallopt") else { return }
    _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMax, count)
}
