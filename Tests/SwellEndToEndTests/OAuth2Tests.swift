import Foundation
import SwellHTTP
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `auth.oauth2_client_credentials` (Pipeline file reference version 3) against oauthlib's token
/// endpoint (RFC 6749 §4.4, `Tests/servers/oauth2_server.py`), started by the test: the
/// token is fetched before the first page, sent as a bearer token, fetched again before it
/// expires and once after a 401; a refused client and an unreachable endpoint are exit 69
/// naming the token URL; no secret and no token appears in any output.
@Suite struct OAuth2Tests {
    static let clientID = "swell-client-4f1a"
    static let clientSecret = "s3cret+/ value&9c2e"

    static func pipeline(tokenURL: String, apiURL: String, clientAuth: String = "basic", extraAuth: String = "",
                         extraSource: String = "") -> String {
        """
        version: 3
        name: billing
        store: .swell/billing.sqlite
        entities:
          Invoice:
            key: [id]
            attributes:
              id: integer
              number: string
              amount: double
              status: string
        sources:
          - name: invoices
            entity: Invoice
            url: \(apiURL)
            records: items
            auth:
              oauth2_client_credentials:
                token_url: \(tokenURL)
                client_id: ${CLIENT_ID}
                client_secret: ${CLIENT_SECRET}
                client_auth: \(clientAuth)
        \(extraAuth)
            paginate:
              offset: { param: offset, limit_param: limit, limit: 10, total: meta.total }
            retries: 2
        \(extraSource)
        exports:
          - name: invoices-csv
            entity: Invoice
            path: out/invoices.csv
            columns: [id, number, amount, status]
            sort: [id]
        """
    }

    static let environment = ["CLIENT_ID": clientID, "CLIENT_SECRET": clientSecret]

    /// What the server counted (`/_stats`).
    struct Stats {
        let tokensIssued: Int
        let unauthorized: Int
        let tokenRequests: [[String: String]]
        let apiRequests: [[String: String]]
        let issued: [String]
    }

    static func stats(_ server: ScriptServer) throws -> Stats {
        let client = try HTTPClient(userAgent: "swell-tests")
        var body: [UInt8] = []
        _ = try client.perform(HTTPRequest(url: server.baseURL + "/_stats")) { body += $0 }
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        return Stats(tokensIssued: object["tokens_issued"] as? Int ?? -1, unauthorized: object["unauthorized"] as? Int ?? -1,
                     tokenRequests: object["token_requests"] as? [[String: String]] ?? [],
                     apiRequests: object["api_requests"] as? [[String: String]] ?? [],
                     issued: object["issued"] as? [String] ?? [])
    }

    static func server(_ options: [String] = []) throws -> ScriptServer {
        try ScriptServer(script: "oauth2_server.py", arguments: [clientID, clientSecret] + options)
    }

    /// The CSV the server's 23 invoices make.
    static func expectedCSV(records: Int = 23) -> String {
        var lines = ["id,number,amount,status"]
        for n in 1...records {
            lines.append("\(n),INV-\(String(format: "%04d", n)),\(n * 10).5,\(n % 3 == 0 ? "paid" : "open")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every output of the runs and the store file: none may hold a secret or a token the endpoint gave.
    static func expectNoSecrets(_ texts: [String], workspace: Workspace, server: ScriptServer) throws {
        let issued = try stats(server).issued
        #expect(!issued.isEmpty)
        var all = texts
        for file in ["out/report.json", "out/invoices.csv"] where FileManager.default.fileExists(atPath: workspace.path(file)) {
            all.append(try workspace.read(file))
        }
        for text in all {
            for secret in [clientSecret, clientID, "s3cret"] {
                #expect(!text.contains(secret), "a secret in: \(text.prefix(2000))")
            }
            #expect(!text.contains("Bearer "), "a token in: \(text.prefix(2000))")
            for token in issued { #expect(!text.contains(token), "a token in: \(text.prefix(2000))") }
        }
        let store = try Data(contentsOf: URL(fileURLWithPath: workspace.path(".swell/billing.sqlite")))
        for secret in issued + [clientSecret] { #expect(store.range(of: Data(secret.utf8)) == nil, "a secret in the store") }
    }

    @Test(arguments: ["basic", "body"])
    func syncsResyncsAndExportsWithATokenFromTheEndpoint(clientAuth: String) throws {
        let server = try Self.server()
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices",
                                                         clientAuth: clientAuth))
        let sync = try workspace.run("run", "billing.yml", "--report", "out/report.json", "--log-level", "trace", environment: Self.environment)
        #expect(sync.status == 0, "\(sync.stderr)")
        let counts = try workspace.report()["sources"] as? [[String: Any]]
        #expect(counts?.first?["inserted"] as? Int == 23, "\(counts ?? [])")
        #expect(try workspace.read("out/invoices.csv") == Self.expectedCSV())
        let resync = try workspace.run("import", "billing.yml", "--report", "out/report.json", "--log-level", "trace", environment: Self.environment)
        #expect(resync.status == 0, "\(resync.stderr)")
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["unchanged"] as? Int == 23)
        let status = try workspace.run("status", "billing.yml", environment: Self.environment)
        let stats = try Self.stats(server)
        // One token a run (it lives an hour), three pages a run, never a 401.
        #expect(stats.tokensIssued == 2)
        #expect(stats.unauthorized == 0)
        #expect(stats.apiRequests.map { $0["query"] ?? "" } == Array(repeating: ["offset=0&limit=10", "offset=10&limit=10", "offset=20&limit=10"], count: 2).flatMap { $0 })
        // The client authenticated the way the file says: as form fields only with `body`.
        #expect(stats.tokenRequests.allSatisfy { $0["grant_type"] == "client_credentials" })
        #expect(stats.tokenRequests.allSatisfy { ($0["client_id"] != nil) == (clientAuth == "body") }, "\(stats.tokenRequests)")
        try Self.expectNoSecrets([sync.stdout, sync.stderr, resync.stdout, resync.stderr, status.stdout, status.stderr], workspace: workspace, server: server)
    }

    @Test func scopeAudienceAndExtraFieldsGoToTheTokenEndpoint() throws {
        let server = try Self.server()
        let workspace = try Workspace()
        let extra = """
                scope: invoices.read invoices.write
                audience: https://api.example.com
                extra: { resource: billing }
        """
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices", extraAuth: extra))
        let run = try workspace.run("import", "billing.yml", environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        let request = try Self.stats(server).tokenRequests.first ?? [:]
        #expect(request == ["grant_type": "client_credentials", "scope": "invoices.read invoices.write",
                            "audience": "https://api.example.com", "resource": "billing"])
    }

    @Test func aTokenAboutToExpireIsFetchedAgainBeforeItIs() throws {
        // Tokens live 1 s; each of the 6 pages takes the server 0.4 s: the run outlives its first token.
        let server = try Self.server(["--expires-in", "1", "--page-delay", "0.4", "--records", "60"])
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices"))
        let run = try workspace.run("import", "billing.yml", environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try Self.stats(server)
        #expect(stats.unauthorized == 0, "a page was sent with an expired token")
        #expect(stats.tokensIssued >= 2)
    }

    @Test func a401FetchesOneNewTokenAndAsksAgain() throws {
        // The server forgets every token after its first page.
        let server = try Self.server(["--revoke-after-pages", "1"])
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices"))
        let run = try workspace.run("run", "billing.yml", "--log-level", "trace", environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/invoices.csv") == Self.expectedCSV())
        let stats = try Self.stats(server)
        #expect(stats.unauthorized == 1)
        #expect(stats.tokensIssued == 2)
        try Self.expectNoSecrets([run.stdout, run.stderr], workspace: workspace, server: server)
    }

    @Test func a401AfterANewTokenFailsTheRun() throws {
        let server = try Self.server(["--always-401"])
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices"))
        let run = try workspace.run("import", "billing.yml", "--log-level", "trace", environment: Self.environment)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("401"), "\(run.stderr)")
        let stats = try Self.stats(server)
        #expect(stats.unauthorized == 2)
        #expect(stats.tokensIssued == 2)
        try Self.expectNoSecrets([run.stdout, run.stderr], workspace: workspace, server: server)
    }

    @Test func aRefusedClientIsExit69NamingTheTokenEndpoint() throws {
        let server = try Self.server()
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices"))
        var environment = Self.environment
        environment["CLIENT_SECRET"] = "wrong-secret-77d1"
        let run = try workspace.run("import", "billing.yml", "--report", "out/report.json", "--log-level", "trace", environment: environment)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("\(server.baseURL)/token refused the client"), "\(run.stderr)")
        let report = try workspace.read("out/report.json")
        #expect(!run.stderr.contains("wrong-secret-77d1") && !report.contains("wrong-secret-77d1"))
        #expect(try Self.stats(server).apiRequests.isEmpty, "a page was asked for without a token")
    }

    @Test func aSlowTokenEndpointIsRetriedAndAnUnreachableOneIsExit69() throws {
        // The first token request takes 3 s against a 1 s timeout: the retry gets the token.
        let server = try Self.server(["--slow-token-requests", "1", "--token-delay", "3"])
        let workspace = try Workspace()
        try workspace.write("billing.yml", Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices",
                                                         extraSource: "    timeout: 1"))
        let run = try workspace.run("import", "billing.yml", environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.stats(server).tokenRequests.count == 2)

        let closed = "http://127.0.0.1:\(try LoopbackHTTPServer.closedPort())/token"
        try workspace.write("closed.yml", Self.pipeline(tokenURL: closed, apiURL: server.baseURL + "/api/invoices"))
        let unreachable = try workspace.run("import", "closed.yml", environment: Self.environment)
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("cannot get a token from \(closed)"), "\(unreachable.stderr)")
    }

    /// The bundled example (`pipelines/invoices-oauth2.yml`) runs as its comment says.
    @Test func theBundledExampleRuns() throws {
        let server = try Self.server()
        let workspace = try Workspace()
        var environment = Self.environment
        environment["BILLING_API"] = server.baseURL + "/api"
        environment["BILLING_AUTH"] = server.baseURL
        let run = try workspace.run("run", "pipelines/invoices-oauth2.yml", "--report", "out/report.json", environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["inserted"] as? Int == 23)
        #expect(try Self.stats(server).tokenRequests.first?["scope"] == "invoices.read")
    }

    /// One token serves the run: a `for_each` of three items asks the endpoint once.
    @Test func theSourcesOfARunShareOneToken() throws {
        let server = try Self.server()
        let workspace = try Workspace()
        let text = Self.pipeline(tokenURL: server.baseURL + "/token", apiURL: server.baseURL + "/api/invoices?part=${item}",
                                 extraSource: "    for_each: [a, b, c]")
        try workspace.write("billing.yml", text)
        let run = try workspace.run("import", "billing.yml", environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try Self.stats(server)
        #expect(stats.apiRequests.count == 9)
        #expect(stats.tokensIssued == 1)
    }
}
