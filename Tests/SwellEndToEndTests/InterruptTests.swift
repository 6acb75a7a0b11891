import Foundation
import SwellLocks
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// SIGTERM (as a scheduler or CI sends it) in the middle of a run: the run stops fetching,
/// keeps the pages it had saved, writes no export (no file in place, no temporary left
/// behind), reports what happened and exits 1 (75 means a held store only); running again finishes the job.
@Suite struct InterruptTests {
    @Test func sigtermMidRunKeepsWhatWasSavedAndWritesNoExport() throws {
        let page1 = EndToEndTests.page(1...3, next: "p2")
        let page2 = Array(EndToEndTests.page(4...6).utf8)
        let stalling = LockedValue(true)
        let server = try LoopbackHTTPServer { request in
            if request.path == "/p1" { return .json(page1) }
            // Page 2 never answers while the run is to be interrupted.
            return stalling.withLock({ $0 }) ? LoopbackHTTPServer.Response(status: 200, body: page2, fault: .stall)
                : LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")], body: page2)
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/p1", sourceExtra: "    paginate: { next: next }\n    timeout: 5\n"))
        let process = Process()
        process.executableURL = SwellProcess.executable
        process.arguments = ["run", "items.yml", "--report", "out/report.json", "--progress", "never"]
        process.currentDirectoryURL = workspace.url
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Page 1 is in hand once page 2 is asked for.
        let reached = eventually(within: 30) { server.requests.contains { $0.path == "/p2" } }
        #expect(reached, "the run never asked for page 2")
        process.terminate()   // SIGTERM
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 1, "\(process.terminationStatus) \(stderr)")
        #expect(stderr.contains("interrupted by SIGTERM"), "\(stderr)")
        // Only the second attempt would come after a retry: a cancelled run does not retry.
        #expect(server.requests.filter { $0.path == "/p2" }.count == 1)
        let report = try workspace.report()
        #expect(report["status"] as? String == "failed" && (report["error"] as? String)?.contains("interrupted") == true, "\(report)")
        // No export, and nothing half-written beside where it would go.
        let out = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out"))
        #expect(out == ["report.json"], "\(out)")
        // Page 1 was saved; running again finishes the job.
        #expect(try workspace.run("export", "items.yml").status == 0)
        #expect(try workspace.read("out/items.csv").split(separator: "\n").count == 4)
        stalling.withLock { $0 = false }
        let before = server.requests.count
        #expect(try workspace.run("run", "items.yml", "--report", "out/rerun.json").status == 0)
        #expect(try workspace.read("out/items.csv").split(separator: "\n").count == 7)
        // A source interrupted by a signal resumes (README, "Resuming a stopped source"): page 1
        // is not fetched again.
        #expect(server.requests.dropFirst(before).map(\.path) == ["/p2"])
        let sources = try workspace.report("out/rerun.json")["sources"] as? [[String: Any]] ?? []
        #expect(sources.first?["resumed_from"] as? Int == 1, "\(sources)")
    }
}

