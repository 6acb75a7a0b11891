import Foundation
@testable import SwellPipeline
import SwellJSON
import SwellLocks
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Values from the API are untrusted": a `for_each` item — from the store, a list or
/// a file — fills a URL encoded for its part, a body as one JSON string, a rejects path as one
/// file name; an item with a dot segment (also encoded) or a control character is a bad record
/// of its item (`on_error` applies, the other items run); control characters never reach the
/// log raw.
@Suite struct HostileItemTests {
    /// Items a request may carry, each with the exact request target it must make (path and
    /// query, as the server reads them).
    static let usable: [(item: String, target: String)] = [
        ("o/a", "/repos/o/a/issues?state=all&repo=o%2Fa"),
        ("x?state=closed&token=1", "/repos/x%3Fstate%3Dclosed%26token%3D1/issues?state=all&repo=x%3Fstate%3Dclosed%26token%3D1"),
        ("a#b", "/repos/a%23b/issues?state=all&repo=a%23b"),
        ("50%", "/repos/50%25/issues?state=all&repo=50%25"),
        ("a b", "/repos/a%20b/issues?state=all&repo=a%20b"),
        ("a+b=c", "/repos/a%2Bb%3Dc/issues?state=all&repo=a%2Bb%3Dc"),
        ("café", "/repos/caf%C3%A9/issues?state=all&repo=caf%C3%A9"),
    ]

    /// Items that must not be sent at all, with the file name their rejects file gets.
    static let refused: [(item: String, file: String)] = [
        ("../../../etc/passwd", "..%2F..%2F..%2Fetc%2Fpasswd.ndjson"),
        ("..", "%2E%2E.ndjson"),
        (".", "%2E.ndjson"),
        ("%2e%2e", "%252e%252e.ndjson"),
        ("o/%2E%2E/admin", "o%2F%252E%252E%2Fadmin.ndjson"),
        ("c\r\nX-Forged: 1", "c%0D%0AX-Forged: 1.ndjson"),
        ("e\u{1B}[31mred", "e%1B[31mred.ndjson"),
        ("tab\there", "tab%09here.ndjson"),
    ]

    static let token = "s3cret-api-key"

    /// Repositories from the store feed a source that puts the item in the path, the query, a
    /// header, an auth value, the body and the rejects path.
    static func pipeline(onError: String) -> String {
        """
        version: 3
        name: hostile
        entities:
          Repo:
            key: [full_name]
            attributes: { full_name: string }
          Issue:
            key: [id]
            attributes: { id: integer, repo: string }
        sources:
          - name: repos
            entity: Repo
            url: ${BASE}/repos
          - name: issues
            entity: Issue
            url: ${BASE}/repos/${item}/issues?state=all&repo=${item}
            method: POST
            headers: { X-Repo: "${item}" }
            auth: { api_key: { name: X-Api-Key, value: "${TOKEN}:${item}" } }
            body: { repo: "${item}", nested: { name: "${item}", list: ["${item}"] } }
            for_each: { entity: Repo, value: full_name }
            on_error: \(onError)
            rejects: "out/rejects/${item}.ndjson"
        exports:
          - { name: issues, entity: Issue, path: out/issues.csv, columns: [id, repo], sort: [id] }
        """
    }

    /// A request as the server saw it.
    struct Seen: Sendable {
        var target: String
        var key: String?
        var repoHeader: String?
        var body: [UInt8]
    }

    /// `/repos` lists every item; `/repos/ITEM/issues` answers the usable items with one issue
    /// each (its id the item's place in `usable`) and anything else with 404.
    static func server(_ seen: LockedValue<[Seen]>) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request in
            seen.withLock { $0.append(Seen(target: request.path, key: request.headers["x-api-key"], repoHeader: request.headers["x-repo"], body: request.body)) }
            if request.path == "/repos" {
                let repos = (usable.map(\.item) + refused.map(\.item)).map { ["full_name": $0] }
                let data = try! JSONSerialization.data(withJSONObject: repos)
                return .json(String(decoding: data, as: UTF8.self))
            }
            guard let index = usable.firstIndex(where: { $0.target == request.path }) else { return .json("{}", status: 404) }
            let record = try! JSONSerialization.data(withJSONObject: [["id": index + 1, "repo": usable[index].item]])
            return .json(String(decoding: record, as: UTF8.self))
        }
    }

    /// No raw control character a value brought reaches stderr; the forged header stays on its line.
    static func expectCleanLog(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!stderr.contains("\r") && !stderr.contains("\u{1B}") && !stderr.contains("\t") && !stderr.contains("\0"),
                "\(stderr.debugDescription)", sourceLocation: sourceLocation)
        #expect(!stderr.split(separator: "\n").contains { $0.hasPrefix("X-Forged") }, sourceLocation: sourceLocation)
        #expect(!stderr.contains(token), sourceLocation: sourceLocation)
    }

    @Test func hostileStoredValuesAreEncodedOrSkippedAndTheOtherItemsRun() throws {
        let seen = LockedValue<[Seen]>([])
        let server = try Self.server(seen)
        let workspace = try Workspace()
        try workspace.write("hostile.yml", Self.pipeline(onError: "skip"))
        let run = try workspace.run("run", "hostile.yml", "--report", "out/report.json", environment: ["BASE": server.baseURL, "TOKEN": Self.token])
        #expect(run.status == 0, "\(run.stderr)")
        let requests = seen.withLock { $0 }
        // Exactly the usable items' targets, each once: nothing left its path, no query was replaced.
        #expect(requests.map(\.target).sorted() == (["/repos"] + Self.usable.map(\.target)).sorted(), "\(requests.map(\.target))")
        #expect(!requests.contains { $0.target.contains("etc") || $0.target.contains("admin") || $0.target.contains("%2E") || $0.target.contains("%2e") })
        for request in requests where request.target != "/repos" {
            let item = try #require(Self.usable.first { $0.target == request.target }?.item)
            // The credential went only to the intended paths, the item as it is in header and auth value.
            #expect(request.key == "\(Self.token):\(item)")
            #expect(request.repoHeader == item)
            // The body keeps its shape: the item is one string, three times.
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            #expect(body.keys.sorted() == ["nested", "repo"] && body["repo"] as? String == item, "\(body)")
            let nested = body["nested"] as? [String: Any]
            #expect(nested?["name"] as? String == item && nested?["list"] as? [String] == [item])
        }
        #expect(requests.first { $0.target == "/repos" }?.key == nil)
        // The other items' rows are there.
        let csv = try workspace.read("out/issues.csv")
        #expect(csv.split(separator: "\n").count == 1 + Self.usable.count, "\(csv)")
        #expect(csv.contains("2,x?state=closed&token=1"))
        // Each refused item has one line in its own rejects file, inside out/rejects and nowhere else.
        let written = try Self.files(under: workspace.url).filter { $0.hasSuffix(".ndjson") }
        #expect(written.sorted() == Self.refused.map { "out/rejects/\($0.file)" }.sorted(), "\(written)")
        for refused in Self.refused {
            let text = try workspace.read("out/rejects/\(refused.file)")
            let lines = text.split(separator: "\n")
            #expect(lines.count == 1)
            let line = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            #expect((line["record"] as? [String: Any])?["item"] as? String == refused.item, "\(line)")
            #expect((line["error"] as? String)?.contains("cannot be used") == true)
            #expect(line["index"] as? Int != nil && (line["source"] as? String)?.hasPrefix("issues[") == true)
        }
        // One warning per refused item, the value shown escaped; nothing raw.
        #expect(run.stderr.components(separatedBy: "for_each item skipped").count - 1 == Self.refused.count, "\(run.stderr)")
        #expect(run.stderr.contains(#"c\r\nX-Forged: 1"#) && run.stderr.contains(#"e\u{1B}[31mred"#), "\(run.stderr)")
        Self.expectCleanLog(run.stderr)
        let names = (try workspace.report()["sources"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(Set(names) == Set(["repos"] + Self.usable.map { "issues[\($0.item)]" }), "\(names)")
    }

    @Test func withOnErrorFailAHostileStoredValueFailsTheRunBeforeAnyItemIsSent() throws {
        let seen = LockedValue<[Seen]>([])
        let server = try Self.server(seen)
        let workspace = try Workspace()
        try workspace.write("hostile.yml", Self.pipeline(onError: "fail"))
        let run = try workspace.run("run", "hostile.yml", "--report", "out/report.json", environment: ["BASE": server.baseURL, "TOKEN": Self.token])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(seen.withLock { $0.map(\.target) } == ["/repos"])
        #expect(run.stderr.contains("source issues: for_each item") && run.stderr.contains("cannot be used"), "\(run.stderr)")
        let error = try workspace.report()["error"] as? String
        #expect(error?.contains("for_each item") == true, "\(String(describing: error))")
        Self.expectCleanLog(run.stderr)
    }

    /// Items of a list: the same rules, the name and default rejects file filled safely.
    static func listPipeline(_ server: LoopbackHTTPServer, items: String, onError: String) -> String {
        """
        version: 3
        name: hostile
        entities:
          Issue:
            key: [id]
            attributes: { id: integer, repo: string }
        sources:
          - name: "issues-${item}"
            entity: Issue
            url: "\(server.baseURL)/repos/${item}/issues?state=all&repo=${item}"
            for_each: \(items)
            on_error: \(onError)
        """
    }

    @Test func hostileListItemsAreSkippedIntoTheirOwnRejectsFile() throws {
        let seen = LockedValue<[Seen]>([])
        let server = try Self.server(seen)
        let workspace = try Workspace()
        try workspace.write("list.yml", Self.listPipeline(server, items: #"["o/a", "..", "a b", "c\r\nX-Forged: 1", "n\0ul", "a/./b"]"#, onError: "skip"))
        let validate = try workspace.run("validate", "list.yml")
        #expect(validate.status == 0, "\(validate.stderr)")
        let run = try workspace.run("import", "list.yml", "--report", "out/report.json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(seen.withLock { $0.map(\.target) }.sorted() == [Self.usable[0].target, Self.usable[4].target].sorted())
        // The default rejects path holds the name's `${item}`: each item as one file name.
        let written = try Self.files(under: workspace.url).filter { $0.hasSuffix(".ndjson") }.sorted()
        #expect(written == ["rejects/hostile-issues-a%2F.%2Fb.ndjson",
                            "rejects/hostile-issues-%2E%2E.ndjson",
                            "rejects/hostile-issues-c%0D%0AX-Forged: 1.ndjson",
                            "rejects/hostile-issues-n%00ul.ndjson"].sorted(), "\(written)")
        let names = (try workspace.report()["sources"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(names == ["issues-o/a", "issues-a b"])
        Self.expectCleanLog(run.stderr)
        #expect(run.stderr.contains(#"n\0ul"#))
    }

    @Test func aHostileListItemFailsTheRunWhenItsTurnComes() throws {
        let seen = LockedValue<[Seen]>([])
        let server = try Self.server(seen)
        let workspace = try Workspace()
        try workspace.write("list.yml", Self.listPipeline(server, items: #"["o/a", "o/../../../etc/passwd", "a b"]"#, onError: "fail"))
        let run = try workspace.run("import", "list.yml")
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains(#"for_each item 1 "o/../../../etc/passwd" cannot be used"#), "\(run.stderr)")
        #expect(!seen.withLock { $0 }.contains { $0.target.contains("etc") })
        #expect(!seen.withLock { $0 }.contains { $0.target == Self.usable[4].target }, "the run stopped at the bad item")
    }

    /// Every file below `root`, relative to it.
    static func files(under root: URL) throws -> [String] {
        let base = root.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(atPath: base)
        var files: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(relative)
            }
        }
        return files.filter { !$0.hasPrefix("fixtures/") && !$0.hasPrefix("pipelines/") }
    }

    // MARK: Each place, directly

    /// A source as the file writes it, `${item}` not filled yet (a `for_each` from an entity
    /// is expanded when the run reaches it).
    private func template(_ extra: String) throws -> SourceSpec {
        let text = """
            version: 3
            name: places
            entities:
              Item: { key: [id], attributes: { id: integer } }
            sources:
              - name: items
                entity: Item
                for_each: { entity: Item, value: id }
            \(extra)
            """
        return try PipelineFileLoader(environment: [:]).load(text: text, path: "places.yml").sources[0]
    }

    @Test func theURLsPartsTakeTheItemEncodedForThem() throws {
        let spec = try template("    url: \"https://${item}.example.test/v1/${item}/x?q=${item}#${item}\"")
        #expect(spec.expanded(item: "tenant-1", index: 0, pipeline: "p").url == "https://tenant-1.example.test/v1/tenant-1/x?q=tenant-1#tenant-1")
        let hostile = spec.expanded(item: "evil.example/#", index: 3, pipeline: "p")
        #expect(hostile.itemRejection?.index == 3 && hostile.itemRejection?.reason.contains("another host") == true)
        #expect(hostile.url.contains("${item}"), "a refused item fills nothing")
        let path = try template("    url: \"https://api.example.test/repos/${item}/issues?repo=${item}\"")
        #expect(path.expanded(item: "o/my repo?", index: 0, pipeline: "p").url == "https://api.example.test/repos/o/my%20repo%3F/issues?repo=o%2Fmy%20repo%3F")
        let file = try template("    url: \"fixtures/${item}.json\"")
        #expect(file.expanded(item: "a b#1", index: 0, pipeline: "p").url == "fixtures/a b#1.json", "a file path is not a URL")
    }

    @Test func anOAuthTokenURLTakesTheItemAsAURL() throws {
        let spec = try template("""
                url: "https://api.example.test/items"
                auth: { oauth2_client_credentials: { token_url: "https://auth.example.test/${item}/token", client_id: "id-${item}", client_secret: s } }
            """)
        guard case .oauth2(let grant)? = spec.expanded(item: "t 1", index: 0, pipeline: "p").auth else { Issue.record("no grant"); return }
        #expect(grant.tokenURL == "https://auth.example.test/t%201/token" && grant.clientID == "id-t 1")
    }

    @Test func aBodyKeepsItsShape() throws {
        let spec = try template("""
                url: "https://api.example.test/items"
                method: POST
                body: { repo: "${item}", n: 1 }
            """)
        let item = #"x", "admin": true, "y": {"z"#
        let body = try #require(spec.expanded(item: item, index: 0, pipeline: "p").body)
        #expect(body.jsonText == #"{"repo":"x\", \"admin\": true, \"y\": {\"z","n":1}"#)
    }

    @Test func theRejectsPathTakesTheItemAsOneFileName() throws {
        let spec = try template("""
                url: "https://api.example.test/items"
                rejects: "out/rejects/${item}.ndjson"
            """)
        #expect(spec.expanded(item: "o/a", index: 0, pipeline: "p").rejects == "out/rejects/o%2Fa.ndjson")
        #expect(spec.expanded(item: "/etc/cron.d/x", index: 0, pipeline: "p").rejects == "out/rejects/%2Fetc%2Fcron.d%2Fx.ndjson")
        #expect(spec.expanded(item: "..", index: 0, pipeline: "p").rejects == "out/rejects/%2E%2E.ndjson")
        let plain = try template("    url: \"https://api.example.test/items\"")
        #expect(plain.expanded(item: "o/a", index: 0, pipeline: "p").rejects == "rejects/p-items[o%2Fa].ndjson")
    }

    @Test(arguments: ["", "..", ".", "a/..", "../x", "a\\..\\b", "%2e%2e", "%2E", "a/%2e%2E/b", "%252e%252e", "..%2fx",
                      "a\rb", "a\nb", "a\0b", "a\u{1B}b", "a\u{7F}b", "a\u{85}b", "a\u{2028}b"])
    func anItemThatCannotBeUsedSaysWhy(item: String) {
        #expect(ForEachItem.problem(with: item) != nil, "\(item.debugDescription)")
    }

    @Test(arguments: ["o/a", "...", "a..b", ".hidden", "x.", "50%", "a b", "a?b#c", "café", "2024-05-01T00:00:00Z", "a%2fb"])
    func anOrdinaryItemIsUsable(item: String) {
        #expect(ForEachItem.problem(with: item) == nil, "\(item)")
    }

    // MARK: Logs

    @Test func controlCharactersAreWrittenVisibly() {
        #expect(VisibleText.escaping("a\r\nb\tc\0d\u{1B}[31m\u{7F}\u{9B}\u{2028}") == #"a\r\nb\tc\0d\u{1B}[31m\u{7F}\u{9B}\u{2028}"#)
        #expect(VisibleText.escaping("plain ünïcode") == "plain ünïcode")
        #expect(VisibleText.escapingLine("one\rtwo\r\n") == "one\\rtwo\\r\n")
        let written = LockedValue("")
        var stream = StandardErrorLogStream(lines: StandardErrorLines { text in written.withLock { $0 += text } })
        stream.write("2024-01-01 warning swell : item=c\r\nX-Forged: 1 [SwellPipeline] skipped\n")
        #expect(written.withLock { $0 } == "2024-01-01 warning swell : item=c\\r\\nX-Forged: 1 [SwellPipeline] skipped\n")
    }
}
