import Foundation
import SwellCSV
import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The `swell` binary against files and a loopback HTTP server started by each test: store rows, CSV bytes, report fields, exit codes.
@Suite struct EndToEndTests {
    static let itemsEntity = """
    entities:
      Item:
        key: [id]
        attributes:
          id: integer
          title: string?
          score: double?
          updated: date?
    """

    /// A pipeline with one source and one plain-CSV export of Item.
    static func pipeline(url: String, extra: String = "", sourceExtra: String = "") -> String {
        """
        version: 1
        name: items
        store: .swell/items.sqlite
        \(itemsEntity)
        sources:
          - name: items
            entity: Item
            url: "\(url)"
            records: data
            retries: 2
        \(sourceExtra)
        exports:
          - name: items-csv
            entity: Item
            path: out/items.csv
            columns: [id, title, score, updated]
        \(extra)
        """
    }

    static func page(_ ids: ClosedRange<Int>, next: String? = nil, extra: String = "") -> String {
        let records = ids.map { "{\"id\": \($0), \"title\": \"item \($0)\", \"score\": \(Double($0) / 2)}" }.joined(separator: ",")
        let nextText = next.map { "\"\($0)\"" } ?? "null"
        return "{\"data\": [\(records)], \"next\": \(nextText)\(extra)}"
    }

    private func csvLines(_ workspace: Workspace, _ path: String = "out/items.csv") throws -> [String] {
        try workspace.read(path).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func theBundledPipelineRunsAndWritesAValidGzippedCSV() throws {
        let workspace = try Workspace()
        let outcome = try workspace.run("run", "pipelines/surf-journal.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let gz = try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/surf-journal.csv.gz")))
        let csv = String(decoding: try Gzip.decompress([UInt8](gz)), as: UTF8.self)
        let lines = csv.split(separator: "\n")
        #expect(lines.first == "id,date,Day,height,period,wind,location,rating,Spot")
        #expect(lines.count == 21)
        #expect(csv.hasSuffix("\n"))
        let report = try workspace.report()
        #expect(report["status"] as? String == "succeeded")
        let sources = report["sources"] as? [[String: Any]]
        #expect(sources?.first?["records"] as? Int == 20)
        #expect(sources?.first?["pages"] as? Int == 2)
        #expect(sources?.first?["inserted"] as? Int == 20)
        let exports = report["exports"] as? [[String: Any]]
        #expect(exports?.first?["rows"] as? Int == 20)
        #expect((exports?.first?["sha256"] as? String)?.count == 64)
        #expect(outcome.stdout.split(separator: "\n").count <= 4)
        // The same store and pipeline give byte-identical exports.
        let again = try workspace.run("export", "pipelines/surf-journal.yml")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/surf-journal.csv.gz"))) == gz)
        // A second run finds every record unchanged.
        let rerun = try workspace.run("import", "pipelines/surf-journal.yml", "--report", "out/report2.json")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let second = (try workspace.report("out/report2.json")["sources"] as? [[String: Any]])?.first
        #expect(second?["unchanged"] as? Int == 20)
        #expect(second?["inserted"] as? Int == 0)
    }

    @Test func nextLinksAreFollowedRelativeToThePage() throws {
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/api/p1": .json(EndToEndTests.page(1...3, next: "p2"))
            case "/api/p2": .json(EndToEndTests.page(4...5))
            default: .json("{}", status: 404)
            }
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/api/p1", sourceExtra: "    paginate: { next: next }"))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try csvLines(workspace).count == 7)
        #expect(try csvLines(workspace)[1] == "1,item 1,0.5,")
        #expect(server.requests.map(\.path) == ["/api/p1", "/api/p2"])
    }

    @Test func linkHeaderPageParameterAndCursorPaginationAreFollowed() throws {
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/link": .json(EndToEndTests.page(1...2), headers: [("Link", "</link2>; rel=\"next\"")])
            case "/link2": .json(EndToEndTests.page(3...3))
            case "/paged?page=1": .json(EndToEndTests.page(1...2))
            case "/paged?page=2": .json(EndToEndTests.page(3...4))
            case "/paged?page=3": .json("{\"data\": []}")
            case "/cursor": .json(EndToEndTests.page(1...1, extra: ", \"meta\": {\"next_cursor\": \"abc\"}"))
            case "/cursor?cursor=abc": .json(EndToEndTests.page(2...2, extra: ", \"meta\": {\"next_cursor\": null}"))
            default: .json("{}", status: 404)
            }
        }
        defer { server.stop() }
        for (path, paginate, rows) in [("link", "{ link_header: true }", 3), ("paged", "{ param: page }", 4),
                                       ("cursor", "{ cursor: meta.next_cursor, param: cursor }", 2)] {
            let workspace = try Workspace()
            try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/\(path)", sourceExtra: "    paginate: \(paginate)"))
            let outcome = try workspace.run("run", "items.yml")
            #expect(outcome.status == 0, "\(path): \(outcome.stderr)")
            #expect(try csvLines(workspace).count == rows + 2, "\(path)")
        }
    }

    @Test func serverErrorsAreRetriedThenTheRunSucceeds() throws {
        let attempts = Counter()
        let server = try LoopbackHTTPServer { _ in
            attempts.increment() == 1 ? .json("oops", status: 500) : .json(EndToEndTests.page(1...2))
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/items"))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["retries"] as? Int == 1)
        #expect(source?["records"] as? Int == 2)
    }

    @Test func aSourceThatStaysDownExits69AndKeepsEarlierPages() throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/p1" ? .json(EndToEndTests.page(1...3, next: "p2")) : .json("down", status: 503, headers: [("Retry-After", "0")])
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/p1", sourceExtra: "    paginate: { next: next }"))
        let outcome = try workspace.run("import", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains("/p2"))
        #expect(outcome.stderr.contains("503"))
        let report = try workspace.report()
        #expect(report["status"] as? String == "failed")
        #expect((report["error"] as? String)?.contains("503") == true)
        #expect(server.requests.filter { $0.path == "/p2" }.count == 3)
        let export = try workspace.run("export", "items.yml")
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try csvLines(workspace).count == 5)
    }

    @Test func aNotModifiedPageIsCountedAndKeepsTheRows() throws {
        let server = try LoopbackHTTPServer { request in
            if request.headers["if-none-match"] == "\"v1\"" { return LoopbackHTTPServer.Response(status: 304, headers: [("ETag", "\"v1\"")], body: []) }
            return .json(EndToEndTests.page(1...2), headers: [("ETag", "\"v1\"")])
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/items"))
        #expect(try workspace.run("run", "items.yml").status == 0)
        let second = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(second.status == 0, "\(second.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["not_modified"] as? Int == 1)
        #expect(try csvLines(workspace).count == 4)
    }

    @Test func aBadRecordFailsWith65NamingSourcePageIndexAndAttribute() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", "{\"data\": [{\"id\": 1, \"score\": 1.5}, {\"id\": 2, \"score\": \"lots\"}]}")
        try workspace.write("items.yml", Self.pipeline(url: "data/items.json"))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 65)
        for fact in ["items", "data/items.json", "index 1", "score", "\"lots\""] {
            #expect(outcome.stderr.contains(fact), "missing \(fact) in \(outcome.stderr)")
        }
        #expect(try workspace.report()["status"] as? String == "failed")
        // Which Swell wrote it, also for a failed run; the same as `swell --version`.
        let version = try workspace.run("--version").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version == SwellVersion.current)
        #expect(try workspace.report()["swell_version"] as? String == version)
    }

    @Test func badRecordsAreSkippedIntoTheRejectsFile() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", "{\"data\": [{\"id\": 1}, {\"id\": \"x\"}, {\"title\": \"no key\"}, {\"id\": 4, \"updated\": \"yesterday\"}]}")
        try workspace.write("items.yml", Self.pipeline(url: "data/items.json", sourceExtra: "    on_error: skip\n    rejects: out/rejects.ndjson"))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = try workspace.read("out/rejects.ndjson").split(separator: "\n")
        #expect(lines.count == 3)
        // Workers write rejects as they reach them: find the line of record 1.
        let parsed = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(Set(parsed.compactMap { $0?["index"] as? Int }) == [1, 2, 3])
        let first = parsed.first { $0?["index"] as? Int == 1 } ?? nil
        #expect(first?["source"] as? String == "items")
        #expect((first?["error"] as? String)?.hasPrefix("id:") == true)
        #expect((first?["record"] as? [String: Any])?["id"] as? String == "x")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["rejected"] as? Int == 3)
        #expect(try csvLines(workspace).count == 3)
    }

    @Test func secretsFromTheEnvironmentNeverAppear() throws {
        let token = "tok-9f8e7d6c5b4a"
        let server = try LoopbackHTTPServer { request in
            guard request.headers["authorization"] == "Bearer \(token)" else { return .json("{}", status: 401) }
            // One bad record (its rejects line names the page URL, token and all).
            return request.path.hasPrefix("/items") ? .json("{\"data\": [{\"id\": 1}, {\"id\": \"one\"}], \"next\": \"missing\"}") : .json("{}", status: 404)
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/items?key=${API_KEY}", sourceExtra: """
                headers:
                  Authorization: Bearer ${API_TOKEN}
                paginate: { next: next }
                on_error: skip
                rejects: out/rejects.ndjson
            """))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json", "--log-level", "trace",
                                        environment: ["API_TOKEN": token, "API_KEY": "querysecret123"])
        #expect(outcome.status == 69)
        let rejects = try workspace.read("out/rejects.ndjson")
        #expect(rejects.contains("/items?key=***"), "\(rejects)")
        let everything = outcome.stdout + outcome.stderr + (try workspace.read("out/report.json")) + rejects
        #expect(!everything.contains(token))
        #expect(!everything.contains("querysecret123"))
        #expect(everything.contains("***"))
    }

    @Test func aSecondWritingRunExits75NamingTheHolder() throws {
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "fixtures/surf-journal/page-0001.json"))
        try FileManager.default.createDirectory(atPath: workspace.path(".swell"), withIntermediateDirectories: true)
        let descriptor = open(workspace.path(".swell/items.sqlite.lock"), O_RDWR | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        _ = "\(getpid())\n".withCString { write(descriptor, $0, strlen($0)) }
        let outcome = try workspace.run("import", "items.yml")
        #expect(outcome.status == 75)
        #expect(outcome.stderr.contains("\(getpid())"))
        flock(descriptor, LOCK_UN)
        let after = try workspace.run("validate", "items.yml")
        #expect(after.status == 0)
    }

    @Test func validateNamesFileLineAndColumnAndTouchesNothing() throws {
        let workspace = try Workspace()
        try workspace.write("bad.yml", "version: 1\nname: items\n\(Self.itemsEntity)\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id, nope] }\n")
        let outcome = try workspace.run("validate", "bad.yml")
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("bad.yml:12:"))
        #expect(outcome.stderr.contains("nope"))
        #expect(!FileManager.default.fileExists(atPath: workspace.path(".swell")))
        let good = try workspace.run("validate", "pipelines/surf-journal.yml")
        #expect(good.status == 0, "\(good.stderr)")
        // Nor the network: a valid pipeline naming a live server sends it nothing.
        let server = try LoopbackHTTPServer { _ in .json(EndToEndTests.page(1...1)) }
        defer { server.stop() }
        try workspace.write("remote.yml", Self.pipeline(url: "\(server.baseURL)/items"))
        #expect(try workspace.run("validate", "remote.yml").status == 0)
        #expect(server.requests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: workspace.path(".swell")))
    }

    @Test func replaceDeletesTheRowsANewSnapshotLacks() throws {
        let workspace = try Workspace()
        let pipeline = """
        version: 1
        name: users
        entities:
          User:
            key: [id]
            attributes: { id: integer, name: string, email: string?, updated_at: date? }
        sources:
          - { name: users, entity: User, url: data/users.json, mode: replace }
        exports:
          - { name: users-csv, entity: User, path: out/users.csv, columns: [id, name] }
        """
        try workspace.write("users.yml", pipeline)
        try FileManager.default.createDirectory(atPath: workspace.path("data"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: workspace.path("fixtures/sync/users_a.json"), toPath: workspace.path("data/users.json"))
        #expect(try workspace.run("run", "users.yml").status == 0)
        #expect(try csvLines(workspace, "out/users.csv").count == 10)
        try FileManager.default.removeItem(atPath: workspace.path("data/users.json"))
        try FileManager.default.copyItem(atPath: workspace.path("fixtures/sync/users_b.json"), toPath: workspace.path("data/users.json"))
        let outcome = try workspace.run("run", "users.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try csvLines(workspace, "out/users.csv").count == 8)
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["deleted"] as? Int == 6)
    }

    @Test func incrementalSyncSendsTheLargestCursorSeen() throws {
        let server = try LoopbackHTTPServer { request in
            request.path.contains("since=") ? .json("{\"data\": []}") :
                .json("{\"data\": [{\"id\": 1, \"updated\": \"2024-05-01T06:30:00Z\"}, {\"id\": 2, \"updated\": \"2024-05-02T07:00:00.250Z\"}]}")
        }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(url: "\(server.baseURL)/items", sourceExtra: "    incremental: { cursor: updated, param: since }"))
        #expect(try workspace.run("run", "items.yml").status == 0)
        #expect(try workspace.run("run", "items.yml").status == 0)
        let paths = server.requests.map(\.path)
        #expect(paths.first == "/items")
        #expect(paths.last == "/items?since=2024-05-02T07%3A00%3A00.250Z" || paths.last == "/items?since=2024-05-02T07:00:00.250Z")
    }
}

/// A thread-safe counter for server handlers.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// Adds one and returns the new value.
    func increment() -> Int { lock.withLock { value += 1; return value } }
}
