import Foundation
import SwellCSV
import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Payloads through the binary: a real nested one, NDJSON, a page that is not JSON, one over `max_bytes`.
@Suite struct PayloadFormatTests {
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
}
