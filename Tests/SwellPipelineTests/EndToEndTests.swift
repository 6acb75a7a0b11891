import Foundation
import SwellCSV
import SwellPipeline
import SwellTestSupport
import Testing

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
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// Adds one and returns the new value.
    func increment() -> Int { lock.withLock { value += 1; return value } }
}

/// More of the contract through the binary: formats, modes, commands, failures.
@Suite struct EndToEndMoreTests {
    @Test func aRealNestedPayloadSyncsAndWeirdRowsSurviveCSVAndBack() throws {
        let issues = try Data(contentsOf: Workspace.repositoryRoot.appendingPathComponent("fixtures/third-party/github-issues-page.json"))
        let server = try LoopbackHTTPServer { _ in LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")], body: [UInt8](issues)) }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("p.yml", """
        version: 1
        name: mixed
        entities:
          Issue:
            key: [id]
            attributes: { id: integer, number: integer, title: string, author: string?, labels: string?, created_at: date, locked: boolean }
          Row:
            key: [idx]
            attributes: { idx: integer, str: string? }
        sources:
          - { name: issues, entity: Issue, url: "\(server.baseURL)/issues", fields: { author: user.login } , on_error: skip, rejects: out/issues.rejects.ndjson }
          - { name: weird, entity: Row, url: fixtures/third-party/dlt-weird-rows.json }
        exports:
          - { name: issues, entity: Issue, path: out/issues.csv.gz, columns: [number, title, author, created_at, locked], sort: [number desc], gzip_level: 1 }
          - { name: weird, entity: Row, path: out/weird.csv, columns: [idx, str], header: false }
        """)
        let outcome = try workspace.run("run", "p.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let sources = try workspace.report()["sources"] as? [[String: Any]]
        // labels is an array in the payload: those issues are bad records (an array where a string is expected).
        let issuesSource = sources?.first { $0["name"] as? String == "issues" }
        #expect(issuesSource?["records"] as? Int == 100)
        let rows = (issuesSource?["inserted"] as? Int ?? 0) + (issuesSource?["rejected"] as? Int ?? 0)
        #expect(rows == 100)
        // dlt's weird rows: every string comes back exactly from the CSV.
        let weird = try JSONSerialization.jsonObject(with: Data(contentsOf: Workspace.repositoryRoot.appendingPathComponent("fixtures/third-party/dlt-weird-rows.json"))) as? [[String: Any]] ?? []
        let parsed = RFC4180.parse(try workspace.read("out/weird.csv"))
        #expect(parsed.count == weird.count)
        for (row, original) in zip(parsed, weird.sorted { ($0["idx"] as? Int ?? 0) < ($1["idx"] as? Int ?? 0) }) {
            #expect(row[0] == "\(original["idx"] as? Int ?? -1)")
            #expect(row[1] == (original["str"] as? String ?? ""))
        }
    }

    @Test func ndjsonSourcesReadALineARecordAndNameTheBadLine() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.ndjson", "{\"id\": 1, \"title\": \"a\"}\n\n{\"id\": 2, \"title\": \"b\"}\r\n")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.ndjson").replacingOccurrences(of: "records: data", with: "format: ndjson"))
        let outcome = try workspace.run("run", "items.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try workspace.read("out/items.csv") == "id,title,score,updated\n1,a,,\n2,b,,\n")
        try workspace.write("data/items.ndjson", "{\"id\": 1}\n{\"id\": 2,}\n")
        let bad = try workspace.run("run", "items.yml")
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("data/items.ndjson"))
        #expect(bad.stderr.contains("line 2"))
    }

    @Test func aPageThatIsNotJSONExits65WithItsURLAndPosition() throws {
        let server = try LoopbackHTTPServer { _ in .json("<html><body>Service error</body></html>") }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/items"))
        let outcome = try workspace.run("import", "items.yml")
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("\(server.baseURL)/items"))
        #expect(outcome.stderr.contains("line 1, column 1"))
    }

    @Test func aResponseOverMaxBytesFailsTheSourceWith69() throws {
        let server = try LoopbackHTTPServer { _ in .json(EndToEndTests.page(1...500)) }
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/items", sourceExtra: "    max_bytes: 1000"))
        let outcome = try workspace.run("import", "items.yml")
        #expect(outcome.status == 69)
        #expect(server.requests.count == 1)
    }

    @Test func appendRejectsKeysThatExistAlready() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", EndToEndTests.page(1...3))
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json", sourceExtra: "    mode: append\n    on_error: skip\n    rejects: out/rejects.ndjson"))
        #expect(try workspace.run("import", "items.yml").status == 0)
        try workspace.write("data/items.json", EndToEndTests.page(3...4))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["rejected"] as? Int == 1)
        #expect(source?["inserted"] as? Int == 1)
        #expect(try workspace.read("out/rejects.ndjson").contains("exists already"))
    }

    @Test func exportOptionsShapeTheFile() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", "{\"data\": [{\"id\": 2, \"title\": \"=SUM(A1)\", \"score\": 0.1, \"updated\": \"2024-05-01T06:30:00.500Z\"}, {\"id\": 1, \"title\": \"plain, \\\"quoted\\\"\", \"score\": -3, \"updated\": \"2024-05-01T06:30:00Z\"}]}")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json", extra: """
              - name: safe
                entity: Item
                path: out/safe.csv
                columns: [id, title, score, { name: day, value: updated, format: "dd/MM/yyyy" }]
                header: false
                escape_formulas: true
            """))
        #expect(try workspace.run("run", "items.yml").status == 0)
        #expect(try workspace.read("out/items.csv") == "id,title,score,updated\n1,\"plain, \"\"quoted\"\"\",-3,2024-05-01T06:30:00Z\n2,=SUM(A1),0.1,2024-05-01T06:30:00.500Z\n")
        #expect(try workspace.read("out/safe.csv") == "1,\"plain, \"\"quoted\"\"\",-3,01/05/2024\n2,'=SUM(A1),0.1,01/05/2024\n")
    }

    @Test func unwritableExportsExit73AndUnusableStoresExit74() throws {
        let workspace = try Workspace()
        try workspace.write("blocker", "a file where a folder should be")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "fixtures/surf-journal/page-0001.json").replacingOccurrences(of: "out/items.csv", with: "blocker/items.csv"))
        let unwritable = try workspace.run("run", "items.yml")
        #expect(unwritable.status == 73)
        #expect(unwritable.stderr.contains("blocker/items.csv"))
        try FileManager.default.createDirectory(atPath: workspace.path("folder.sqlite"), withIntermediateDirectories: true)
        let directory = try workspace.run("import", "items.yml", "--store", "folder.sqlite")
        #expect(directory.status == 74)
        try workspace.write("text.sqlite", String(repeating: "not a database ", count: 100))
        let notAStore = try workspace.run("import", "items.yml", "--store", "text.sqlite")
        #expect(notAStore.status == 74)
        #expect(try workspace.read("text.sqlite").hasPrefix("not a database"))
        let noStore = try workspace.run("export", "items.yml", "--store", "missing.sqlite")
        #expect(noStore.status == 74)
    }

    @Test func statusAndSeedWorkOnTheStore() throws {
        let workspace = try Workspace()
        let imported = try workspace.run("import", "pipelines/surf-journal.yml")
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try workspace.run("status", "pipelines/surf-journal.yml")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("JournalEntry: 20 rows"))
        #expect(status.stdout.contains("succeeded"))
        let seeded = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", ".swell/surf-journal.sqlite", "--store", "copy/seeded.sqlite")
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let copy = try workspace.run("status", "pipelines/surf-journal.yml", "--store", "copy/seeded.sqlite")
        #expect(copy.stdout.contains("JournalEntry: 20 rows"))
        let again = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", ".swell/surf-journal.sqlite", "--store", "copy/seeded.sqlite")
        #expect(again.status == 0)
        #expect(again.stdout.contains("nothing done"))
        let missing = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", "nope.sqlite", "--store", "other/s.sqlite")
        #expect(missing.status == 74)
        #expect(!FileManager.default.fileExists(atPath: workspace.path("other/s.sqlite")))
    }

    @Test func badArgumentsExit64() throws {
        let workspace = try Workspace()
        #expect(try workspace.run("run", "pipelines/surf-journal.yml", "--workers", "0").status == 64)
        #expect(try workspace.run("run", "pipelines/surf-journal.yml", "--only", "nope").status == 64)
        #expect(try workspace.run("frobnicate").status == 64)
        #expect(try workspace.run("run", "missing.yml").status == 64)
    }
}

/// A strict RFC 4180 reader for checking exports.
enum RFC4180 {
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text.unicodeScalars)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" { field.unicodeScalars.append("\""); characters.removeFirst() } else { quoted = false }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field); field = ""
            } else if c == "\n" {
                row.append(field); rows.append(row); row = []; field = ""
            } else {
                field.unicodeScalars.append(c)
            }
        }
        return rows
    }
}

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
