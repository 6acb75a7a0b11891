import Foundation
import SwellCSV
import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The flags of run, import and export.
@Suite struct CommandFlagTests {
    @Test func waitQueuesBehindTheRunThatHoldsTheStore() throws {
        let workspace = try Workspace()
        try FileManager.default.createDirectory(atPath: workspace.path(".swell"), withIntermediateDirectories: true)
        let descriptor = open(workspace.path(".swell/surf-journal.sqlite.lock"), O_RDWR | O_CREAT, 0o644)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let waiting = try RunningSwell(["import", "pipelines/surf-journal.yml", "--wait"], in: workspace.url)
        // Read stderr until swell says it waits; only then let it go.
        #expect(waiting.waitForStderr("waiting for the run that holds the store"))
        #expect(waiting.process.isRunning)
        flock(descriptor, LOCK_UN)
        waiting.finish()
        #expect(waiting.process.terminationStatus == 0)
    }

    @Test func onlyBatchSizeWorkersAndProgressDoWhatTheySay() throws {
        let workspace = try Workspace()
        let outcome = try workspace.run("import", "pipelines/surf-journal.yml", "--batch-size", "3", "--workers", "1",
                                        "--progress", "always", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("20 records"))
        let report = try workspace.report()
        #expect((report["sources"] as? [[String: Any]])?.first?["inserted"] as? Int == 20)
        #expect((report["started_at"] as? String)?.hasSuffix("Z") == true)
        #expect(((report["sources"] as? [[String: Any]])?.first?["bytes"] as? Int ?? 0) > 4000)
        let only = try workspace.run("export", "pipelines/surf-journal.yml", "--only", "good-days", "--report", "out/only.json")
        #expect(only.status == 0, "\(only.stderr)")
        let exports = try workspace.report("out/only.json")["exports"] as? [[String: Any]]
        #expect(exports?.map { $0["name"] as? String } == ["good-days"])
        #expect(exports?.first?["rows"] as? Int == 7)
        #expect(!FileManager.default.fileExists(atPath: workspace.path("out/surf-journal.csv.gz")))
        let quiet = try workspace.run("import", "pipelines/surf-journal.yml", "--progress", "never")
        #expect(!quiet.stderr.contains("records ("))
    }

    @Test func requestsNameSwellAndItsVersion() throws {
        let agents = LockedAgents()
        let server = try LoopbackHTTPServer { request in
            agents.append(request.headers["user-agent"] ?? "none")
            return .json(EndToEndTests.page(1...2))
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/p1"))
        #expect(try workspace.run("import", "items.yml").status == 0)
        #expect(agents.all == ["swell/\(SwellVersion.current)"])
    }

    @Test func aChangedRecordCountsAsUpdated() throws {
        let workspace = try Workspace()
        #expect(try workspace.run("import", "pipelines/surf-journal.yml").status == 0)
        let page = try workspace.read("fixtures/surf-journal/page-0002.json")
        try workspace.write("fixtures/surf-journal/page-0002.json", page.replacingOccurrences(of: "\"wind\": \"calm\"", with: "\"wind\": \"storm\""))
        let outcome = try workspace.run("import", "pipelines/surf-journal.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        // Page 2 has exactly two "calm" records: those two changed, the other 18 did not.
        #expect(source?["updated"] as? Int == 2)
        #expect(source?["unchanged"] as? Int == 18)
        #expect(source?["inserted"] as? Int == 0)
    }
}

/// User agents a test server saw, from its connection threads.
private final class LockedAgents: @unchecked Sendable {
    /// `@unchecked Sendable`: `agents` is only touched under `lock`.
    private let lock = NSLock()
    private var agents: [String] = []
    func append(_ agent: String) { lock.withLock { agents.append(agent) } }
    var all: [String] { lock.withLock { agents } }
}
