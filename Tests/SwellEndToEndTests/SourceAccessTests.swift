import Foundation
@testable import SwellPipeline
import SwellHTTP
import SwellLocks
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Version 3's ways to reach an API besides OAuth 2.0 (`OAuth2Tests`): bearer, basic and
/// API-key auth, POST bodies with the offset in them, offsets in the query, statuses read
/// as "no records", and the incremental cursor's `initial` and `lag` — each end to end
/// against a loopback server that checks what arrives; and the file's rules for them.
@Suite struct SourceAccessTests {
    static func pipeline(_ source: String) -> String {
        """
        version: 3
        name: items
        store: .swell/items.sqlite
        entities:
          Item:
            key: [id]
            attributes:
              id: integer
              title: string
              updated: date?
        sources:
          - name: items
            entity: Item
            records: items
        \(source)
        exports:
          - name: items-csv
            entity: Item
            path: out/items.csv
            columns: [id, title]
            sort: [id]
        """
    }

    /// Records 1…n as the server serves them.
    static func records(_ range: some Sequence<Int>) -> String {
        range.map { "{\"id\": \($0), \"title\": \"item \($0)\", \"updated\": \"2024-05-0\($0 % 9 + 1)T12:00:00Z\"}" }.joined(separator: ", ")
    }

    /// An API moved to another host: the redirect is followed, but neither the API key
    /// header nor a header holding a `${VAR}` value goes with it (libcurl alone would send them).
    @Test func aRedirectToAnotherHostCarriesNoCredentials() throws {
        let elsewhere = try LoopbackHTTPServer(responses: [.json("{\"items\": [\(Self.records(1...2))]}")])
        let api = try LoopbackHTTPServer(responses: [.init(status: 301, headers: [("Location", elsewhere.baseURL + "/v2/items")])])
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(api.baseURL)/items
                headers: { X-Tenant: "${TENANT}", X-Trace: plain }
            \(AuthForm.apiKeyHeader.yaml)
            """))
        let run = try workspace.run("run", "items.yml", environment: ["TENANT": "tenant-s3cret"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...2))
        #expect(api.requests.first?.headers["x-api-key"] == AuthForm.secret && api.requests.first?.headers["x-tenant"] == "tenant-s3cret")
        let moved = try #require(elsewhere.requests.first)
        #expect(moved.headers["x-api-key"] == nil && moved.headers["x-tenant"] == nil, "\(moved.headers)")
        #expect(moved.headers["x-trace"] == "plain")
    }

    static func csv(_ range: ClosedRange<Int>) -> String {
        (["id,title"] + range.map { "\($0),item \($0)" }).joined(separator: "\n") + "\n"
    }

    enum AuthForm: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case bearer, basic, apiKeyHeader, apiKeyQuery
        var testDescription: String { rawValue }

        /// Characters a query encodes (`+ / =`, as in base64 keys): the encoded form is hidden too.
        static let secret = "k3y+9d/7e=41aa"
        static let user = "reporter-55c2"

        var yaml: String {
            switch self {
            case .bearer: "    auth: { bearer: \(Self.secret) }"
            case .basic: "    auth: { basic: { username: \(Self.user), password: \(Self.secret) } }"
            case .apiKeyHeader: "    auth: { api_key: { name: X-Api-Key, value: \(Self.secret) } }"
            case .apiKeyQuery: "    auth: { api_key: { name: api_key, value: \(Self.secret), in: query } }"
            }
        }

        /// Whether `request` carries the credentials as this form sends them.
        func accepts(_ request: LoopbackHTTPServer.Request) -> Bool {
            switch self {
            case .bearer: request.headers["authorization"] == "Bearer \(Self.secret)"
            case .basic: request.headers["authorization"] == "Basic " + Data("\(Self.user):\(Self.secret)".utf8).base64EncodedString()
            case .apiKeyHeader: request.headers["x-api-key"] == Self.secret
            case .apiKeyQuery: URLComponents(string: request.path)?.queryItems?.first { $0.name == "api_key" }?.value == Self.secret
            }
        }
    }

    /// Each form is sent on every page; its value (written in the file, not from the
    /// environment) appears in no output, a failure's included.
    @Test(arguments: AuthForm.allCases)
    func eachAuthFormIsSentAndNeverShown(form: AuthForm) throws {
        let failing = LockedValue(false)
        let server = try LoopbackHTTPServer { request in
            guard form.accepts(request) else { return .json("{\"error\": \"who are you\"}", status: 401) }
            let etag = [("ETag", "\"v1\"")]
            if request.path.hasPrefix("/p2") {
                return failing.withLock { $0 } ? .json("{}", status: 500) : .json("{\"items\": [\(Self.records(3...4))]}", headers: etag)
            }
            // Like many APIs, the next link repeats the query, a key in it included.
            let query = request.path.split(separator: "?", maxSplits: 1).dropFirst().first.map { "?" + $0 } ?? ""
            return .json("{\"items\": [\(Self.records(1...2))], \"next\": \"/p2\(query)\"}", headers: etag)
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/p1
                paginate: { next: next }
                retries: 0
            \(form.yaml)
            """))
        let run = try workspace.run("run", "items.yml", "--report", "out/report.json", "--log-level", "trace")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...4))
        var outputs = [run.stdout, run.stderr, try workspace.read("out/report.json")]
        failing.withLock { $0 = true }
        let failed = try workspace.run("import", "items.yml", "--report", "out/report.json", "--log-level", "trace")
        #expect(failed.status == 69, "\(failed.stderr)")
        #expect(failed.stderr.contains("/p2"), "\(failed.stderr)")
        let status = try workspace.run("status", "items.yml")
        outputs += [failed.stdout, failed.stderr, try workspace.read("out/report.json"), status.stdout, status.stderr]
        for text in outputs {
            #expect(!text.contains(AuthForm.secret) && !text.contains(HTTPLinks.queryEncoded(AuthForm.secret)), "\(text)")
            #expect(!text.contains(Data("\(AuthForm.user):\(AuthForm.secret)".utf8).base64EncodedString()), "\(text)")
        }
        let store = try Data(contentsOf: URL(fileURLWithPath: workspace.path(".swell/items.sqlite")))
        for form in [AuthForm.secret, HTTPLinks.queryEncoded(AuthForm.secret)] {
            #expect(store.range(of: Data(form.utf8)) == nil, "the secret is in the store")
        }
    }

    /// A POST whose body carries the offset and limit: the body as written plus the paging
    /// members, a page of fewer records than the limit ends; a re-sync sends the same bodies.
    @Test func aPostBodyCarriesTheOffset() throws {
        let received = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            guard request.method == "POST", request.headers["content-type"] == "application/json",
                  let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                  let offset = body["offset"] as? Int, let limit = body["limit"] as? Int else { return .json("{}", status: 400) }
            received.withLock { $0.append(String(decoding: request.body, as: UTF8.self)) }
            let ids = Array(1...5).dropFirst(offset).prefix(limit)
            return .json("{\"items\": [\(Self.records(ids))]}")
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/search
                method: POST
                body: { filter: { status: open, tags: [a, "b"] }, page_size: 2, exact: true, note: null }
                paginate: { offset: { param: offset, limit_param: limit, limit: 2 }, in: body }
            """))
        let run = try workspace.run("run", "items.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...5))
        let resync = try workspace.run("import", "items.yml", "--report", "out/report.json")
        #expect(resync.status == 0, "\(resync.stderr)")
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["unchanged"] as? Int == 5)
        let bodies = (0..<3).map { #"{"filter":{"status":"open","tags":["a","b"]},"page_size":2,"exact":true,"note":null,"offset":\#($0 * 2),"limit":2}"# }
        #expect(received.withLock { $0 } == bodies + bodies)
    }

    /// Offsets in the query stop when the offset reaches `total`, without asking for an empty page.
    @Test func offsetsInTheQueryStopAtTheTotal() throws {
        let received = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            received.withLock { $0.append(request.path) }
            let query = URLComponents(string: request.path)?.queryItems ?? []
            let offset = Int(query.first { $0.name == "skip" }?.value ?? "") ?? -1
            let ids = Array(1...4).dropFirst(offset).prefix(2)
            return .json("{\"total\": \"4\", \"items\": [\(Self.records(ids))]}")
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/items?sort=id
                paginate: { offset: { param: skip, limit: 2, total: total } }
            """))
        let run = try workspace.run("run", "items.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...4))
        #expect(received.withLock { $0 } == ["/items?sort=id&skip=0", "/items?sort=id&skip=2"])
    }

    /// `on_status: { 404: empty }` reads a 404 as a page with no records; without it, 404 fails (69).
    @Test func aStatusReadAsEmptyIsAPageWithoutRecords() throws {
        let server = try LoopbackHTTPServer { request in
            request.path.hasPrefix("/gone") ? .json("{\"message\": \"Not Found\"}", status: 404) : .json("{\"items\": [\(Self.records(1...2))]}")
        }
        let workspace = try Workspace()
        let sources = """
                url: \(server.baseURL)/items
              - name: gone
                entity: Item
                records: items
                url: \(server.baseURL)/gone
            """
        try workspace.write("items.yml", Self.pipeline(sources + "\n    on_status: { 404: empty, 410: empty }"))
        let run = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...2))
        let gone = (try workspace.report()["sources"] as? [[String: Any]])?.last
        #expect(gone?["inserted"] as? Int == 0 && gone?["status"] as? String != "failed", "\(gone ?? [:])")
        try workspace.write("strict.yml", Self.pipeline(sources))
        let strict = try workspace.run("import", "strict.yml")
        #expect(strict.status == 69, "\(strict.stderr)")
        #expect(strict.stderr.contains("404"), "\(strict.stderr)")
    }

    /// The first run sends `initial`; the next sends the newest value seen less `lag` seconds.
    @Test func incrementalSendsTheInitialValueThenTheKeptOneLessTheLag() throws {
        let received = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            received.withLock { $0.append(request.path) }
            return .json("{\"items\": [\(Self.records(1...3))]}")
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/items
                incremental: { cursor: updated, param: since, initial: "2024-01-01T00:00:00Z", lag: 3600 }
            """))
        for _ in 0..<2 {
            let run = try workspace.run("import", "items.yml")
            #expect(run.status == 0, "\(run.stderr)")
        }
        // Records 1–3 were updated on May 2nd to 4th, at noon: the newest less an hour.
        #expect(received.withLock { $0 } == ["/items?since=2024-01-01T00%3A00%3A00Z", "/items?since=2024-05-04T11%3A00%3A00Z"])
    }

    /// A `for_each` fills `${item}` in the source's credentials and its incremental `initial`
    /// too (not only its URL): each expansion sends its own, never the literal `${item}`; and
    /// `lag: 0` is a lag (none).
    @Test func forEachFillsTheItemInAuthAndTheInitialValue() throws {
        let received = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            let key = request.headers.first { $0.key.lowercased() == "x-api-key" }?.value ?? "-"
            received.withLock { $0.append("\(request.path) \(key)") }
            return .json("{\"items\": [\(Self.records(1...1))]}")
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/items
                for_each: ["2024", "2025"]
                auth: { api_key: { name: X-Api-Key, value: "key-${item}" } }
                incremental: { cursor: updated, param: since, initial: "${item}-01-01T00:00:00Z", lag: 0 }
            """))
        let run = try workspace.run("import", "items.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(received.withLock { $0 }.sorted() == ["/items?since=2024-01-01T00%3A00%3A00Z key-2024", "/items?since=2025-01-01T00%3A00%3A00Z key-2025"],
                "\(received.withLock { $0 })")
    }

    /// `mode: insert` inserts new keys and leaves a stored key's row as it is, counted unchanged.
    @Test func insertModeLeavesStoredRowsAsTheyAre() throws {
        let second = LockedValue(false)
        let server = try LoopbackHTTPServer { _ in
            second.withLock { $0 }
                ? .json(#"{"items": [{"id": 2, "title": "changed"}, {"id": 3, "title": "item 3"}, {"id": 4, "title": "item 4"}]}"#)
                : .json("{\"items\": [\(Self.records(1...3))]}")
        }
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/items
                mode: insert
            """))
        let first = try workspace.run("run", "items.yml")
        #expect(first.status == 0, "\(first.stderr)")
        second.withLock { $0 = true }
        let run = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(run.status == 0, "\(run.stderr)")
        let counts = (try workspace.report()["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(counts["inserted"] as? Int == 1 && counts["updated"] as? Int == 0 && counts["unchanged"] as? Int == 2, "\(counts)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...4))
    }

    /// A page whose path ends in `.gz` is read through gzip, a local NDJSON file and an HTTP
    /// JSON page alike; a cut-short one is a bad page (65) saying so.
    @Test func gzippedPagesAreReadThroughGzip() throws {
        let page = try Workspace.gzip("{\"items\": [\(Self.records(1...3))]}")
        let server = try LoopbackHTTPServer { _ in LoopbackHTTPServer.Response(headers: [("Content-Type", "application/gzip")], body: page) }
        let workspace = try Workspace()
        let lines = (4...6).map { "{\"id\": \($0), \"title\": \"item \($0)\"}" }.joined(separator: "\n") + "\n"
        try Data(try Workspace.gzip(lines)).write(to: URL(fileURLWithPath: workspace.path("local.ndjson.gz")))
        try workspace.write("items.yml", Self.pipeline("""
                url: \(server.baseURL)/export/items.json.gz?v=2
              - name: local
                entity: Item
                url: local.ndjson.gz
                format: ndjson
            """).replacingOccurrences(of: "    records: items\n  - name: local", with: "    records: items\n  - name: local"))
        let run = try workspace.run("run", "items.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...6))
        let whole = try Workspace.gzip(lines)
        try Data(whole.prefix(whole.count - 12)).write(to: URL(fileURLWithPath: workspace.path("local.ndjson.gz")))
        let cut = try workspace.run("import", "items.yml")
        #expect(cut.status == 65, "\(cut.stderr)")
        #expect(cut.stderr.contains("page local.ndjson.gz is not valid gzip"), "\(cut.stderr)")
    }

    /// `format: csv`: a header row names the fields, values convert as JSON strings do, an
    /// empty field is null; a `.csv.gz` file reads through gzip; a row with too many fields
    /// is a bad page (65) naming its line.
    @Test func csvPagesAreRecords() throws {
        let workspace = try Workspace()
        try workspace.write("items.csv", "id;title;updated\r\n1;item 1;2024-05-02T12:00:00Z\r\n2;\"item 2\";\r\n3;item 3;2024-05-04T12:00:00Z\r\n")
        try workspace.write("items.yml", Self.pipeline("""
                url: items.csv
                format: csv
                csv: { delimiter: ";" }
            """).replacingOccurrences(of: "    records: items\n", with: ""))
        let run = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...3))
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["inserted"] as? Int == 3)
        let resync = try workspace.run("import", "items.yml", "--report", "out/report.json")
        #expect((try workspace.report()["sources"] as? [[String: Any]])?.first?["unchanged"] as? Int == 3, "\(resync.stderr)")
        try workspace.write("items.csv", "id;title;updated\n4;item 4;;extra\n")
        let bad = try workspace.run("import", "items.yml")
        #expect(bad.status == 65, "\(bad.stderr)")
        #expect(bad.stderr.contains("page items.csv is not valid CSV: line 2: 4 fields where the header names 3"), "\(bad.stderr)")
        // The same rows, gzipped, without a header (columns by number).
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-f", workspace.path("plain.csv")]
        try workspace.write("plain.csv", "5,item 5\n6,item 6\n")
        try gzip.run()
        gzip.waitUntilExit()
        try workspace.write("more.yml", Self.pipeline("""
                url: plain.csv.gz
                format: csv
                csv: { header: false }
                fields: { id: "1", title: "2" }
            """).replacingOccurrences(of: "    records: items\n", with: ""))
        let more = try workspace.run("run", "more.yml")
        #expect(more.status == 0, "\(more.stderr)")
        #expect(try workspace.read("out/items.csv") == Self.csv(1...3) + "5,item 5\n6,item 6\n")
    }

    private func failure(_ text: String) -> PipelineFileError? { Self.loadFailure(text) }

    /// Why `text` does not load as a pipeline file (`demo.yml`), if it does not.
    static func loadFailure(_ text: String) -> PipelineFileError? {
        do {
            _ = try PipelineFileLoader(environment: [:]).load(text: text, path: "demo.yml")
            return nil
        } catch {
            return error
        }
    }

    /// Each version-3 mistake fails naming its line (64).
    @Test(arguments: [
        ("    auth: { bearer: t0k3n, basic: { username: u, password: p } }", 16, "takes one form"),
        ("    method: GET\n    body: { q: 1 }", 16, "a GET does not send"),
        ("    body: { q: 1 }", 16, "a GET does not send"),
        ("    paginate: { offset: { limit: 10 }, in: body }", 16, "has no body"),
        ("    method: POST\n    body: [1, 2]\n    paginate: { offset: { limit: 10 }, in: body }", 18, "has no body (a JSON object)"),
        ("    on_status: { 200: empty }", 16, "'200' is not an HTTP error status"),
        ("    on_status: { 404: retry }", 16, "must be empty"),
        ("    method: DELETE", 16, "must be GET, POST or PUT"),
        ("    paginate: { offset: { param: o } }", 16, "limit"),
        ("    auth: { api_key: { name: k, value: v, in: cookie } }", 16, "must be header or query"),
        ("    auth: { oauth2_client_credentials: { token_url: /token, client_id: a, client_secret: b } }", 16, "must be an http:// or https:// URL"),
        ("    auth: { oauth2_client_credentials: { token_url: http://h/t, client_id: a, client_secret: b, client_auth: jwt } }", 16, "must be basic or body"),
        ("    incremental: { cursor: title, param: since, lag: 60 }", 16, "needs a date or number cursor"),
        ("    mode: upsert-ish", 16, "must be upsert, append, replace or insert"),
        ("    csv: { delimiter: \";\" }", 16, "csv options of source items need format: csv"),
        ("    format: csv\n    csv: { delimiter: \"ab\" }", 17, "must be one ASCII character"),
        ("    for_each: { entity: Nope, value: title }", 16, "names entity 'Nope', which is not defined"),
        ("    for_each: { entity: Item, value: name }", 16, "'name' is not an attribute of Item"),
        ("    for_each: { entity: Item, value: title, where: \"nope == 1\" }", 16, "for_each of source items.where"),
    ] as [(String, Int, String)])
    func version3MistakesNameTheirLine(source: String, line: Int, message: String) {
        let error = failure(Self.pipeline("    url: http://h/items\n" + source))
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    /// The version-3 keys in a version-2 file say which version they need.
    @Test func version3KeysNeedVersion3() {
        for source in ["    auth: { bearer: t0k3n }", "    method: POST", "    on_status: { 404: empty }",
                       "    paginate: { offset: { limit: 5 } }", "    incremental: { cursor: updated, param: s, initial: x }",
                       "    mode: insert", "    for_each: { entity: Item, value: title }", "    format: csv"] {
            let text = Self.pipeline("    url: http://h/items\n" + source).replacingOccurrences(of: "version: 3", with: "version: 2")
            let error = failure(text)
            #expect(error?.message.contains("needs version: 3") == true, "\(source): \(String(describing: error))")
        }
    }

    /// Auth values written in the file are secrets too.
    @Test func authValuesAreSecretsWhereverTheyComeFrom() throws {
        let file = try PipelineFileLoader(environment: ["PASS": "from-env-8c1"]).load(
            text: Self.pipeline("    url: http://h/items\n    auth: { basic: { username: written-user, password: \"${PASS}\" } }"), path: "demo.yml")
        #expect(file.secrets.isSuperset(of: ["written-user", "from-env-8c1"]))
    }
}

