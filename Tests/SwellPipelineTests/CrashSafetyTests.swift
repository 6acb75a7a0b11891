import Foundation
@testable import SwellStore
import Testing

/// cli.md's crash safety: a run killed with SIGKILL mid-import leaves a store that opens, passes
/// `PRAGMA integrity_check`, and a re-run gives exactly the store and exports an uninterrupted run gives.
@Suite struct CrashSafetyTests {
    /// Writes `pages` pages of `perPage` records each, linked by `next`.
    private func writePages(_ workspace: Workspace, pages: Int, perPage: Int) throws {
        for page in 1...pages {
            let records = (0..<perPage).map { offset -> String in
                let id = (page - 1) * perPage + offset + 1
                return "{\"id\": \(id), \"title\": \"record \(id), \\\"quoted\\\"\", \"score\": \(Double(id) / 4), \"updated\": \"2024-01-01T00:00:00Z\"}"
            }
            let next = page < pages ? "\"p\(page + 1).json\"" : "null"
            try workspace.write("data/p\(page).json", "{\"data\": [\(records.joined(separator: ","))], \"next\": \(next)}")
        }
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/p1.json", sourceExtra: "    paginate: { next: next }")
            .replacingOccurrences(of: "out/items.csv", with: "out/items.csv.gz"))
    }

    @Test func aRunKilledMidImportLeavesAConsistentStoreAndARerunCompletesIt() throws {
        let reference = try Workspace()
        try writePages(reference, pages: 12, perPage: 2_000)
        let clean = try reference.run("run", "items.yml", "--batch-size", "500")
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = try Data(contentsOf: URL(fileURLWithPath: reference.path("out/items.csv.gz")))

        let workspace = try Workspace()
        try writePages(workspace, pages: 12, perPage: 2_000)
        let running = try RunningSwell(["import", "items.yml", "--batch-size", "500", "--log-level", "debug"], in: workspace.url)
        // Kill it once it has fetched a few pages (its saves are under way by then).
        running.waitForStderr("page fetched", count: 4)
        kill(running.process.processIdentifier, SIGKILL)
        running.process.waitUntilExit()
        #expect(running.process.terminationReason == .uncaughtSignal)

        let connection = try SQLiteIntegrity.check(workspace.path(".swell/items.sqlite"))
        #expect(connection == "ok")
        #expect(!FileManager.default.fileExists(atPath: workspace.path("out/items.csv.gz")))
        let rerun = try workspace.run("run", "items.yml", "--batch-size", "500")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/items.csv.gz"))) == expected)
    }
}

/// `PRAGMA integrity_check` on a store file, through SwellStore's own connection.
enum SQLiteIntegrity {
    static func check(_ path: String) throws -> String {
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        guard case .text(let result)? = try connection.query("PRAGMA integrity_check").first?.first else { return "no answer" }
        return result
    }
}
