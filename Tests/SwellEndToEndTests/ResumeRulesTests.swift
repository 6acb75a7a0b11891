import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Resuming a stopped source", beyond one source's pages: `for_each` items done
/// before the stop are not requested again; `mode: replace` resumed deletes exactly what an
/// uninterrupted replace deletes; a source changed in the file, or `--restart`, starts over;
/// a position never holds a secret; a run killed with SIGKILL resumes too.
@Suite struct ResumeRulesTests {
    typealias Path = ResumeTests.WritePath

    private func run(_ workspace: Workspace, _ path: Path, _ arguments: String..., environment: [String: String] = [:]) throws
        -> SwellProcess.Outcome {
        try workspace.run(["run", "items.yml"] + arguments + ResumeTests.flags(path), environment: environment)
    }

    @Test func forEachItemsDoneBeforeTheStopAreNotRequestedAgain() throws {
        let api = try PagedAPI(paging: .offset)
        let yaml = ResumeTests.pipeline(.columns, paging: .offset, url: api.server.baseURL + "/items/${item}", extra: "    for_each: [a, b, c]")
        let reference = try Workspace()
        try reference.write("items.yml", yaml)
        #expect(try run(reference, .columns).status == 0)
        let expected = try ResumeTests.outcome(reference, .columns)

        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        api.failItem.withLock { $0 = "b" }
        api.failAt.withLock { $0 = 2 }
        #expect(try run(workspace, .columns).status == 69)
        let status = try workspace.run("status", "items.yml").stdout
        #expect(status.contains("source items[a]: done (6 pages)"), "\(status)")
        #expect(status.contains("source items[b]: stopped with 2 pages saved"), "\(status)")

        api.failAt.withLock { $0 = nil }
        var start = api.server.requests.count
        let rerun = try run(workspace, .columns, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = api.requests(from: start).map { "\(PagedAPI.item($0) ?? "-")\(api.pageIndex($0) ?? -1)" }
        #expect(asked == ["b2", "b3", "b4", "b5", "c0", "c1", "c2", "c3", "c4", "c5"], "item a is not requested again")
        let entries = try workspace.report()["sources"] as? [[String: Any]] ?? []
        #expect(entries.map { $0["name"] as? String } == ["items[a]", "items[b]", "items[c]"])
        #expect(entries.map { $0["resumed_from"] as? Int } == [6, 2, 0])
        #expect(try ResumeTests.outcome(workspace, .columns) == expected)

        // The for_each completed: the next run starts over, every item at its first page.
        let after = try workspace.run("status", "items.yml").stdout
        #expect(!after.contains("done (") && !after.contains("stopped with"), "\(after)")
        start = api.server.requests.count
        #expect(try run(workspace, .columns).status == 0)
        #expect(api.requests(from: start).filter { api.pageIndex($0) == 0 }.compactMap(PagedAPI.item) == ["a", "b", "c"])
    }

    @Test(arguments: [Path.columns, .graph, .objects])
    func aResumedReplaceDeletesExactlyWhatAnUninterruptedReplaceDeletes(path: Path) throws {
        let api = try PagedAPI(paging: .next)
        let replace = ResumeTests.pipeline(path, paging: .next, url: api.url(), mode: "replace")
        /// The store a first run leaves, then the replace run's dataset: new titles, ids 7 and 22 gone.
        func seed(_ workspace: Workspace) throws {
            try workspace.write("items.yml", replace)
            api.titleSuffix.withLock { $0 = "" }
            api.leftOut.withLock { $0 = [] }
            #expect(try run(workspace, path).status == 0)
            api.titleSuffix.withLock { $0 = " (new)" }
            api.leftOut.withLock { $0 = [7, 22] }
        }
        let reference = try Workspace()
        try seed(reference)
        #expect(try run(reference, path, "--report", "out/report.json").status == 0)
        let expected = try ResumeTests.outcome(reference, path)
        #expect(try ResumeTests.source(reference)["deleted"] as? Int == 2)

        let workspace = try Workspace()
        try seed(workspace)
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, path).status == 69)
        api.failAt.withLock { $0 = nil }
        let rerun = try run(workspace, path, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let entry = try ResumeTests.source(workspace)
        #expect(entry["resumed_from"] as? Int == 3)
        // Ids 1–15 came before the stop: the sweep knows them from the keys kept with the position.
        #expect(entry["deleted"] as? Int == 2)
        #expect(try ResumeTests.outcome(workspace, path) == expected)
    }

    @Test func aResumedIncrementalSourceKeepsTheCursorAnUninterruptedRunKeeps() throws {
        let api = try PagedAPI(paging: .page)
        let yaml = ResumeTests.pipeline(.columns, paging: .page, url: api.url(), extra: "    incremental: { cursor: rank, param: since }")
            .replacingOccurrences(of: "attributes: { id: integer, title: string }", with: "attributes: { id: integer, title: string, rank: integer }")
        let reference = try Workspace()
        try reference.write("items.yml", yaml)
        #expect(try run(reference, .columns).status == 0)
        #expect(try reference.run("status", "items.yml").stdout.contains("source items: incremental rank = 1000"))

        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns).status == 69)
        #expect(try workspace.run("status", "items.yml").stdout.contains("source items: incremental rank = (none yet)"))
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        #expect(try run(workspace, .columns).status == 0)
        let asked = api.requests(from: start)
        // It keeps the cursor it started with (none: no `since`), and counts the pages before the stop in its largest.
        #expect(asked.map(api.pageIndex) == [3, 4, 5, 6] && asked.allSatisfy { PagedAPI.query($0.path)["since"] == nil })
        #expect(try workspace.run("status", "items.yml").stdout.contains("source items: incremental rank = 1000"))
    }

    @Test func aSourceChangedInTheFileStartsAtItsFirstPage() throws {
        let api = try PagedAPI(paging: .offset)
        let workspace = try Workspace()
        try workspace.write("items.yml", ResumeTests.pipeline(.columns, paging: .offset, url: api.url()))
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns).status == 69)
        api.failAt.withLock { $0 = nil }
        try workspace.write("items.yml", ResumeTests.pipeline(.columns, paging: .offset, url: api.url(query: "state=all")))
        let start = api.server.requests.count
        let rerun = try run(workspace, .columns, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("the source changed in the file since it stopped"), "\(rerun.stderr)")
        #expect(api.requests(from: start).compactMap(api.pageIndex) == Array(0..<6))
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 0)
    }

    @Test func restartIgnoresAndDropsTheKeptPosition() throws {
        let api = try PagedAPI(paging: .cursor)
        let workspace = try Workspace()
        try workspace.write("items.yml", ResumeTests.pipeline(.graph, paging: .cursor, url: api.url()))
        api.failAt.withLock { $0 = 4 }
        #expect(try run(workspace, .graph).status == 69)
        #expect(try workspace.run("export", "items.yml", "--restart").status == 64, "export fetches nothing to restart")
        // --restart also when this run fails early: the position is gone, the next run starts over.
        api.failAt.withLock { $0 = 1 }
        #expect(try run(workspace, .graph, "--restart").status == 69)
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try run(workspace, .graph, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(api.requests(from: start).compactMap(api.pageIndex) == Array(1..<6), "the position the --restart run kept, not the first run's")
        let again = api.server.requests.count
        #expect(try run(workspace, .graph, "--restart", "--report", "out/report.json").status == 0)
        #expect(api.requests(from: again).compactMap(api.pageIndex) == Array(0..<6))
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 0)
    }

    @Test(arguments: [PagedAPI.Paging.next, .link])
    func anAPIKeyEchoedInNextLinksNeverReachesTheStoreOrStatus(paging: PagedAPI.Paging) throws {
        let api = try PagedAPI(paging: paging)
        let key = "sekrit-key-4242"
        let workspace = try Workspace()
        try workspace.write("items.yml", ResumeTests.pipeline(.columns, paging: paging, url: api.url(query: "key=${API_KEY}")))
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns, environment: ["API_KEY": key]).status == 69)
        for suffix in ["", "-wal", "-journal"] {
            let file = workspace.path(".swell/items.sqlite" + suffix)
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            #expect(bytes.range(of: Data(key.utf8)) == nil, "\(file) holds the key")
        }
        let status = try workspace.run(["status", "items.yml"], environment: ["API_KEY": key])
        #expect(!status.stdout.contains(key) && !status.stderr.contains(key))
        #expect(status.stdout.contains("stopped with 3 pages saved; resumes at \(api.server.baseURL)/items?p=3&key=${API_KEY}"),
                "\(status.stdout)")

        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try run(workspace, .columns, "--report", "out/report.json", environment: ["API_KEY": key])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let first = api.requests(from: start).first
        #expect(first.map(api.pageIndex) == 3)
        #expect(first.map { PagedAPI.query($0.path)["key"] } == key, "the key is filled back from the environment")
    }

    @Test func aKeyWrittenInTheFileItselfIsNeverKeptInAPosition() throws {
        let api = try PagedAPI(paging: .next)
        let key = "literal-key-9191"
        let auth = "    auth: { api_key: { name: key, value: \(key), in: query } }"
        let yaml = ResumeTests.pipeline(.columns, paging: .next, url: api.url(), extra: auth)
        let reference = try Workspace()
        try reference.write("items.yml", yaml)
        #expect(try run(reference, .columns).status == 0)
        let expected = try ResumeTests.outcome(reference, .columns)
        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns).status == 69)
        let bytes = FileManager.default.contents(atPath: workspace.path(".swell/items.sqlite")) ?? Data()
        #expect(!bytes.isEmpty && bytes.range(of: Data(key.utf8)) == nil)
        // No `${VAR}` stands for it: the next links cannot be kept, and the rerun starts at the first page.
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        #expect(try run(workspace, .columns).status == 0)
        #expect(api.requests(from: start).compactMap(api.pageIndex) == Array(0..<6))
        #expect(try ResumeTests.outcome(workspace, .columns) == expected)
    }

    @Test func aRunKilledWithSIGKILLResumesAtTheLastPageItSaved() throws {
        let api = try PagedAPI(paging: .offset)
        let expected = try ResumeTests.reference(.columns, api)
        let workspace = try Workspace()
        try workspace.write("items.yml", ResumeTests.pipeline(.columns, paging: .offset, url: api.url()))
        api.holdAt.withLock { $0 = 4 }
        let running = try RunningSwell(["run", "items.yml", "--log-level", "debug"] + ResumeTests.flags(.columns), in: workspace.url)
        // Page 4 is held; the commit of page 3's batch keeps the position "4 pages saved".
        #expect(running.waitForStderr("pages_saved=4"))
        running.kill()
        running.finish()
        #expect(running.process.terminationReason == .uncaughtSignal)
        api.holdAt.withLock { $0 = nil }
        api.release()
        #expect(try SQLiteIntegrity.check(workspace.path(".swell/items.sqlite")) == "ok")

        let start = api.server.requests.count
        let rerun = try run(workspace, .columns, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(api.requests(from: start).compactMap(api.pageIndex) == [4, 5])
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 4)
        #expect(try ResumeTests.outcome(workspace, .columns) == expected)
    }
}
