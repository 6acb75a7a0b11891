import Dispatch
import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Command line reference's concurrency rules beyond exit 75: stale locks, exports during a writing run.
@Suite struct ConcurrentRunTests {
    @Test func aLockFileLeftByAKilledRunIsTakenOver() throws {
        let workspace = try Workspace()
        // A killed run leaves its lock file (with its pid) but no lock: the kernel released it.
        try workspace.write(".swell/surf-journal.sqlite.lock", "999999\n")
        let outcome = try workspace.run("import", "pipelines/surf-journal.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
    }

    @Test func anExportDuringAWritingRunReadsACommittedSnapshot() throws {
        let release = DispatchSemaphore(value: 0)
        let server = try LoopbackHTTPServer { request in
            if request.path == "/p2" {
                // Hold the import mid-run until the test has exported (released at the latest after
                // 30 s, so a failing test still ends; the export's exact rows then fail it).
                _ = release.wait(timeout: .now() + 30)
                return .json(EndToEndTests.page(4...5))
            }
            return .json(EndToEndTests.page(1...3, next: "p2"))
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/p1", sourceExtra: "    paginate: { next: next }\n    timeout: 60"))
        let importer = try RunningSwell(["import", "items.yml", "--log-level", "debug", "--batch-size", "1"], in: workspace.url)
        #expect(importer.waitForStderr("page fetched"))
        // Page 1's three records reach the disk while the import waits for page 2.
        let committed = try eventually(within: 30) { try workspace.run("status", "items.yml").stdout.contains("entity Item: 3 rows") }
        #expect(committed, "page 1 never reached the disk")
        // The import holds the lock and waits for page 2: an export still runs, on exactly the committed state.
        let export = try workspace.run("export", "items.yml")
        #expect(export.status == 0, "\(export.stderr)")
        let rows = try workspace.read("out/items.csv").split(separator: "\n").map(String.init)
        #expect(rows.count == 4, "\(rows)")
        #expect(rows.dropFirst().map { $0.split(separator: ",").first.map(String.init) } == ["1", "2", "3"])
        let writer = try workspace.run("import", "items.yml")
        #expect(writer.status == 75)
        release.signal()
        importer.finish()
        #expect(importer.process.terminationStatus == 0)
        #expect(try workspace.run("export", "items.yml").status == 0)
        #expect(try workspace.read("out/items.csv").split(separator: "\n").count == 6)
    }
}
