import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Resuming in version-4 files (README, "Resuming a stopped source"): with pages requested
/// ahead and `for_each` items side by side the position is still the first page not saved
/// whole, applied in page and item order; `resume: false` starts over every time.
@Suite struct ResumeVersion4Tests {
    typealias Path = ResumeTests.WritePath

    /// `ResumeTests.pipeline` as a version-4 file with four requests in flight.
    private func pipeline(_ path: Path, _ paging: PagedAPI.Paging, url: String, extra: String = "") -> String {
        ResumeTests.pipeline(path, paging: paging, url: url, extra: extra)
            .replacingOccurrences(of: "version: 3\n", with: "version: 4\nconcurrency: 4\n")
    }

    private func run(_ workspace: Workspace, _ path: Path, _ arguments: String...) throws -> SwellProcess.Outcome {
        try workspace.run(["run", "items.yml"] + arguments + ResumeTests.flags(path))
    }

    @Test(arguments: [Path.columns, .graph, .append])
    func pagesRequestedAheadResumeAtTheFirstPageNotSavedWhole(path: Path) throws {
        let api = try PagedAPI(paging: .offset, pages: 9)
        let yaml = pipeline(path, .offset, url: api.url(), extra: "    prefetch: 4")
        let reference = try Workspace()
        try reference.write("items.yml", yaml)
        #expect(try run(reference, path).status == 0)
        let expected = try ResumeTests.outcome(reference, path)

        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        api.failAt.withLock { $0 = 4 }
        #expect(try run(workspace, path).status == 69)
        #expect(try workspace.run("status", "items.yml").stdout.contains("stopped with 4 pages saved; resumes at offset 20"))
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try run(workspace, path, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = api.requests(from: start).compactMap(api.pageIndex)
        // Requested side by side, they reach the server in any order: none before the stopped page.
        #expect(asked.sorted() == Array(4..<9), "\(asked)")
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 4)
        #expect(try ResumeTests.outcome(workspace, path) == expected)
    }

    @Test func forEachItemsSideBySideResumeInItemOrder() throws {
        let api = try PagedAPI(paging: .link)
        let yaml = pipeline(.columns, .link, url: api.server.baseURL + "/items/${item}", extra: "    for_each: [a, b, c, d]")
        let reference = try Workspace()
        try reference.write("items.yml", yaml)
        #expect(try run(reference, .columns).status == 0)
        let expected = try ResumeTests.outcome(reference, .columns)

        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        api.failItem.withLock { $0 = "b" }
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns).status == 69)
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        let rerun = try run(workspace, .columns, "--report", "out/report.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = api.requests(from: start)
        #expect(!asked.contains { PagedAPI.item($0) == "a" }, "item a completed before the stop")
        #expect(asked.filter { PagedAPI.item($0) == "b" }.compactMap(api.pageIndex) == [3, 4, 5])
        let entries = try workspace.report()["sources"] as? [[String: Any]] ?? []
        #expect(entries.map { $0["resumed_from"] as? Int } == [6, 3, 0, 0])
        #expect(try ResumeTests.outcome(workspace, .columns) == expected)
    }

    @Test func resumeFalseStartsAtTheFirstPageEveryTime() throws {
        let api = try PagedAPI(paging: .cursor)
        let workspace = try Workspace()
        try workspace.write("items.yml", pipeline(.columns, .cursor, url: api.url(), extra: "    resume: false"))
        api.failAt.withLock { $0 = 3 }
        #expect(try run(workspace, .columns).status == 69)
        #expect(!(try workspace.run("status", "items.yml").stdout.contains("stopped with")))
        api.failAt.withLock { $0 = nil }
        let start = api.server.requests.count
        #expect(try run(workspace, .columns, "--report", "out/report.json").status == 0)
        #expect(api.requests(from: start).compactMap(api.pageIndex) == Array(0..<6))
        #expect(try ResumeTests.source(workspace)["resumed_from"] as? Int == 0)
    }
}
