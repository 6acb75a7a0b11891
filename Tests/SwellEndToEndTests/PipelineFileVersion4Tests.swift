import Foundation
import Testing
@testable import SwellPipeline
import SwellContexts
import SwellPipelineTestSupport

/// Pipeline file reference, "Real networks (version 4)", as the file is read: the run's
/// `concurrency`, `hosts` budgets, a source's `rate_limit`, `max_wait`, `prefetch` and
/// `resume`, with their defaults; every rule fails naming file, line and column; the keys
/// need `version: 4`; `--concurrency` overrides the file's.
@Suite struct PipelineFileVersion4Tests {
    private func load(_ text: String) throws(PipelineFileError) -> PipelineFile {
        try PipelineFileLoader(environment: [:]).load(text: text, path: "v4.yml")
    }

    private func failure(_ text: String) -> PipelineFileError? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    /// The 1-based column where `token` first starts on `line` of `text`.
    private func column(of token: String, line: Int, in text: String) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count, let range = lines[line - 1].range(of: token) else { return nil }
        return lines[line - 1].distance(from: lines[line - 1].startIndex, to: range.lowerBound) + 1
    }

    /// A file of `version` whose one source (line 6) has `source` among its keys and whose
    /// top level ends with `top` (from line 7).
    static func file(version: Int = 4, top: String = "", source: String = "") -> String {
        """
        version: \(version)
        name: net
        entities:
          Item: { key: [id], attributes: { id: integer } }
        sources:
          - { name: s, entity: Item, url: "https://api.example.com/items"\(source.isEmpty ? "" : ", " + source) }
        \(top)
        """
    }

    @Test func aVersion4FileReadsEveryNetworkKey() throws {
        let pipeline = try load("""
        version: 4
        name: github
        concurrency: 8
        hosts:
          api.github.com:
            concurrency: 4
            rate_limit: { requests: 5000, per: 1h, burst: 100 }
          https://uploads.example.com:
            rate_limit: { requests: 10, per: 1s }
          http://127.0.0.1:8080: { concurrency: 2 }
        entities:
          Issue: { key: [id], attributes: { id: integer } }
        sources:
          - name: issues
            entity: Issue
            url: https://api.github.com/repos/${item}/issues?state=all
            for_each: [apple/swift]
            rate_limit: { requests: 10, per: 1s }
            max_wait: 15m
          - name: events
            entity: Issue
            url: https://api.example.com/events
            paginate: { offset: { limit: 100 } }
            rate_limit: { requests: 3, per: 500ms, burst: 2 }
            max_wait: 90
            prefetch: 4
            resume: false
        """)
        #expect(pipeline.version == 4)
        #expect(pipeline.concurrency == 8)
        #expect(pipeline.hosts == [
            HostBudget(key: HostKey(scheme: nil, host: "api.github.com"), concurrency: 4, rateLimit: RateLimit(requests: 5000, per: 3600, burst: 100)),
            HostBudget(key: HostKey(scheme: "https", host: "uploads.example.com"), rateLimit: RateLimit(requests: 10, per: 1)),
            HostBudget(key: HostKey(scheme: "http", host: "127.0.0.1", port: 8080), concurrency: 2),
        ])
        let issues = pipeline.sources[0]
        #expect(issues.name == "issues[apple/swift]")
        #expect(issues.rateLimit == RateLimit(requests: 10, per: 1, burst: 1))
        #expect(issues.maxWait == 900 && issues.prefetch == nil && issues.resume)
        let events = pipeline.sources[1]
        #expect(events.rateLimit == RateLimit(requests: 3, per: 0.5, burst: 2))
        #expect(events.maxWait == 90 && events.prefetch == 4 && !events.resume)
        #expect(events.prefetch(runConcurrency: 8) == 4 && issues.prefetch(runConcurrency: 8) == 8)
        #expect(pipeline.predicateNilMatching == .nsPredicate)
    }

    @Test func defaultsDifferOnlyInTheRunsConcurrency() throws {
        for version in 1...4 {
            let pipeline = try load(Self.file(version: version))
            #expect(pipeline.concurrency == (version == 4 ? 4 : 1), "version \(version)")
            #expect(pipeline.hosts.isEmpty)
            let source = pipeline.sources[0]
            #expect(source.rateLimit == nil && source.maxWait == 15 * 60 && source.prefetch == nil && source.resume, "version \(version)")
            #expect(source.prefetch(runConcurrency: pipeline.concurrency) == pipeline.concurrency)
        }
    }

    @Test(arguments: [("500ms", 0.5), ("30s", 30.0), ("15m", 900.0), ("1h", 3600.0), ("1.5m", 90.0), ("45", 45.0), ("0s", 0.0)])
    func maxWaitTakesDurations(written: String, seconds: Double) throws {
        #expect(try load(Self.file(source: "max_wait: \(written)")).sources[0].maxWait == seconds)
    }

    @Test func aBucketOfBurstOneSpacesItsRequestsEvenly() {
        let limit = RateLimit(requests: 20, per: 1)
        #expect(limit.burst == 1 && limit.tokensPerSecond == 20 && limit.secondsPerToken == 0.05)
        #expect(RateLimit(requests: 5000, per: 3600, burst: 100).tokensPerSecond == 5000.0 / 3600)
    }

    /// Each rule of "Validation" (point 6), with the line and column of what is wrong.
    @Test(arguments: [
        ("", "concurrency: 0", 7, "0", "concurrency must be between 1 and 256, not 0"),
        ("", "concurrency: 257", 7, "257", "concurrency must be between 1 and 256, not 257"),
        ("", "concurrency: many", 7, "many", "concurrency must be a whole number, not \"many\""),
        ("prefetch: 0", "", 6, "0 }", "prefetch of source s must be between 1 and 256, not 0"),
        ("prefetch: 300", "", 6, "300", "prefetch of source s must be between 1 and 256, not 300"),
        ("rate_limit: { per: 1s }", "", 6, "{ per", "rate_limit of source s needs 'requests'"),
        ("rate_limit: { requests: 5 }", "", 6, "{ requests", "rate_limit of source s needs 'per'"),
        ("rate_limit: { requests: 5, per: soon }", "", 6, "soon", "rate_limit.per of source s must be a duration (more than 0) such as 500ms, 30s, 15m or 1h, not \"soon\""),
        ("rate_limit: { requests: 5, per: 0s }", "", 6, "0s", "rate_limit.per of source s must be a duration (more than 0)"),
        ("rate_limit: { requests: 5, per: 1d }", "", 6, "1d", "rate_limit.per of source s must be a duration"),
        ("rate_limit: { requests: 0, per: 1s }", "", 6, "0, per", "rate_limit.requests of source s must be between 1 and"),
        ("rate_limit: { requests: 5, per: 1s, burst: 0 }", "", 6, "0 }", "rate_limit.burst of source s must be between 1 and"),
        ("rate_limit: { requests: 5, per: 1s, rate: 3 }", "", 6, "rate: 3", "unknown key 'rate' in rate_limit of source s"),
        ("rate_limit: 10", "", 6, "10", "rate_limit of source s must be a mapping, not \"10\""),
        ("max_wait: forever", "", 6, "forever", "max_wait of source s must be a duration (0 or more) such as 500ms, 30s, 15m or 1h, not \"forever\""),
        ("max_wait: -1s", "", 6, "-1s", "max_wait of source s must be a duration"),
        ("resume: maybe", "", 6, "maybe", "resume of source s must be true or false, not \"maybe\""),
        ("", "hosts: [api.github.com]", 7, "[", "hosts must be a mapping of host: { concurrency, rate_limit }, not a list"),
        ("", "hosts: { \"ftp://a.example\": { concurrency: 1 } }", 7, "\"ftp", "hosts key \"ftp://a.example\" must be scheme://host[:port]"),
        ("", "hosts: { \"https://a.example/v1\": { concurrency: 1 } }", 7, "\"https", "hosts key \"https://a.example/v1\" must be"),
        ("", "hosts: { \"a.example:8080\": { concurrency: 1 } }", 7, "\"a.", "hosts key \"a.example:8080\" must be"),
        ("", "hosts: { \"https://a.example:99999\": { concurrency: 1 } }", 7, "\"https", "hosts key \"https://a.example:99999\" must be"),
        ("", "hosts: { \"https://user@a.example\": { concurrency: 1 } }", 7, "\"https", "must be scheme://host[:port]"),
        ("", "hosts: { a..example: { concurrency: 1 } }", 7, "a..", "hosts key \"a..example\" must be"),
        ("", "hosts: { a.example: { concurrency: 0 } }", 7, "0 }", "hosts.a.example.concurrency must be between 1 and 256, not 0"),
        ("", "hosts: { a.example: {} }", 7, "{} }", "hosts.a.example needs concurrency or rate_limit"),
        ("", "hosts: { a.example: { speed: 2 } }", 7, "speed", "unknown key 'speed' in hosts.a.example"),
        ("", "hosts: { a.example: { rate_limit: { requests: 1 } } }", 7, "{ requests", "hosts.a.example.rate_limit needs 'per'"),
        ("", "hosts: { a.example: { rate_limit: { requests: 1, per: 1s, burst: 0 } } }", 7, "0 }", "hosts.a.example.rate_limit.burst must be between 1 and"),
        ("", "hosts: { \"https://A.example\": { concurrency: 1 }, \"https://a.example:443\": { concurrency: 2 } }", 7, "\"https://a.", "hosts key \"https://a.example:443\" names https://a.example again"),
    ] as [(String, String, Int, String, String)])
    func eachRuleNamesItsPlace(source: String, top: String, line: Int, at: String, message: String) throws {
        let text = Self.file(top: top, source: source)
        let error = try #require(failure(text))
        #expect(error.message.contains(message), "\(error)")
        #expect(error.path == "v4.yml")
        #expect(error.line == line, "\(error)")
        #expect(error.column == column(of: at, line: line, in: text), "\(error)")
        #expect(error.more.isEmpty, "\(error)")
    }

    @Test func everyProblemIsReportedAtOnce() throws {
        let text = Self.file(top: "concurrency: 0\nhosts: { \"ftp://x\": { concurrency: 1 } }", source: "prefetch: 0")
        let error = try #require(failure(text))
        #expect(error.all.map(\.line) == [6, 7, 8], "\(error)")
    }

    /// Anything of version 4 in an older file is an error naming the key and the version it needs.
    @Test(arguments: [1, 2, 3])
    func version4KeysInAnOlderFileNameTheVersion(version: Int) throws {
        let cases: [(source: String, top: String, line: Int, at: String, key: String)] = [
            ("", "concurrency: 2", 7, "2", "concurrency"),
            ("", "hosts: { a.example: { concurrency: 1 } }", 7, "{", "hosts"),
            ("rate_limit: { requests: 1, per: 1s }", "", 6, "{ requests", "rate_limit"),
            ("max_wait: 1m", "", 6, "1m", "max_wait"),
            ("prefetch: 2", "", 6, "2 }", "prefetch"),
            ("resume: false", "", 6, "false", "resume"),
        ]
        for rule in cases {
            let text = Self.file(version: version, top: rule.top, source: rule.source)
            let error = try #require(failure(text), "\(rule.key)")
            #expect(error.message == "\(rule.key) needs version: 4 (this file says version: \(version))", "\(error)")
            #expect(error.line == rule.line && error.column == column(of: rule.at, line: rule.line, in: text), "\(error)")
        }
    }

    @Test func laterVersionsAndKeysOfLaterIssuesStayUnknown() throws {
        let five = try #require(failure(Self.file(version: 5)))
        #expect(five.message.contains("version 5 is not known") && five.message.contains("or 4 (concurrency, rate limits, resume)"), "\(five)")
        let metrics = try #require(failure(Self.file(top: "metrics: { path: out/m.prom }")))
        #expect(metrics.message.contains("unknown key 'metrics'") && metrics.line == 7, "\(metrics)")
    }

    // MARK: Host keys

    @Test func hostKeysReadTheirTwoForms() {
        #expect(HostKey("API.GitHub.com") == HostKey(scheme: nil, host: "api.github.com"))
        #expect(HostKey("HTTPS://api.github.com")?.description == "https://api.github.com")
        #expect(HostKey("https://api.github.com:443") == HostKey("https://api.github.com"))
        #expect(HostKey("http://127.0.0.1:8080")?.port == 8080)
        #expect(HostKey("https://[::1]:8443")?.description == "https://[::1]:8443")
        for text in ["", "ftp://a.example", "https://", "https://a.example/", "https://a.example?x", "a.example:80", "https://a.example:0",
                     "https://a.example:x", "a example", "https://u@a.example", "a/b", ".a.example", "https://[::1", "https://[zz]"] {
            #expect(HostKey(text) == nil, "\(text)")
        }
    }

    @Test func aBareHostHoldsEverySchemeAndPortASchemeItsDefaultPort() {
        let bare = HostKey("api.github.com")!
        #expect(bare.matches(url: "https://api.github.com/repos/x") && bare.matches(url: "http://API.github.com:8080/x"))
        #expect(!bare.matches(url: "https://github.com/x") && !bare.matches(url: "https://api.github.com.evil.example/x"))
        #expect(!bare.matches(url: "fixtures/api.github.com.json"))
        let https = HostKey("https://api.github.com")!
        #expect(https.matches(url: "https://api.github.com/x") && https.matches(url: "https://api.github.com:443/x?y=1"))
        #expect(!https.matches(url: "http://api.github.com/x") && !https.matches(url: "https://api.github.com:8443/x"))
        let port = HostKey("http://127.0.0.1:8080")!
        #expect(port.matches(url: "http://127.0.0.1:8080/x") && port.matches(url: "http://user:pw@127.0.0.1:8080/x"))
        #expect(!port.matches(url: "http://127.0.0.1/x") && !port.matches(url: "http://127.0.0.1:8081/x") && !port.matches(url: "https://127.0.0.1:8080/x"))
        #expect(HostKey("https://[::1]:8443")!.matches(url: "https://[::1]:8443/x"))
    }

    @Test func theMostSpecificHostKeyHoldsARequest() throws {
        let pipeline = try load(Self.file(top: """
        hosts:
          api.example.com: { concurrency: 1 }
          https://api.example.com: { concurrency: 2 }
          https://api.example.com:8443: { concurrency: 3 }
        """))
        #expect(pipeline.hostBudget(for: "https://api.example.com:8443/items")?.concurrency == 3)
        #expect(pipeline.hostBudget(for: "https://api.example.com/items")?.concurrency == 2)
        #expect(pipeline.hostBudget(for: "http://api.example.com/items")?.concurrency == 1)
        #expect(pipeline.hostBudget(for: "https://other.example.com/items") == nil)
    }

    // MARK: --concurrency

    @Test func theFlagOverridesTheFilesConcurrency() throws {
        let four = try load(Self.file())
        #expect(RunOptions().concurrency(for: four) == 4)
        #expect(RunOptions(concurrency: 16).concurrency(for: four) == 16)
        #expect(RunOptions(concurrency: 2).concurrency(for: try load(Self.file(version: 3))) == 2)
        #expect(RunOptions().concurrency(for: try load(Self.file(version: 3))) == 1)
    }

    static let runnable = """
        version: 4
        name: net
        concurrency: 6
        hosts:
          api.example.com: { concurrency: 2, rate_limit: { requests: 10, per: 1s } }
        entities:
          Item: { key: [id], attributes: { id: integer } }
        sources:
          - { name: items, entity: Item, url: items.json, rate_limit: { requests: 100, per: 1s }, max_wait: 1m, prefetch: 2, resume: true }
        exports:
          - { name: items, entity: Item, path: out/items.csv, columns: [id] }
        """

    @Test func validateAcceptsAVersion4File() throws {
        let workspace = try Workspace()
        try workspace.write("net.yml", Self.runnable)
        let validate = try workspace.run("validate", "net.yml")
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout.contains("net.yml: ok"))
    }

    @Test func concurrencyReachesTheRunAndIsChecked() throws {
        let workspace = try Workspace()
        try workspace.write("net.yml", Self.runnable)
        try workspace.write("items.json", #"[{"id": 1}, {"id": 2}]"#)
        let given = try workspace.run("run", "net.yml", "--concurrency", "12", "--log-level", "debug")
        #expect(given.status == 0, "\(given.stderr)")
        #expect(given.stderr.contains("concurrency=12"), "\(given.stderr)")
        #expect(try workspace.read("out/items.csv") == "id\n1\n2\n")
        let file = try workspace.run("import", "net.yml", "--log-level", "debug")
        #expect(file.status == 0 && file.stderr.contains("concurrency=6"), "\(file.stderr)")
        for bad in ["0", "257", "many"] {
            for command in ["run", "import"] {
                let refused = try workspace.run(command, "net.yml", "--concurrency", bad)
                #expect(refused.status == 64, "\(command) --concurrency \(bad): \(refused.stderr)")
            }
        }
        let export = try workspace.run("export", "net.yml", "--concurrency", "2")
        #expect(export.status == 64 && export.stderr.contains("only run and import"), "\(export.stderr)")
    }
}
