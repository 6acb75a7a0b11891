import Foundation
@testable import SwellContexts
@testable import SwellPipeline
import SwellTestSupport
import Testing
import SwellStore
import SwellPipelineTestSupport

/// README, "Resuming a stopped source": a run that stops at page k — its server answering
/// 500 past the retries there — and its rerun, for each paging form and each way records are
/// written. The rerun asks for page k first, says `resumed_from: k`, and leaves the store
/// and the exports an uninterrupted run leaves.
@Suite struct ResumeTests {
    /// How the source's records reach the store.
    enum WritePath: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A flat source: columns, batch inserts (`ColumnWriter`).
        case columns
        /// Nested to-ones: graph batches (`GraphWriter`).
        case graph
        /// An ordered, cascading to-many: objects through the upsert worker (`UpsertWorker`, `SaveScheduler`).
        case objects
        /// `mode: append`: several upsert workers' batch inserts.
        case append

        var description: String { rawValue }
    }

    /// The pipeline file for `path` reading `url` paged as `paging`.
    static func pipeline(_ path: WritePath, paging: PagedAPI.Paging, url: String, mode: String? = nil, extra: String = "") -> String {
        var entities = """
          Item:
            key: [id]
            attributes: { id: integer, title: string }
        """
        var fields = ""
        var exports = "  - { name: items, entity: Item, path: out/items.csv, columns: [id, title] }"
        switch path {
        case .columns, .append:
            break
        case .graph:
            entities += "\n    relationships: { author: { to: Person } }\n  Person: { key: [login], attributes: { login: string, name: string } }"
            fields = "    fields: { author: { path: author, fields: { login: login, name: name } } }"
            exports = "  - { name: items, entity: Item, path: out/items.csv, columns: [id, title, { name: author, value: author.login }] }\n"
                + "  - { name: people, entity: Person, path: out/people.csv, columns: [login, name] }"
        case .objects:
            entities += "\n    relationships: { notes: { to: Note, many: true, ordered: true, delete: cascade } }\n"
                + "  Note: { key: [id], attributes: { id: integer, text: string } }"
            fields = "    fields: { notes: { path: notes, fields: { id: id, text: text } } }"
            exports += "\n  - { name: notes, entity: Note, path: out/notes.csv, columns: [id, text] }"
        }
        let sourceMode = mode ?? (path == .append ? "append" : "upsert")
        return """
        version: 3
        name: items
        store: .swell/items.sqlite
        entities:
        \(entities)
        sources:
          - name: items
            entity: Item
            url: "\(url)"
            records: data
            retries: 0
            mode: \(sourceMode)
            \(paging.paginate)
        \(fields)
        \(extra)
        exports:
        \(exports)
        """
    }

    /// The flags of every run: a batch a page (every page a resume point), several workers.
    static func flags(_ path: WritePath, batchSize: Int = PagedAPI.perPage) -> [String] {
        ["--batch-size", "\(batchSize)", "--workers", path == .append ? "3" : "2", "--progress", "never"]
    }

    /// A store and its exports after a run.
    struct Outcome: Equatable {
        var graph: StoredGraph
        var exports: [String: Data]
    }

    static func outcome(_ workspace: Workspace, _ path: WritePath) throws -> Outcome {
        let pipeline = try PipelineFileLoader(environment: [:]).load(path: workspace.path("items.yml"))
        let container = PersistentContainer(name: "items", managedObjectModel: pipeline.model,
                                            storeURL: URL(fileURLWithPath: workspace.path(".swell/items.sqlite")))
        try container.loadPersistentStores()
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let graph = try context.performAndWait { try StoredGraph(reading: pipeline.model, in: context) }
        var exports: [String: Data] = [:]
        for name in ["items", "people", "notes"] {
            let file = workspace.path("out/\(name).csv")
            if FileManager.default.fileExists(atPath: file) { exports[name] = try Data(contentsOf: URL(fileURLWithPath: file)) }
        }
        return Outcome(graph: graph, exports: exports)
    }

    /// An uninterrupted run's outcome.
    static func reference(_ path: WritePath, _ api: PagedAPI, batchSize: Int = PagedAPI.perPage) throws -> Outcome {
        let workspace = try Workspace()
        try workspace.write("items.yml", pipeline(path, paging: api.paging, url: api.url()))
        let run = try workspace.run(["run", "items.yml"] + flags(path, batchSize: batchSize))
        #expect(run.status == 0, "\(run.stderr)")
        return try outcome(workspace, path)
    }

    /// The report's first source entry.
    static func source(_ workspace: Workspace, _ index: Int = 0) throws -> [String: Any] {
        (try workspace.report()["sources"] as? [[String: Any]])?[index] ?? [:]
    }

    @Test(arguments: PagedAPI.Paging.allCases, WritePath.allCases)
    func aRunThatFailsAtAPageResumesThereAndEndsAsAnUninterruptedRun(paging: PagedAPI.Paging, path: WritePath) throws {
        let api = try PagedAPI(paging: paging)
        let expected = try Self.reference(path, api)

        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(path, paging: paging, url: api.url()))
        api.failAt.withLock { $0 = 3 }
        let failed = try workspace.run(["run", "items.yml"] + Self.flags(path))
        #expect(failed.status == 69, "\(failed.stderr)")
        let status = try workspace.run("status", "items.yml")
        #expect(status.stdout.contains("source items: stopped with 3 pages saved"), "\(status.stdout)")

        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try workspace.run(["run", "items.yml", "--report", "out/report.json"] + Self.flags(path))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = api.requests(from: start).compactMap(api.pageIndex)
        let last = paging == .page ? api.pages : api.pages - 1   // page numbers end with an empty page
        #expect(asked == Array(3...last), "the rerun asks for the pages from the stopped one on, once each")
        let entry = try Self.source(workspace)
        #expect(entry["resumed_from"] as? Int == 3)
        #expect(entry["pages"] as? Int == last - 2)
        #expect(entry["requests"] as? Int == api.requests(from: start).count && entry["waited_s"] as? Double == 0)
        #expect(try Self.outcome(workspace, path) == expected)
        #expect(!(try workspace.run("status", "items.yml").stdout.contains("stopped")), "a completed source keeps no position")
    }

    @Test(arguments: WritePath.allCases)
    func batchesThatEndMidPageResumeAtTheFirstPageNotSavedWhole(path: WritePath) throws {
        let api = try PagedAPI(paging: .offset, pages: 8)
        let expected = try Self.reference(path, api, batchSize: 3)
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(path, paging: .offset, url: api.url()))
        api.failAt.withLock { $0 = 5 }
        #expect(try workspace.run(["run", "items.yml"] + Self.flags(path, batchSize: 3)).status == 69)
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try workspace.run(["run", "items.yml", "--report", "out/report.json"] + Self.flags(path, batchSize: 3))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = api.requests(from: start).compactMap(api.pageIndex)
        let resumedFrom = try Self.source(workspace)["resumed_from"] as? Int ?? -1
        // Batches of 3 over pages of 5: some commit before page 5 held its first pages whole.
        #expect((1...5).contains(resumedFrom), "resumed from \(resumedFrom)")
        #expect(asked == Array(resumedFrom..<8))
        // Rows of the stopped page saved before are written again, to the same result; append
        // mode leaves those it saved itself as they are (no "exists already").
        #expect(try Self.source(workspace)["rejected"] as? Int == 0)
        #expect(try Self.outcome(workspace, path) == expected)
    }

    /// A bad record stops the run part-way through a page, while other workers (append mode)
    /// save their records of that page and the next: the rerun resumes at the bad record's page,
    /// and the records that run saved itself are not refused as keys that exist already.
    @Test(arguments: WritePath.allCases)
    func aRunStoppedByABadRecordResumesAtItsPage(path: WritePath) throws {
        let api = try PagedAPI(paging: .offset, pages: 8)
        let expected = try Self.reference(path, api, batchSize: 3)
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(path, paging: .offset, url: api.url()))
        api.badRecord.withLock { $0 = 28 }   // page 5, its third record
        let failed = try workspace.run(["run", "items.yml"] + Self.flags(path, batchSize: 3))
        #expect(failed.status == 65, "\(failed.stderr)")
        api.badRecord.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try workspace.run(["run", "items.yml", "--report", "out/report.json"] + Self.flags(path, batchSize: 3))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let resumedFrom = try Self.source(workspace)["resumed_from"] as? Int ?? -1
        #expect((1...5).contains(resumedFrom), "resumed from \(resumedFrom): never past the bad record's page")
        #expect(api.requests(from: start).compactMap(api.pageIndex) == Array(resumedFrom..<8))
        #expect(try Self.source(workspace)["rejected"] as? Int == 0)
        #expect(try Self.outcome(workspace, path) == expected)
    }
}
