import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Issue 5's faulty server, end to end: page 1 is fine, page 2 fails in one
/// way. Within `retries` the run succeeds; beyond, it exits 69 naming the URL
/// and the last error, the report says failed, page 1's rows stay saved and a
/// `replace` source deletes nothing.
@Suite struct FaultyServerTests {
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case serverError, unavailable, tooManyRequests, resetMidBody, truncatedBody, stall, htmlPage, redirectLoop, tooLarge

        var testDescription: String { rawValue }

        /// Whether another attempt may get the page (the others fail at once).
        var isRetryable: Bool { self != .redirectLoop && self != .tooLarge }

        /// What the error names, besides the URL.
        var words: String? {
            switch self {
            case .serverError: "500"
            case .unavailable: "503"
            case .tooManyRequests: "429"
            case .htmlPage: "HTML page"
            case .redirectLoop: "redirect"
            case .tooLarge: "larger than the limit"
            case .stall: "timed out"
            case .resetMidBody, .truncatedBody: nil
            }
        }

        /// The pipeline keys the case needs.
        var sourceExtra: String {
            switch self {
            case .stall: "    timeout: 1\n"
            case .tooLarge: "    max_bytes: 2000\n"
            default: ""
            }
        }

        func response(for page: [UInt8]) -> LoopbackHTTPServer.Response {
            let json = [("Content-Type", "application/json")]
            return switch self {
            case .serverError: .json("oops", status: 500)
            case .unavailable: .json("down", status: 503, headers: [("Retry-After", "0")])
            case .tooManyRequests: .json("slow down", status: 429, headers: [("Retry-After", "0")])
            case .resetMidBody: LoopbackHTTPServer.Response(status: 200, headers: json, body: page, fault: .resetAfter(bytes: 20))
            case .truncatedBody: LoopbackHTTPServer.Response(status: 200, headers: json, body: page, fault: .truncate(declaredLength: page.count + 500))
            case .stall: LoopbackHTTPServer.Response(status: 200, headers: json, body: page, fault: .stall)
            case .htmlPage: LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                                                        body: Array("<html><body><h1>502 Bad Gateway</h1></body></html>".utf8))
            case .redirectLoop: LoopbackHTTPServer.Response(status: 302, headers: [("Location", "/p2")])
            case .tooLarge: .json(EndToEndTests.page(4...200))
            }
        }
    }

    /// Serves page 1 (ids 1–3, next p2) and page 2 (ids 4–6), failing page 2's first `failures` requests.
    private func server(_ fault: Fault, failures: Int) throws -> LoopbackHTTPServer {
        let served = RequestCounter()
        let page2 = Array(EndToEndTests.page(4...6).utf8)
        return try LoopbackHTTPServer { request in
            if request.path == "/p1" { return .json(EndToEndTests.page(1...3, next: "p2")) }
            return served.next() <= failures ? fault.response(for: page2)
                : LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")], body: page2)
        }
    }

    @Test(arguments: Fault.allCases.filter(\.isRetryable))
    func aFaultWithinRetriesStillSucceeds(_ fault: Fault) throws {
        let server = try server(fault, failures: 2)
        defer { server.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(server.baseURL)/p1", sourceExtra: "    paginate: { next: next }\n" + fault.sourceExtra))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(source["retries"] as? Int == 2)
        #expect(try workspace.read("out/items.csv").split(separator: "\n").count == 7)
    }

    @Test(arguments: Fault.allCases)
    func aFaultBeyondRetriesExits69AndLosesAndDeletesNothing(_ fault: Fault) throws {
        let server = try server(fault, failures: .max)
        defer { server.stop() }
        let workspace = try Workspace()
        // Rows 100 and 101 are in the store already; the replace source's pages do not bring them.
        try workspace.write("data/earlier.json", EndToEndTests.page(100...101))
        try workspace.write("earlier.yml", EndToEndTests.pipeline(url: "data/earlier.json"))
        #expect(try workspace.run("import", "earlier.yml").status == 0)
        try workspace.write("items.yml", EndToEndTests.pipeline(
            url: "\(server.baseURL)/p1", sourceExtra: "    paginate: { next: next }\n    mode: replace\n" + fault.sourceExtra))
        let outcome = try workspace.run("import", "items.yml", "--report", "out/report.json", "--progress", "always")
        #expect(outcome.status == 69, "\(outcome.stderr)")
        // The progress line and the report say what happened: failed, after its retries.
        #expect(outcome.stderr.contains("items: ") && outcome.stderr.contains("failed after") && !outcome.stderr.contains("done in"),
                "\(outcome.stderr)")
        #expect(outcome.stderr.contains("\(server.baseURL)/p2"), "\(outcome.stderr)")
        if let words = fault.words { #expect(outcome.stderr.contains(words), "\(outcome.stderr)") }
        let report = try workspace.report()
        #expect(report["status"] as? String == "failed")
        #expect((report["error"] as? String)?.contains("/p2") == true)
        let attempts = server.requests.filter { $0.path == "/p2" }.count
        #expect(fault == .redirectLoop || attempts == (fault.isRetryable ? 3 : 1))
        let source = (report["sources"] as? [[String: Any]])?.first ?? [:]
        #expect(fault == .redirectLoop || source["retries"] as? Int == attempts - 1, "\(source)")
        // Page 1's rows were saved and nothing was deleted.
        #expect(try workspace.run("export", "items.yml").status == 0)
        let ids = try workspace.read("out/items.csv").split(separator: "\n").dropFirst().map { $0.prefix { $0 != "," } }
        #expect(ids == ["1", "2", "3", "100", "101"])
    }
}

/// Counts requests across the server's threads.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
private final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { count += 1; return count } }
}
