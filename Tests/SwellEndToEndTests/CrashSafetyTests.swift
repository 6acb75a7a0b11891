import Foundation
import SwellCSV
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Command line reference's crash safety: a run killed with SIGKILL mid-import leaves a store that opens, passes
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

/// Issue 5's kill test: 200,000 records from a loopback server, `swell run`
/// killed with SIGKILL at random moments during the fetch, during a writer
/// save and during the export, in one workspace, one kill after another.
/// After each kill: the store passes `PRAGMA integrity_check`, every stored
/// row is a whole record (no half-written one), and the export path holds
/// nothing or a complete gzip file. A last run then gives exactly the rows
/// and the export bytes of an uninterrupted run.
@Suite struct RandomKillTests {
    static let pages = 20
    static let perPage = 10_000

    static func title(_ id: Int) -> String { "record \(id), \"quoted\"" }

    /// Serves `pages` pages of `perPage` records, linked by `next`.
    static func server() throws -> LoopbackHTTPServer {
        let bodies: [String: [UInt8]] = Dictionary(uniqueKeysWithValues: (1...pages).map { page in
            var text = "{\"data\": ["
            for offset in 0..<perPage {
                let id = (page - 1) * perPage + offset + 1
                if offset > 0 { text += "," }
                text += "{\"id\": \(id), \"title\": \"record \(id), \\\"quoted\\\"\", \"score\": \(Double(id) / 4), \"updated\": \"2024-01-01T00:00:00Z\"}"
            }
            text += "], \"next\": \(page < pages ? "\"/p\(page + 1).json\"" : "null")}"
            return ("/p\(page).json", Array(text.utf8))
        })
        return try LoopbackHTTPServer { request in
            guard let body = bodies[request.path] else { return .json("{}", status: 404) }
            return LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")], body: body)
        }
    }

    static func pipeline(_ server: LoopbackHTTPServer) -> String {
        EndToEndTests.pipeline(url: server.baseURL + "/p1.json", sourceExtra: "    paginate: { next: next }")
            .replacingOccurrences(of: "out/items.csv", with: "out/items.csv.gz")
    }

    /// Every row of the store's Item table as text, in id order.
    static func rows(_ storePath: String) throws -> [String] {
        let connection = try SQLiteConnection(path: storePath, mode: .readWrite)
        return try connection.query("SELECT id, title, score, updated FROM Item ORDER BY id").map { row in
            row.map { "\($0)" }.joined(separator: "|")
        }
    }

    /// The rows that are not exactly the record their id was served as.
    static func halfWritten(_ storePath: String) throws -> [String] {
        let connection = try SQLiteConnection(path: storePath, mode: .readWrite)
        let expectedUpdated = StoreValue.real(1_704_067_200)
        return try connection.query("SELECT id, title, score, updated FROM Item").compactMap { row -> String? in
            guard case .integer(let id) = row[0] else { return "\(row)" }
            let whole = row[1] == .text(title(Int(id))) && row[2] == .real(Double(id) / 4) && row[3] == expectedUpdated
            return whole ? nil : "\(row)"
        }
    }

    /// A kill moment: after the `count`th stderr line containing `line`.
    struct KillPoint: CustomStringConvertible {
        var line: String
        var count: Int
        var description: String { "after '\(line)' #\(count)" }
    }

    @Test func killedAtRandomMomentsNothingIsLostOrHalfWritten() throws {
        let server = try Self.server()
        defer { server.stop() }
        let reference = try Workspace()
        try reference.write("items.yml", Self.pipeline(server))
        let clean = try reference.run("run", "items.yml")
        #expect(clean.status == 0, "\(clean.stderr)")
        let expectedExport = try Data(contentsOf: URL(fileURLWithPath: reference.path("out/items.csv.gz")))
        let expectedRows = try Self.rows(reference.path(".swell/items.sqlite"))
        #expect(expectedRows.count == Self.pages * Self.perPage)

        var generator = SystemRandomNumberGenerator()
        let points = [
            KillPoint(line: "page fetched", count: Int.random(in: 1...12, using: &generator)),
            KillPoint(line: "writer saving", count: Int.random(in: 1...6, using: &generator)),
            KillPoint(line: "export started", count: 1),
        ]
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(server))
        let store = workspace.path(".swell/items.sqlite")
        let export = workspace.path("out/items.csv.gz")
        for point in points {
            let running = try RunningSwell(["run", "items.yml", "--log-level", "debug"], in: workspace.url)
            let reached = running.waitForStderr(point.line, count: point.count)
            kill(running.process.processIdentifier, SIGKILL)
            running.finish()
            #expect(reached, "the run ended before \(point): \(running.stderr)")
            #expect(running.process.terminationReason == .uncaughtSignal, "killed \(point)")
            #expect(try SQLiteIntegrity.check(store) == "ok", "killed \(point)")
            let broken = try Self.halfWritten(store)
            #expect(broken.isEmpty, "killed \(point): \(broken.count) rows are not whole records, first \(broken.prefix(3))")
            if FileManager.default.fileExists(atPath: export) {
                // Only a complete file may be at the path: it must decompress whole.
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: export)))
                #expect((try? Gzip.decompress(bytes)) != nil, "killed \(point): a partial export is at the target path")
            }
        }
        let rerun = try workspace.run("run", "items.yml")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Self.rows(store) == expectedRows, "the store after kills at \(points) differs from an uninterrupted run's")
        #expect(try Data(contentsOf: URL(fileURLWithPath: export)) == expectedExport, "kills at \(points)")
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
