import Foundation
@testable import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Issue 20, 2a: random version-2 pipelines (`RandomPipeline`) synced run after run
/// with random edits (`RandomRecords`), page by page from a local HTTP server, and
/// after every run the store compared with the graph `GraphModel` computes from the
/// records alone — on the SQLite, in-memory and PostgreSQL stores.
///
/// CI runs a fixed list of seeds. `SWELL_DIFF_SEEDS=500` runs seeds 1...500 instead,
/// `SWELL_DIFF_SEED=1234` that one seed; a failure names its seed, store and run and
/// prints the command that replays it.
@Suite struct PipelineDifferentialTests {
    /// The seeds this run checks.
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["SWELL_DIFF_SEED"].flatMap(UInt64.init) { return [one] }
        if let count = environment["SWELL_DIFF_SEEDS"].flatMap(UInt64.init), count > 0 { return Array(1...count) }
        return Array(1...20)
    }

    /// Runs per seed: the first stores, the others edit.
    static let runs = 4

    @Test(arguments: PipelineStore.allCases)
    func randomGraphsSyncToWhatTheRecordsSay(store: PipelineStore) throws {
        try checkSeeds(store: store, shallow: false)
    }

    /// The same with pipelines of the shapes whose nested records go down as batch inserts
    /// (`GraphShape`, issue 21): to-ones and join-table to-manys one level deep, objects shared
    /// between records and met again in one batch, mappings of part of an entity's attributes.
    @Test(arguments: PipelineStore.allCases)
    func randomShallowGraphsSyncAsBatchesToWhatTheRecordsSay(store: PipelineStore) throws {
        try checkSeeds(store: store, shallow: true)
    }

    /// Checks every seed of `seeds` on `store` against one local HTTP server; records the failures (three at most).
    private func checkSeeds(store: PipelineStore, shallow: Bool) throws {
        let pages = ServedPages()
        let server = try LoopbackHTTPServer { request in
            guard let body = pages[request.path] else { return LoopbackHTTPServer.Response(status: 404) }
            return .json(body)
        }
        defer { server.stop() }
        var failed: [UInt64] = []
        for seed in Self.seeds {
            if let failure = try check(seed: seed, store: store, server: server, pages: pages, shallow: shallow) {
                failed.append(seed)
                Issue.record(Comment(rawValue: failure))
                if failed.count >= 3 { break }
            }
        }
        #expect(failed.isEmpty, "failing seeds on \(store.rawValue): \(failed)")
    }

    /// Syncs one seed's pipeline `runs` times; returns what went wrong, or nil.
    private func check(seed: UInt64, store: PipelineStore, server: LoopbackHTTPServer, pages: ServedPages,
                       shallow: Bool) throws -> String? {
        var random = SeededGenerator(state: seed)
        let shape = RandomPipeline(using: &random, shallow: shallow)
        let prefix = "/s\(seed)\(shallow ? "-shallow" : "")"
        let base = server.baseURL + prefix
        let yaml = shape.yaml(base: base)
        let pipeline = try InProcessPipeline(yaml: yaml, store: store)
        var records = RandomRecords(pipeline: shape)
        var model = GraphModel(pipeline: shape)
        var main: [JSON] = []
        let replay = "SWELL_DIFF_SEED=\(seed) swift test --filter \"PipelineDifferentialTests/\(shallow ? "randomShallow" : "randomGraphs")\""
        for run in 1...Self.runs {
            main = records.main(previous: main, using: &random)
            let side = records.side(using: &random)
            var served = RandomRecords.pages(main, base: base, name: "main", using: &random)
            served.merge(RandomRecords.pages(side, base: base, name: "side", using: &random)) { $1 }
            for (path, body) in served { pages[prefix + path] = body }
            let batchSize = Int.random(in: 1...8, using: &random)
            model.applyMain(main)
            model.applySide(side)
            let outcome = "seed \(seed), store \(store.rawValue), run \(run) (batch size \(batchSize))"
            do {
                _ = try pipeline.run(options: RunOptions(workers: 2, batchSize: batchSize))
            } catch {
                return "\(outcome): the run failed: \(error)\n\(Self.details(yaml: yaml, served: served))\nreplay: \(replay)"
            }
            let differences = try pipeline.graph().differences(from: model.graph)
            if !differences.isEmpty {
                return "\(outcome): the store differs from the records' graph:\n  " + differences.prefix(12).joined(separator: "\n  ")
                    + (differences.count > 12 ? "\n  … \(differences.count - 12) more" : "")
                    + "\n\(Self.details(yaml: yaml, served: served))\nreplay: \(replay)"
            }
        }
        return nil
    }

    /// The pipeline and pages of a failing run, when `SWELL_DIFF_VERBOSE` is set.
    private static func details(yaml: String, served: [String: String]) -> String {
        guard ProcessInfo.processInfo.environment["SWELL_DIFF_VERBOSE"] != nil else { return "(SWELL_DIFF_VERBOSE=1 prints the pipeline and its pages)" }
        return yaml + served.keys.sorted().map { "\($0): \(served[$0]!)" }.joined(separator: "\n")
    }
}

/// The page bodies the test's server answers with, by request path.
///
/// `@unchecked Sendable`: every access holds `lock`.
final class ServedPages: @unchecked Sendable {
    private let lock = NSLock()
    private var bodies: [String: String] = [:]

    subscript(path: String) -> String? {
        get { lock.withLock { bodies[path] } }
        set { lock.withLock { bodies[path] = newValue } }
    }
}
