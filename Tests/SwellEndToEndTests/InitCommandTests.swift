import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `swell init` end to end: for every sample page the repository and the shared
/// third-party fixtures hold, the written file validates and `swell run` imports the
/// sample (served by a real HTTP server on 127.0.0.1) and exports a CSV; over HTTP,
/// headers keep `${VAR}` and the secret is never written or printed; errors exit per Command line reference.
@Suite struct InitCommandTests {
    /// A sample page: where it is (relative to the workspace), the records `swell run`
    /// receives from it (following its pagination), the rows the CSV export gets.
    struct Sample: Sendable, CustomStringConvertible {
        var path: String
        var records: Int
        var rows: Int
        var description: String { path }
    }

    /// Every JSON page under `fixtures/`, and the shared fixtures' pages (`shared/` is
    /// `../shared/fixtures`), the pages that are one object (one record, version 3) included.
    /// Not here: the files that are not strict JSON (trailing commas: Groot's `cards.json`,
    /// `cards_update.json`, Sync's `users_c.json`, tested below).
    static let samples: [Sample] = [
        Sample(path: "fixtures/orders/page-0001.json", records: 10, rows: 10),
        Sample(path: "fixtures/surf-journal/page-0001.json", records: 20, rows: 20),  // next: page-0002.json
        Sample(path: "fixtures/surf-journal/page-0002.json", records: 10, rows: 10),
        Sample(path: "fixtures/surf-journal/records.json", records: 20, rows: 20),
        Sample(path: "fixtures/sync/users_a.json", records: 8, rows: 8),
        Sample(path: "fixtures/sync/users_b.json", records: 6, rows: 6),
        Sample(path: "fixtures/third-party/github-issues-page.json", records: 100, rows: 100),
        Sample(path: "fixtures/third-party/dlt-weird-rows.json", records: 5, rows: 5),
        Sample(path: "shared/dlt/tests/normalize/cases/github.issues.load_page_5_duck.json", records: 100, rows: 100),
        Sample(path: "shared/dlt/tests/normalize/cases/event_user.event_user.user_load.json", records: 3, rows: 3),
        Sample(path: "shared/dlt/tests/normalize/cases/event_user.event_user.user_load_extra_conflict.json", records: 3, rows: 3),
        Sample(path: "shared/dlt/tests/common/cases/simple_row.json", records: 2, rows: 2),
        Sample(path: "shared/dlt/tests/common/cases/weird_rows.json", records: 5, rows: 5),
        Sample(path: "shared/Sync/Tests/Sync/JSONs/users_a.json", records: 8, rows: 8),
        Sample(path: "shared/Sync/Tests/Sync/JSONs/users_b.json", records: 6, rows: 6),
        Sample(path: "shared/Sync/Tests/Sync/JSONs/users_notes.json", records: 4, rows: 4),
        Sample(path: "shared/Groot/GrootTests/JSON/characters.json", records: 2, rows: 2),
        Sample(path: "shared/Groot/GrootTests/JSON/characters_update.json", records: 3, rows: 3),
        Sample(path: "shared/Groot/GrootTests/JSON/container.json", records: 2, rows: 2),
        Sample(path: "fixtures/third-party/magicalrecord-single-entity.json", records: 1, rows: 1),
        Sample(path: "shared/MagicalRecord/Tests/Fixtures/SingleEntityWithNoRelationships.json", records: 1, rows: 1),
        // One object holding only a nested object: the key is read from the nested object's id.
        Sample(path: "shared/MagicalRecord/Tests/Fixtures/SingleEntityRelatedToMappedEntityUsingDefaults.json", records: 1, rows: 1),
        Sample(path: "shared/MagicalRecord/Tests/Fixtures/SingleEntityRelatedToMappedEntityWithNestedMappedAttributes.json", records: 1, rows: 1),
        Sample(path: "shared/MagicalRecord/Tests/Fixtures/SingleEntityRelatedToMappedEntityUsingMappedPrimaryKey.json", records: 1, rows: 1),
    ]

    static let sharedFixtures = Workspace.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    /// A workspace with the shared fixtures copied in under `shared/`.
    private func workspace() throws -> Workspace {
        let workspace = try Workspace()
        try FileManager.default.copyItem(at: Self.sharedFixtures, to: workspace.url.appendingPathComponent("shared"))
        return workspace
    }

    /// Serves the workspace's files by path (`/fixtures/…`), as a static API would.
    private func fileServer(_ workspace: Workspace) throws -> LoopbackHTTPServer {
        let root = workspace.url
        return try LoopbackHTTPServer { request in
            let path = String(request.path.prefix { $0 != "?" })
            guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path) else {
                return .json(#"{"error": "not found"}"#, status: 404)
            }
            return LoopbackHTTPServer.Response(headers: [("Content-Type", "application/json")], body: Array(data))
        }
    }

    @Test(arguments: samples)
    func initFromSampleValidatesAndRuns(sample: Sample) throws {
        let workspace = try workspace()
        let written = try workspace.run("init", "--from", sample.path, "--name", "sample", "--output", "pipelines/sample.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let validated = try workspace.run("validate", "pipelines/sample.yml")
        #expect(validated.status == 0, "\(validated.stderr)")

        let server = try fileServer(workspace)
        defer { server.stop() }
        let text = try workspace.read("pipelines/sample.yml")
        #expect(text.contains("    url: \(sample.path)\n"))
        try workspace.write("pipelines/sample.yml",
                            text.replacingOccurrences(of: "    url: \(sample.path)\n", with: "    url: \"\(server.baseURL)/\(sample.path)\"\n"))
        let run = try workspace.run("run", "pipelines/sample.yml", "--report", "out/report.json")
        #expect(run.status == 0, "\(run.stderr)")
        let sources = try workspace.report()["sources"] as? [[String: Any]] ?? []
        #expect(sources.first?["records"] as? Int == sample.records)
        #expect(sources.first?["rejected"] as? Int == 0)
        let csv = try workspace.read("out/sample.csv")
        #expect(csv.split(separator: "\n", omittingEmptySubsequences: false).count >= sample.rows + 1)
        let exports = try workspace.report()["exports"] as? [[String: Any]] ?? []
        #expect(exports.first?["rows"] as? Int == sample.rows)
    }

    @Test(arguments: ["shared/Groot/GrootTests/JSON/cards.json", "shared/Groot/GrootTests/JSON/cards_update.json",
                      "shared/Sync/Tests/Sync/JSONs/users_c.json"])
    func initRefusesASampleThatIsNotStrictJSON(path: String) throws {
        let workspace = try workspace()
        let outcome = try workspace.run("init", "--from", path)
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains(path) && outcome.stderr.contains("line ") && outcome.stderr.contains("column "))
        #expect(outcome.stdout.isEmpty)
    }

    /// The two shared fixtures with nothing to infer from: an empty array, an empty object.
    @Test(arguments: [("shared/Sync/Tests/DataFilter/users3.json", "the array is empty"),
                      ("shared/MagicalRecord/Tests/Fixtures/SampleJSONDataForImport.json", "the page is an empty object")])
    func initRefusesASampleWithNothingToInferFrom(path: String, reason: String) throws {
        let workspace = try workspace()
        let outcome = try workspace.run("init", "--from", path)
        #expect(outcome.status == 65 && outcome.stderr.contains(path) && outcome.stderr.contains(reason), "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aPageThatIsOneObjectIsOneRecordInVersion3Only() throws {
        let workspace = try workspace()
        let path = "fixtures/third-party/magicalrecord-single-entity.json"
        let outcome = try workspace.run("init", "--from", path, "--name", "single", "--output", "pipelines/single.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let text = try workspace.read("pipelines/single.yml")
        #expect(text.contains("version: 3\n") && text.contains("that object is the one record"), "\(text)")
        // The same file at version 2 refuses the page, as versions 1 and 2 always did.
        try workspace.write("pipelines/single2.yml", text.replacingOccurrences(of: "version: 3\n", with: "version: 2\n"))
        let refused = try workspace.run("run", "pipelines/single2.yml")
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("not an array of records"), "\(refused.stderr)")
    }

    @Test func initNamesAMissingRecordsPath() throws {
        let workspace = try workspace()
        let outcome = try workspace.run("init", "--from", "fixtures/orders/page-0001.json", "--records", "data.items")
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("no array of records at data.items in fixtures/orders/page-0001.json"))
    }

    @Test func initOverHTTPSendsTheHeaderAndNeverWritesTheToken() throws {
        let workspace = try workspace()
        let token = "s3cr3t-token-value"
        let page = try workspace.read("fixtures/sync/users_a.json")
        let server = try LoopbackHTTPServer { request in
            guard request.headers["authorization"] == "Bearer \(token)" else { return .json(#"{"error": "unauthorized"}"#, status: 401) }
            return .json(page, headers: [("Link", "<\(request.path)?page=2>; rel=\"next\"")])
        }
        defer { server.stop() }
        let url = "\(server.baseURL)/page1"
        let outcome = try workspace.run(["init", url, "--header", "Authorization: Bearer ${TOKEN}", "--output", "pipelines/users.yml"],
                                        environment: ["TOKEN": token])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let text = try workspace.read("pipelines/users.yml")
        #expect(text.contains("Authorization: \"Bearer ${TOKEN}\""))
        #expect(text.contains("paginate: { link_header: true }  # the response has a Link header"))
        #expect(text.contains("name: page1"))
        for printed in [text, outcome.stdout, outcome.stderr] { #expect(!printed.contains(token)) }
        #expect(server.requests.count == 1)

        let unauthorized = try workspace.run(["init", url, "--header", "Authorization: Bearer ${TOKEN}"], environment: ["TOKEN": "wrong-token"])
        #expect(unauthorized.status == 69)
        #expect(unauthorized.stderr.contains("401"))
        #expect(!unauthorized.stderr.contains("wrong-token"))
    }

    @Test func initExitCodesForBadArgumentsAndUnreachableSources() throws {
        let workspace = try workspace()
        #expect(try workspace.run("init").status == 64)
        #expect(try workspace.run("init", "http://127.0.0.1:1/x", "--from", "fixtures/sync/users_a.json").status == 64)
        #expect(try workspace.run("init", "--from", "fixtures/sync/users_a.json", "--header", "no colon").status == 64)
        #expect(try workspace.run("init", "--from", "fixtures/sync/users_a.json", "--name", "Bad Name").status == 64)
        // A URL that cannot be fetched as typed is the user's to mend (64), not an unreachable source (69).
        for (bad, words) in [("htp://bad url", "unsupported scheme htp"), ("http://bad url", "no blanks"), ("http:///items", "host")] {
            let outcome = try workspace.run("init", bad)
            #expect(outcome.status == 64 && outcome.stderr.contains(words), "\(bad): \(outcome.stderr)")
        }
        let unset = try workspace.run("init", "http://127.0.0.1:1/${SWELL_INIT_UNSET_VARIABLE}")
        #expect(unset.status == 64)
        #expect(unset.stderr.contains("SWELL_INIT_UNSET_VARIABLE"))
        let port = try LoopbackHTTPServer.closedPort()
        let refused = try workspace.run("init", "http://127.0.0.1:\(port)/items")
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("127.0.0.1:\(port)/items"))
        try workspace.write("notes.txt", "not JSON\n")
        let notJSON = try workspace.run("init", "--from", "notes.txt")
        #expect(notJSON.status == 65)
        #expect(notJSON.stderr.contains("notes.txt") && notJSON.stderr.contains("line 1, column 1"))
        #expect(try workspace.run("init", "--from", "missing.json").status == 69)
    }

    @Test func initKeepsAnExistingOutputUnlessForced() throws {
        let workspace = try workspace()
        try workspace.write("pipelines/users.yml", "kept\n")
        let refused = try workspace.run("init", "--from", "fixtures/sync/users_a.json", "--output", "pipelines/users.yml")
        #expect(refused.status == 64)
        #expect(try workspace.read("pipelines/users.yml") == "kept\n")
        let forced = try workspace.run("init", "--from", "fixtures/sync/users_a.json", "--output", "pipelines/users.yml", "--force")
        #expect(forced.status == 0)
        #expect(try workspace.read("pipelines/users.yml").contains("name: users_a"))
    }
}
