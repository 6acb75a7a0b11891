import Foundation
import Yams

/// Version 4 of the pipeline file (Pipeline file reference, "Real networks"): the run's
/// `concurrency`, budgets per host (`hosts`), and a source's `rate_limit`, `max_wait`,
/// `prefetch` and `resume`. Each rule's error names its place.
extension PipelineFileReader {
    /// The top-level keys that need version 4.
    static let version4TopKeys: Set<String> = ["concurrency", "hosts"]
    /// The source keys that need version 4.
    static let version4SourceKeys: Set<String> = ["rate_limit", "max_wait", "prefetch", "resume"]

    /// Refuses a version-4 feature in an earlier file.
    func requireVersion4(_ node: Node, _ what: String) throws(PipelineFileError) {
        guard version >= 4 else { throw error(node, "\(what) needs version: 4 (this file says version: \(version))") }
    }

    /// The top-level `concurrency`: 1…256; default 4 in a version-4 file, 1 in older ones.
    func readConcurrency(_ node: Node?) throws(PipelineFileError) -> Int {
        guard let node else { return version >= 4 ? PipelineFile.defaultConcurrency : 1 }
        try requireVersion4(node, "concurrency")
        return try integer(node, "concurrency", in: PipelineFile.concurrencyRange)
    }

    /// `hosts: { KEY: { concurrency, rate_limit } }`, in file order; each key
    /// `scheme://host[:port]` or a bare host (`HostKey`), once.
    func readHosts(_ node: Node?) throws(PipelineFileError) -> [HostBudget] {
        guard let node else { return [] }
        try requireVersion4(node, "hosts")
        guard case .mapping(let mapping) = node else {
            throw error(node, "hosts must be a mapping of host: { concurrency, rate_limit }, not \(written(node))")
        }
        var budgets: [HostBudget] = []
        for (keyNode, value) in mapping {
            let text = try string(keyNode, "a key of hosts")
            guard let key = HostKey(text) else {
                throw error(keyNode, "hosts key \"\(text)\" must be scheme://host[:port] (http or https, as in the sources' URLs) or a bare host such as api.github.com")
            }
            guard !budgets.contains(where: { $0.key == key }) else { throw error(keyNode, "hosts key \"\(text)\" names \(key) again") }
            let what = "hosts.\(text)"
            let keys = try keyedMapping(value, what, allowed: ["concurrency", "rate_limit"])
            guard !keys.isEmpty else { throw error(value, "\(what) needs concurrency or rate_limit") }
            var budget = HostBudget(key: key)
            budget.concurrency = try keys["concurrency"].map { node throws(PipelineFileError) in
                try integer(node, "\(what).concurrency", in: PipelineFile.concurrencyRange)
            }
            budget.rateLimit = try keys["rate_limit"].map { node throws(PipelineFileError) in try readRateLimit(node, path: "\(what).rate_limit", of: nil) }
            budgets.append(budget)
        }
        return budgets
    }

    /// `rate_limit: { requests: N, per: DURATION, burst: N }`: `requests` and `per` required.
    /// `path` is the key's place (`rate_limit`, `hosts.KEY.rate_limit`), `owner` what has it
    /// (`source s`), for messages: "rate_limit.per of source s …".
    func readRateLimit(_ node: Node, path: String, of owner: String?) throws(PipelineFileError) -> RateLimit {
        func what(_ field: String?) -> String { [path, field].compactMap { $0 }.joined(separator: ".") + (owner.map { " of \($0)" } ?? "") }
        let keys = try keyedMapping(node, what(nil), allowed: ["requests", "per", "burst"], required: ["requests", "per"])
        let requests = try integer(keys["requests"]!, what("requests"), in: 1...1_000_000_000)
        let per = try duration(keys["per"]!, what("per"), allowingZero: false)
        let burst = try keys["burst"].map { node throws(PipelineFileError) in try integer(node, what("burst"), in: 1...1_000_000_000) } ?? 1
        return RateLimit(requests: requests, per: per, burst: burst)
    }

    /// A source's `rate_limit`, `max_wait`, `prefetch` and `resume`.
    func readNetworkKeys(_ keys: [String: Node], into source: inout SourceSpec) throws(PipelineFileError) {
        for key in Self.version4SourceKeys.sorted() {
            if let node = keys[key] { try requireVersion4(node, key) }
        }
        let name = source.name
        if let node = keys["rate_limit"] { source.rateLimit = try readRateLimit(node, path: "rate_limit", of: "source \(name)") }
        if let node = keys["max_wait"] { source.maxWait = try duration(node, "max_wait of source \(name)", allowingZero: true) }
        if let node = keys["prefetch"] { source.prefetch = try integer(node, "prefetch of source \(name)", in: PipelineFile.concurrencyRange) }
        if let node = keys["resume"] { source.resume = try boolean(node, "resume of source \(name)") }
    }

    /// A duration in seconds: a number followed by `ms`, `s`, `m` or `h` (`500ms`, `1s`,
    /// `1.5m`, `1h`), or a plain number of seconds; more than 0 unless `allowingZero`.
    func duration(_ node: Node, _ what: String, allowingZero: Bool) throws(PipelineFileError) -> Double {
        let smallest = allowingZero ? "0 or more" : "more than 0"
        let problem = "\(what) must be a duration (\(smallest)) such as 500ms, 30s, 15m or 1h, not \(written(node))"
        guard case .scalar(let scalar) = node else { throw error(node, problem) }
        guard let seconds = Self.seconds(of: scalar.string), allowingZero || seconds > 0 else { throw error(node, problem) }
        return seconds
    }

    /// The seconds `text` says (`500ms`, `30s`, `15m`, `1h`, `30`), or nil.
    static func seconds(of text: String) -> Double? {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        if let unit = units.first(where: { text.hasSuffix($0.suffix) }) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.seconds
        }
        // Digits with at most one decimal point: no sign, exponent, `inf` or `nan`.
        guard !number.isEmpty, number.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }),
              number.filter({ $0 == "." }).count <= 1, number.first != ".", number.last != ".",
              let value = Double(number), value.isFinite else { return nil }
        return value * scale
    }
}
