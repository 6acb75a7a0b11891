import Foundation
@testable import SwellPipeline
import SwellJSON
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `swell init` on the version-3 forms a sample can show: a CSV file or answer (its
/// delimiter, its cells' types, `.gz`), and a GraphQL connection — from a file, and from
/// Datasette's GraphQL API with `--graphql`, whose written file then syncs every page.
@Suite struct InitFormatsTests {
    static let prices = #"""
        sku;unit price;in stock;since;zip;note
        A-1;12.50;true;2024-05-01T00:00:00Z;0123;"a; quoted ""note"""
        B-2;7;false;2023-01-15T08:30:00Z;9876;
        C-3;0.25;true;2022-11-02T00:00:00Z;0001;plain

        """#

    @Test func aCSVSampleGivesACSVSourceWithTypesFromItsText() throws {
        let workspace = try Workspace()
        try workspace.write("data/prices.csv", Self.prices)
        let written = try workspace.run("init", "--from", "data/prices.csv", "--output", "pipelines/prices.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let text = try workspace.read("pipelines/prices.yml")
        for line in ["version: 3\n", "    format: csv", #"    csv: { delimiter: ";" }"#, "      unit_price: double", "      in_stock: boolean",
                     "      since: date", "      zip: string", "      note: string?", #"      unit_price: "unit price""#] {
            #expect(text.contains(line), "\(line) in:\n\(text)")
        }
        #expect(!text.contains("records:"), "\(text)")
        let run = try workspace.run("run", "pipelines/prices.yml")
        #expect(run.status == 0, "\(run.stderr)")
        // Leading zeros stay (zip is text); the quoted delimiter and quotes come through.
        #expect(try workspace.read("out/prices.csv") == #"""
            sku,unit_price,in_stock,since,zip,note
            A-1,12.5,true,2024-05-01T00:00:00Z,0123,"a; quoted ""note"""
            B-2,7,false,2023-01-15T08:30:00Z,9876,
            C-3,0.25,true,2022-11-02T00:00:00Z,0001,plain

            """#)
    }

    @Test func aGzippedCSVAnswerOverHTTPIsReadThroughGzip() throws {
        let workspace = try Workspace()
        let page = try Workspace.gzip(Self.prices.replacingOccurrences(of: ";", with: "\t").replacingOccurrences(of: "\"a\t quoted \"\"note\"\"\"", with: "x"))
        let server = try LoopbackHTTPServer { _ in LoopbackHTTPServer.Response(headers: [("Content-Type", "application/gzip")], body: page) }
        defer { server.stop() }
        let written = try workspace.run("init", "\(server.baseURL)/exports/prices.tsv.gz", "--output", "pipelines/prices.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let text = try workspace.read("pipelines/prices.yml")
        #expect(text.contains(#"    csv: { delimiter: "\t" }"#) && text.contains("    format: csv"), "\(text)")
        let run = try workspace.run("run", "pipelines/prices.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/prices.csv").hasPrefix("sku,unit_price,in_stock,since,zip,note\nA-1,12.5,true,2024-05-01T00:00:00Z,0123,x\n"))
    }

    @Test func aCSVSampleThatIsNotCSVNamesItsLine() throws {
        let workspace = try Workspace()
        try workspace.write("data/bad.csv", "id,name\n1,ok\n2,a\"b\n")
        let outcome = try workspace.run("init", "--from", "data/bad.csv")
        #expect(outcome.status == 65, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("data/bad.csv") && outcome.stderr.contains("line 3"), "\(outcome.stderr)")
    }

    static let query = "query($after: String) { repos(first: 10, after: $after, sort: id) { nodes { id full_name stars archived } pageInfo { endCursor hasNextPage } } }"

    @Test func aGraphQLQueryGivesAGraphQLSourceThatPagesThroughItsConnection() throws {
        let workspace = try Workspace()
        let server = try ScriptServer(script: "graphql_server.py", arguments: [workspace.url.path, "--repos", "25"], interpreter: .testEnvironment)
        let written = try workspace.run("init", server.baseURL + "/graphql", "--graphql", Self.query, "--name", "github",
                                        "--output", "pipelines/github.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let text = try workspace.read("pipelines/github.yml")
        for line in ["version: 3\n", "    graphql:", "    records: data.repos.nodes",
                     "    paginate: { cursor: data.repos.pageInfo.endCursor, variable: after, has_more: data.repos.pageInfo.hasNextPage }"] {
            #expect(text.contains(line), "\(line) in:\n\(text)")
        }
        let sync = try workspace.run("run", "pipelines/github.yml", "--report", "out/report.json")
        #expect(sync.status == 0, "\(sync.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(source["inserted"] as? Int == 25 && source["pages"] as? Int == 3, "\(source)")
        let csv = try workspace.read("out/github.csv")
        #expect(csv.split(separator: "\n").count == 26 && csv.contains("\n25,octo/repo-025,"), "\(csv)")
    }

    /// Datasette's default JSON (`rows` as arrays named by `columns`, beside a
    /// `suggested_facets` array of objects) is fetched again as objects, and the file reads
    /// those; the same page from a file, which cannot be fetched again, is refused saying why.
    @Test func datasettesDefaultShapeIsReadAsObjects() throws {
        let workspace = try Workspace()
        let server = try ScriptServer(script: "graphql_server.py", arguments: [workspace.url.path, "--repos", "25"], interpreter: .testEnvironment)
        let written = try workspace.run("init", server.baseURL + "/github/repos.json", "--name", "repos", "--output", "pipelines/repos.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let text = try workspace.read("pipelines/repos.yml")
        #expect(text.contains("/github/repos.json?_shape=objects") && text.contains("    records: rows") && text.contains("full_name"), "\(text)")
        let sync = try workspace.run("run", "pipelines/repos.yml", "--report", "out/report.json")
        #expect(sync.status == 0, "\(sync.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(source["inserted"] as? Int == 25, "\(source)")
        try workspace.write("default.json", #"{"database": "github", "table": "repos", "columns": ["id", "full_name"], "rows": [[1, "octo/a"]], "#
                            + #""suggested_facets": [{"name": "archived", "toggle_url": "x"}]}"#)
        let refused = try workspace.run("init", "--from", "default.json")
        #expect(refused.status == 65 && refused.stderr.contains("_shape=objects"), "\(refused.stderr)")
    }

    @Test func aGraphQLAnswerInAFileFindsTheNodesAndSaysWhatPagingNeeds() throws {
        let workspace = try Workspace()
        try workspace.write("answer.json", """
            {"data": {"viewer": {"login": "octo", "repositories": {"totalCount": 2, "nodes": [{"name": "a", "stargazerCount": 3}, {"name": "b", "stargazerCount": 0}],
             "pageInfo": {"endCursor": "Y3Vyc29yOjI=", "hasNextPage": true}}}}}
            """)
        let written = try workspace.run("init", "--from", "answer.json", "--output", "pipelines/answer.yml")
        #expect(written.status == 0, "\(written.stderr)")
        let text = try workspace.read("pipelines/answer.yml")
        #expect(text.contains("    records: data.viewer.repositories.nodes"), "\(text)")
        #expect(text.contains("give the query with --graphql QUERY"), "\(text)")
        #expect(try workspace.run("run", "pipelines/answer.yml").status == 0)
        // --graphql POSTs the query: it needs the API's URL, not a file.
        #expect(try workspace.run("init", "--from", "answer.json", "--graphql", "{ a }").status == 64)
        // An answer with errors and no data is refused with its message.
        try workspace.write("errors.json", #"{"data": null, "errors": [{"message": "Bad credentials"}]}"#)
        let refused = try workspace.run("init", "--from", "errors.json")
        #expect(refused.status == 69 && refused.stderr.contains("Bad credentials"), "\(refused.stderr)")
        // A REST page that says `errors` beside its records (no `data`) is not a GraphQL failure.
        try workspace.write("rest.json", #"{"items": [{"id": 1}], "errors": [{"message": "partial"}]}"#)
        #expect(try workspace.run("init", "--from", "rest.json").status == 0)
        #expect(try workspace.run("init", "--from", "answer.json", "--variables", "{}").status == 64)
        #expect(try workspace.run("init", "--from", "answer.json", "--graphql", "{ a }", "--variables", "[1]").status == 64)
    }

    /// The cursor goes into a variable the query passes to `after:`, or one named like a
    /// cursor; never into another String variable such as `$owner`.
    @Test(arguments: [
        ("query($owner: String, $after: String) { x(owner: $owner, after: $after) { nodes { id } } }", "after"),
        ("query($owner: String, $page: String) { x(login: $owner, first: 10, after: $page) { nodes { id } } }", "page"),
        ("query($owner: String) { x(login: $owner) { nodes { id } } }", nil),
        ("query($after: String!) { x(after: $after) { nodes { id } } }", nil),
        ("query($endCursor: String) { x(first: 5) { nodes { id } } }", "endCursor"),
        ("query($cursorAfter: String) { x(sort: id, after: $cursorAfter) { nodes { id } } }", "cursorAfter"),
    ] as [(String, String?)])
    func theCursorVariableIsTheOneTheQueryPassesToAfter(query: String, expected: String?) {
        #expect(InitGraphQL(query: query).cursorVariable == expected, "\(query)")
    }

    @Test func withoutACursorVariableTheFileHasNoPagingAndSaysWhy() throws {
        let answer = try JSONValue.parse(Array(#"{"data": {"x": {"nodes": [{"id": 1}, {"id": 2}], "pageInfo": {"endCursor": "b", "hasNextPage": true}}}}"#.utf8))
        var options = InitOptions(url: "https://api.example.com/graphql")
        options.graphQL = InitGraphQL(query: "query($owner: String) { x(login: $owner) { nodes { id } pageInfo { endCursor hasNextPage } } }")
        let pipeline = try PipelineInference.infer(answer, options: options)
        #expect(pipeline.pagination == nil && pipeline.records == ["data", "x", "nodes"])
        #expect(pipeline.yaml.contains("declares no String variable for the cursor"), "\(pipeline.yaml)")
    }

    /// Variables holding DEL or C1 controls, and queries holding U+2028, still give a file YAML reads.
    @Test func controlCharactersInTheQueryAndVariablesStayReadable() throws {
        let answer = try JSONValue.parse(Array(#"{"data": {"x": {"nodes": [{"id": 1}]}}}"#.utf8))
        var options = InitOptions(name: "odd", url: "https://api.example.com/graphql")
        options.graphQL = InitGraphQL(query: "query($after: String) { x(q: \"a\u{2028}b\u{85}\", after: $after) { nodes { id } } }",
                                      variables: .object(JSONObject(members: [("q", .string("a\u{7F}b\u{9F}c"))])))
        let pipeline = try PipelineInference.infer(answer, options: options)
        let workspace = try Workspace()
        try workspace.write("odd.yml", pipeline.yaml)
        let validated = try workspace.run("validate", "odd.yml")
        #expect(validated.status == 0, "\(validated.stderr)\n\(pipeline.yaml)")
        let file = try PipelineFileLoader(environment: [:]).load(path: workspace.path("odd.yml"))
        #expect(file.sources.first?.body?.jsonText == SourceSpec.graphQLBody(query: options.graphQL!.query, variables: options.graphQL!.variables).jsonText)
    }
}
