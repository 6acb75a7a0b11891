import Foundation
@testable import SwellPipeline
import SwellJSON
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `graphql` sources (Pipeline file reference version 3) against a GraphQL API somebody else
/// wrote — Datasette with the datasette-graphql plugin, from PyPI, serving a database the
/// test builds (`Tests/servers/graphql_server.py`) — paging with a cursor variable and
/// `pageInfo`; errors with and without data against a loopback server; the file's rules.
@Suite struct GraphQLTests {
    static func pipeline(url: String, query: String = "repos(first: 10, after: $after, sort: id)", extra: String = "") -> String {
        """
        version: 3
        name: github
        store: .swell/github.sqlite
        entities:
          Repo:
            key: [id]
            attributes:
              id: integer
              full_name: string
              stars: integer
              archived: boolean
        sources:
          - name: repos
            entity: Repo
            url: \(url)
            graphql:
              query: "query($after: String) { \(query) { nodes { id full_name stars archived } pageInfo { endCursor hasNextPage } } }"
              variables: {}
            records: data.repos.nodes
            paginate: { cursor: data.repos.pageInfo.endCursor, variable: after, has_more: data.repos.pageInfo.hasNextPage }
            retries: 0
        \(extra)
        exports:
          - name: repos-csv
            entity: Repo
            path: out/repos.csv
            columns: [id, full_name, stars, archived]
            sort: [id]
        """
    }

    /// The CSV of the server's `repos` table (the rows `graphql_server.py` writes).
    static func expectedCSV(repos: Int) -> String {
        (["id,full_name,stars,archived"] + (1...repos).map { n in
            "\(n),octo/repo-\(String(format: "%03d", n)),\(n * 7 % 50),\(n % 5 == 0 ? "true" : "false")"
        }).joined(separator: "\n") + "\n"
    }

    @Test func syncsResyncsAndExportsADatasetteConnectionPageByPage() throws {
        let workspace = try Workspace()
        let server = try ScriptServer(script: "graphql_server.py", arguments: [workspace.url.path, "--repos", "25"], interpreter: .testEnvironment)
        try workspace.write("github.yml", Self.pipeline(url: server.baseURL + "/graphql"))
        let sync = try workspace.run("run", "github.yml", "--report", "out/report.json")
        #expect(sync.status == 0, "\(sync.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(source["inserted"] as? Int == 25 && source["pages"] as? Int == 3, "\(source)")
        #expect(try workspace.read("out/repos.csv") == Self.expectedCSV(repos: 25))
        let resync = try workspace.run("import", "github.yml", "--report", "out/report.json")
        #expect(resync.status == 0, "\(resync.stderr)")
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["unchanged"] as? Int == 25)
    }

    @Test func aQueryTheAPIRefusesFailsQuotingItsMessage() throws {
        let workspace = try Workspace()
        let server = try ScriptServer(script: "graphql_server.py", arguments: [workspace.url.path], interpreter: .testEnvironment)
        try workspace.write("github.yml", Self.pipeline(url: server.baseURL + "/graphql", query: "repositories(first: 10, after: $after)"))
        let run = try workspace.run("import", "github.yml")
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("Cannot query field 'repositories'"), "\(run.stderr)")
    }

    /// Errors beside data are warnings; errors without data fail the source (69) quoting the first.
    @Test func errorsBesideDataAreWarningsAndErrorsAloneFail() throws {
        let data = #"{"data": {"repos": {"nodes": [{"id": 1, "full_name": "a/b", "stars": 3, "archived": false}], "pageInfo": {"endCursor": "1", "hasNextPage": false}}}, "errors": [{"message": "field stars is deprecated"}]}"#
        let none = #"{"data": null, "errors": [{"message": "rate limit exceeded"}, {"message": "second"}]}"#
        let server = try LoopbackHTTPServer { request in
            request.path.hasPrefix("/partial") ? .json(data) : .json(none)
        }
        let workspace = try Workspace()
        try workspace.write("partial.yml", Self.pipeline(url: server.baseURL + "/partial"))
        let partial = try workspace.run("run", "partial.yml")
        #expect(partial.status == 0, "\(partial.stderr)")
        #expect(partial.stderr.contains("field stars is deprecated"), "\(partial.stderr)")
        #expect(try workspace.read("out/repos.csv") == "id,full_name,stars,archived\n1,a/b,3,false\n")
        try workspace.write("none.yml", Self.pipeline(url: server.baseURL + "/none"))
        let failed = try workspace.run("import", "none.yml")
        #expect(failed.status == 69, "\(failed.stderr)")
        #expect(failed.stderr.contains("errors and no data: rate limit exceeded"), "\(failed.stderr)")
        // The query and its variables went as the POST body, the cursor in the variables.
        let body = try #require(server.requests.last.map { try JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] })
        #expect(body?["variables"] as? [String: String] == [:])
        #expect((body?["query"] as? String)?.hasPrefix("query($after: String)") == true)
        #expect(server.requests.allSatisfy { $0.method == "POST" })
    }

    /// The cursor goes in the variables, and `has_more: false` ends even when a cursor is given.
    @Test func theCursorGoesInTheVariablesAndHasMoreEnds() {
        var paginator = Paginator(.cursor(path: ["c"], parameter: "after"),
                                  source: PageRequest(url: "http://h/g", body: .object(JSONObject(members: [("query", .string("q")), ("variables", .object(JSONObject()))]))),
                                  placement: .graphQLVariables, hasMore: ["more"])
        #expect(paginator.first.body?.jsonText == #"{"query":"q","variables":{}}"#)
        let next = paginator.nextRequest(after: FetchedPage(url: "http://h/g", records: 2, captured: [["c"]: .string("x1"), ["more"]: .bool(true)]))
        #expect(next?.body?.jsonText == #"{"query":"q","variables":{"after":"x1"}}"#)
        #expect(next?.url == "http://h/g")
        #expect(paginator.nextRequest(after: FetchedPage(url: "http://h/g", records: 2, captured: [["c"]: .string("x2"), ["more"]: .bool(false)])) == nil)
    }

    private func failure(_ text: String) -> PipelineFileError? { SourceAccessTests.loadFailure(text) }

    @Test(arguments: [
        ("    method: GET", "sent as a POST, not GET"),
        ("    body: { q: 1 }", "graphql and body"),
        ("    paginate: { cursor: c, variable: after, in: body }", "a graphql source's cursor goes in its variables"),
    ])
    func graphQLMistakesAreRefused(extra: String, message: String) {
        var text = Self.pipeline(url: "http://h/graphql", extra: extra)
        if extra.contains("paginate") {
            text = text.replacingOccurrences(of: "    paginate: { cursor: data.repos.pageInfo.endCursor, variable: after, has_more: data.repos.pageInfo.hasNextPage }\n", with: "")
        }
        let error = failure(text)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test func variableAndHasMoreAreForGraphQLSources() {
        let text = SourceAccessTests.pipeline("    url: http://h/items\n    paginate: { cursor: c, variable: after }")
        #expect(failure(text)?.message.contains("paginate.variable of source items is for a graphql source") == true)
    }
}
