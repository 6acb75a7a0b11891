import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `for_each` expands a source per item; `--shard I/N` takes the sources at positions
/// I mod N; `replace` stays per source (PostgreSQL store guarantees statements 8, 9, 11).
@Suite struct ForEachShardTests {
    static func pipeline(sources: String) -> String {
        """
        version: 1
        name: repos
        store: .swell/repos.sqlite
        entities:
          Issue:
            key: [id]
            attributes:
              id: integer
              repo: string
              updated: integer
        sources:
        \(sources)
        exports:
          - name: issues-csv
            entity: Issue
            path: out/issues.csv
            columns: [id, repo, updated]
            sort: [id]
        """
    }

    /// A server with three repositories' issues: /repos/<name>/issues, ids 10·n + 1 … 10·n + 2;
    /// `X-Repo` must name the repository (a header filled from the item).
    static func server() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request in
            let parts = request.path.split(separator: "?")[0].split(separator: "/")
            guard parts.count == 3, parts[0] == "repos", parts[2] == "issues", let n = ["a": 1, "b": 2, "c": 3, "d": 4][String(parts[1])] else {
                return .json("{}", status: 404)
            }
            guard request.headers["x-repo"] == String(parts[1]) else { return .json("{}", status: 400) }
            let records = (1...2).map { "{\"id\": \(n * 10 + $0), \"repo\": \"\(parts[1])\", \"updated\": \(n * 100 + $0)}" }
            return .json("{\"items\": [\(records.joined(separator: ","))]}")
        }
    }

    static func source(_ server: LoopbackHTTPServer, name: String = "issues", forEach: String, extra: String = "") -> String {
        """
          - name: \(name)
            entity: Issue
            url: "\(server.baseURL)/repos/${item}/issues"
            records: items
            headers: { X-Repo: "${item}" }
            for_each: \(forEach)
        \(extra)
        """
    }

    private func sourceNames(_ workspace: Workspace) throws -> [String] {
        (try workspace.report()["sources"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    @Test func forEachExpandsASourcePerItemWithTheItemInURLHeadersAndName() throws {
        let server = try Self.server()
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(sources: Self.source(server, forEach: "[a, b, c]")))
        let outcome = try workspace.run("run", "repos.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try sourceNames(workspace) == ["issues[a]", "issues[b]", "issues[c]"])
        #expect(try workspace.read("out/issues.csv") == """
            id,repo,updated
            11,a,101
            12,a,102
            21,b,201
            22,b,202
            31,c,301
            32,c,302

            """)
        #expect(outcome.stdout.contains("source issues[b]: 2 records"), "\(outcome.stdout)")
    }

    @Test func forEachReadsItemsFromAFileAndANameMayPlaceTheItem() throws {
        let server = try Self.server()
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("repos.txt", "# the repositories\nc\n\n  a  \n")
        try workspace.write("repos.yml", Self.pipeline(sources: Self.source(server, name: "${item}-issues", forEach: "{ file: repos.txt }")))
        let outcome = try workspace.run("import", "repos.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try sourceNames(workspace) == ["c-issues", "a-issues"])
        let only = try workspace.run("import", "repos.yml", "--only", "a-issues", "--report", "out/report.json")
        #expect(only.status == 0, "\(only.stderr)")
        #expect(try sourceNames(workspace) == ["a-issues"])
    }

    @Test func incrementalStateIsKeptPerExpandedSource() throws {
        let server = try Self.server()
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(sources: Self.source(server, forEach: "[a, b]", extra: """
                incremental: { cursor: updated, param: since }
            """)))
        let first = try workspace.run("import", "repos.yml")
        #expect(first.status == 0, "\(first.stderr)")
        let again = try workspace.run("import", "repos.yml")
        #expect(again.status == 0, "\(again.stderr)")
        let second = server.requests.suffix(2).map(\.path)
        #expect(second == ["/repos/a/issues?since=102", "/repos/b/issues?since=202"], "\(second)")
        let status = try workspace.run("status", "repos.yml")
        #expect(status.stdout.contains("source issues[a]: incremental updated = 102"), "\(status.stdout)")
        #expect(status.stdout.contains("source issues[b]: incremental updated = 202"), "\(status.stdout)")
    }

    @Test func shardsTakeThePositionsIModNAndTogetherCoverEverySourceOnce() throws {
        let server = try Self.server()
        defer { server.stop() }
        let workspace = try Workspace()
        // Positions: 0 issues[a], 1 issues[b], 2 issues[c], 3 single.
        try workspace.write("repos.yml", Self.pipeline(sources: Self.source(server, forEach: "[a, b, c]") + """
              - name: single
                entity: Issue
                url: "\(server.baseURL)/repos/d/issues"
                records: items
                headers: { X-Repo: d }
            """))
        var taken: [String] = []
        for (shard, expected) in [("0/2", ["issues[a]", "issues[c]"]), ("1/2", ["issues[b]", "single"])] {
            let outcome = try workspace.run("run", "repos.yml", "--shard", shard, "--report", "out/report.json")
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(try sourceNames(workspace) == expected)
            taken += try sourceNames(workspace)
        }
        #expect(taken.sorted() == ["issues[a]", "issues[b]", "issues[c]", "single"])
        #expect(try workspace.read("out/issues.csv").split(separator: "\n").count == 9)
        let three = try workspace.run("import", "repos.yml", "--shard", "2/3", "--report", "out/report.json")
        #expect(three.status == 0)
        #expect(try sourceNames(workspace) == ["issues[c]"])
        for bad in ["2/2", "-1/2", "1/0", "x", "1/2/3"] {
            let outcome = try workspace.run("import", "repos.yml", "--shard", bad)
            #expect(outcome.status == 64, "\(bad): \(outcome.stderr)")
            #expect(outcome.stderr.contains("--shard"), "\(outcome.stderr)")
        }
        let export = try workspace.run("export", "repos.yml", "--shard", "0/2")
        #expect(export.status == 64, "\(export.stderr)")
    }

    @Test(arguments: [
        ("[]", "", "for_each of source issues has no items"),
        ("[a, b, a]", "", "item 'a' appears twice"),
        ("{ file: missing.txt }", "", "cannot read 'missing.txt'"),
        ("{ files: x }", "", "unknown key 'files'"),
        ("[a, [b]]", "", "each item must be a string or number"),
        ("[a, b]", "    mode: replace\n", "has mode replace and for_each"),
    ])
    func badForEachIsRejectedAtValidateNamingLineAndColumn(forEach: String, extra: String, message: String) throws {
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(sources: """
              - name: issues
                entity: Issue
                url: "http://127.0.0.1:1/repos/${item}/issues"
                for_each: \(forEach)
            \(extra)
            """))
        let outcome = try workspace.run("validate", "repos.yml")
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("repos.yml:"), "\(outcome.stderr)")
    }

    @Test func replaceOnAnEntityAnotherSourceWritesIsRejected() throws {
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(sources: """
              - { name: one, entity: Issue, url: one.json, mode: replace }
              - { name: two, entity: Issue, url: two.json }
            """))
        let outcome = try workspace.run("validate", "repos.yml")
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("repos.yml:12:"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("source one has mode replace, but source two also writes Issue"), "\(outcome.stderr)")
    }

    @Test func withoutForEachItemIsAnEnvironmentVariableAsBefore() throws {
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(sources: """
              - { name: one, entity: Issue, url: "data/${item}.json" }
            """))
        let unset = try workspace.run("validate", "repos.yml")
        #expect(unset.status == 64)
        #expect(unset.stderr.contains("environment variable item"), "\(unset.stderr)")
    }

    @Test func theScaleOutExampleValidatesWithASourcePerRepository() throws {
        let outcome = try SwellProcess.run(["validate", "examples/scale-out/repos.yml"], in: Workspace.repositoryRoot,
                                           environment: ["GITHUB_TOKEN": "token"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("6 sources"), "\(outcome.stdout)")
    }
}
