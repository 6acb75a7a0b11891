import Foundation

/// `Tests/servers/latency_server.py`, started for a test: a paged JSON API on 127.0.0.1 that
/// answers each request after a set latency, threaded (requests in flight at once overlap),
/// with faults by script and a record of every request (`/_stats`). Its docstring is the
/// reference for the endpoints and the fault rules.
///
/// Endpoints (also under `/items/<item>/` for a `for_each` item's data): `/offset`
/// (`offset`, `limit`; records under `data`, `meta.total`), `/pages` (`page`; an array),
/// `/link` (the array with a GitHub-style `Link` header), `/cursor` (`data`, `next_cursor`),
/// `/next` (`data`, `next`). Stops with the value (or at `stop()`).
public final class LatencyServer: Sendable {
    /// How the server is started.
    public struct Options: Sendable {
        /// Seconds each request waits before it is answered.
        public var delay: Double = 0
        /// Up to this many seconds more, the same for the same path and query on every run.
        public var delayJitter: Double = 0
        /// Records in a page (and the default `limit` and `per_page`).
        public var recordsPerPage = 10
        /// Pages in each source (the single one and each item's).
        public var pages = 10
        /// The `for_each` items served under `/items/<item>/` (404 for others).
        public var items: [String] = []
        /// Fault rules in effect from the start (``setFaults(_:)`` replaces them).
        public var faults: [FaultRule] = []

        /// Options with the defaults above changed where given.
        public init(delay: Double = 0, delayJitter: Double = 0, recordsPerPage: Int = 10, pages: Int = 10,
                    items: [String] = [], faults: [FaultRule] = []) {
            self.delay = delay
            self.delayJitter = delayJitter
            self.recordsPerPage = recordsPerPage
            self.pages = pages
            self.items = items
            self.faults = faults
        }

        var arguments: [String] {
            var arguments = ["--delay", String(delay), "--delay-jitter", String(delayJitter),
                             "--records-per-page", String(recordsPerPage), "--pages", String(pages)]
            if !items.isEmpty { arguments += ["--items", items.joined(separator: ",")] }
            return arguments
        }
    }

    /// The running script.
    public let script: ScriptServer
    /// The options it was started with.
    public let options: Options
    private let http = TestHTTP()

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { script.baseURL }
    /// The port it listens on.
    public var port: Int { script.port }
    /// Records in each source: pages × records per page.
    public var recordsPerSource: Int { options.pages * options.recordsPerPage }

    /// Starts the server and waits until it listens.
    public init(_ options: Options = Options()) throws {
        self.options = options
        var arguments = options.arguments
        var faultFile: URL? = nil
        if !options.faults.isEmpty {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("swell-faults-\(UUID().uuidString).json")
            try JSONEncoder().encode(options.faults).write(to: file)
            arguments += ["--fault-script", file.path]
            faultFile = file
        }
        defer { if let faultFile { try? FileManager.default.removeItem(at: faultFile) } }
        script = try ScriptServer(script: "latency_server.py", arguments: arguments)
    }

    /// The URL of `pathAndQuery` (`/items/a/offset?limit=5`) on this server.
    public func url(_ pathAndQuery: String) -> String { baseURL + pathAndQuery }

    /// One request to the server, answered with any status.
    public func get(_ pathAndQuery: String, headers: [String: String] = [:]) throws -> TestHTTPResponse {
        try http.send("GET", url(pathAndQuery), headers: headers)
    }

    /// Every request seen since the start (or the last ``reset()``).
    public func stats() throws -> LatencyServerStats {
        try http.decode(LatencyServerStats.self, "GET", url("/_stats"))
    }

    /// Replaces the fault rules (their counts start again); `[]` clears them.
    public func setFaults(_ rules: [FaultRule]) throws {
        _ = try http.decode(Acknowledgement.self, "POST", url("/_faults"), body: JSONEncoder().encode(rules))
    }

    /// Forgets the requests seen and the most in flight (the fault rules stay).
    public func reset() throws {
        _ = try http.decode(Acknowledgement.self, "POST", url("/_reset"))
    }

    /// Lets every request held by a `hold` rule go.
    public func release() throws {
        _ = try http.decode(Acknowledgement.self, "POST", url("/_release"))
    }

    /// Waits (in the server, no polling) until `requests` requests have arrived since the
    /// last reset and `held` are held; false when `timeout` seconds passed first.
    public func wait(requests: Int, held: Int = 0, timeout: Double = 30) throws -> Bool {
        let answer = try http.decode(WaitAnswer.self, "GET", url("/_wait?requests=\(requests)&held=\(held)&timeout=\(timeout)"),
                                     timeout: timeout + 30)
        return answer.ok
    }

    /// Stops the server.
    public func stop() { script.stop() }

    /// `{"ok": true}`.
    private struct Acknowledgement: Decodable { let ok: Bool }
    /// `/_wait`'s answer.
    private struct WaitAnswer: Decodable { let ok: Bool }
}
