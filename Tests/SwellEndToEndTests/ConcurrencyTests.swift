import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Real networks", rule 1: `for_each` items side by side and offset/page-number pages
/// requested ahead, up to the run's `concurrency` and each host's cap, with the result of a
/// sequential run — the store, the exports byte for byte and the report's counts equal those
/// of `concurrency: 1`. Files of versions 1–3 send one request at a time.
@Suite struct ConcurrencyTests {
    /// The five paging forms on the latency server: path, `records` and `paginate`.
    enum Paging: String, CaseIterable, Sendable, CustomStringConvertible {
        case offset, pages, link, cursor, next

        var description: String { rawValue }

        var source: String {
            switch self {
            case .offset:
                "records: data\n    paginate: { offset: { param: offset, limit_param: limit, limit: 10, total: meta.total } }"
            case .pages: "paginate: { param: page, start: 1 }"
            case .link: "paginate: { link_header: true }"
            case .cursor: "records: data\n    paginate: { cursor: next_cursor, param: cursor }"
            case .next: "records: data\n    paginate: { next: next }"
            }
        }
    }

    static let items = ["a", "b", "c", "d", "e"]

    /// A version-`version` file reading `paging` from `url` (`${item}` for the items).
    static func pipeline(_ paging: Paging, url: String, version: Int = 4, top: String = "", extra: String = "") -> String {
        """
        version: \(version)
        name: items
        store: .swell/items.sqlite
        \(top)
        entities:
          Item:
            key: [id]
            attributes: { id: integer, item: string?, page: integer, name: string, value: double }
        sources:
          - name: items
            entity: Item
            url: "\(url)"
            retries: 0
            \(paging.source)
        \(extra)
        exports:
          - { name: items, entity: Item, path: out/items.csv, columns: [id, item, page, name, value] }
        """
    }

    /// The report's sources without what may differ between equal runs (times, requests, waits).
    static func counts(_ workspace: Workspace) throws -> [[String: String]] {
        let sources = try workspace.report()["sources"] as? [[String: Any]] ?? []
        let variable: Set = ["duration_s", "waited_s", "requests", "started_at", "finished_at", "records_per_s"]
        return sources.map { entry in
            entry.filter { !variable.contains($0.key) }.mapValues { "\($0)" }
        }
    }

    /// Runs `yaml` in a new workspace; returns the workspace.
    /// `label` goes before the failure's stderr (a differential test's seed and replay command).
    static func run(_ yaml: String, _ arguments: [String] = [], label: String = "") throws -> Workspace {
        let workspace = try Workspace()
        try workspace.write("items.yml", yaml)
        let run = try workspace.run(["run", "items.yml", "--report", "out/report.json", "--progress", "never"] + arguments)
        #expect(run.status == 0, "\(label.isEmpty ? "" : label + ": ")\(run.stderr)")
        return workspace
    }

    @Test(arguments: Paging.allCases)
    func itemsSideBySideLeaveWhatASequentialRunLeaves(paging: Paging) throws {
        let server = try LatencyServer(LatencyServer.Options(delay: 0.02, delayJitter: 0.03, recordsPerPage: 10, pages: 4, items: Self.items))
        defer { server.stop() }
        let path = ["offset": "offset", "pages": "pages", "link": "link", "cursor": "cursor", "next": "next"][paging.rawValue]!
        let yaml = Self.pipeline(paging, url: server.url("/items/${item}/\(path)"),
                                 extra: "    for_each: [\(Self.items.joined(separator: ", "))]")
        let sequential = try Self.run(yaml.replacingOccurrences(of: "version: 4\n", with: "version: 4\nconcurrency: 1\n"))
        #expect(try server.stats().maxInFlight == 1)
        try server.reset()
        let concurrent = try Self.run(yaml.replacingOccurrences(of: "version: 4\n", with: "version: 4\nconcurrency: 8\n"))
        let stats = try server.stats()
        #expect(stats.maxInFlight > 1, "items were not fetched side by side")
        #expect(stats.maxInFlight <= 8)
        #expect(try ResumeTests.outcome(concurrent, .columns) == ResumeTests.outcome(sequential, .columns))
        #expect(try Self.counts(concurrent) == Self.counts(sequential))
        let records = try ResumeTests.outcome(concurrent, .columns).exports["items"].map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(records.split(separator: "\n").count == 1 + Self.items.count * 40)
    }

    @Test(arguments: [Paging.offset, .pages])
    func pagesOfOneSourceAreRequestedAheadUpToTheConcurrency(paging: Paging) throws {
        let server = try LatencyServer(LatencyServer.Options(delay: 0.05, recordsPerPage: 10, pages: 24))
        defer { server.stop() }
        let yaml = Self.pipeline(paging, url: server.url(paging == .offset ? "/offset" : "/pages"), top: "concurrency: 4")
        let concurrent = try Self.run(yaml)
        let stats = try server.stats()
        #expect(stats.maxInFlight > 1 && stats.maxInFlight <= 4, "max in flight \(stats.maxInFlight)")
        try server.reset()
        let sequential = try Self.run(yaml, ["--concurrency", "1"])
        #expect(try server.stats().maxInFlight == 1)
        #expect(try ResumeTests.outcome(concurrent, .columns) == ResumeTests.outcome(sequential, .columns))
        #expect(try Self.counts(concurrent) == Self.counts(sequential))
    }

    @Test func aHostsCapHoldsItsRequestsWhateverTheRunsConcurrency() throws {
        let server = try LatencyServer(LatencyServer.Options(delay: 0.03, recordsPerPage: 10, pages: 3, items: Self.items))
        defer { server.stop() }
        let yaml = Self.pipeline(.offset, url: server.url("/items/${item}/offset"),
                                 top: "concurrency: 8\nhosts:\n  \"\(server.baseURL)\": { concurrency: 2 }",
                                 extra: "    for_each: [\(Self.items.joined(separator: ", "))]")
        _ = try Self.run(yaml)
        let stats = try server.stats()
        #expect(stats.maxInFlight == 2, "max in flight \(stats.maxInFlight) with a cap of 2")
        #expect(stats.count >= Self.items.count * 3)
    }

    @Test(arguments: [3, 4])
    func aFileBeforeVersion4SendsOneRequestAtATime(version: Int) throws {
        let server = try LatencyServer(LatencyServer.Options(delay: 0.02, recordsPerPage: 10, pages: 3, items: Self.items))
        defer { server.stop() }
        let yaml = Self.pipeline(.offset, url: server.url("/items/${item}/offset"), version: version,
                                 extra: "    for_each: [\(Self.items.joined(separator: ", "))]")
        _ = try Self.run(yaml)
        let stats = try server.stats()
        // Version 4's default concurrency is 4; versions 1–3 keep one request at a time.
        if version == 3 {
            #expect(stats.maxInFlight == 1)
            let order = stats.requests.map { "\($0.path)?\($0.query)" }
            #expect(order == order.sorted { Self.sequentialOrder($0).lexicographicallyPrecedes(Self.sequentialOrder($1)) }, "\(order)")
        } else {
            #expect(stats.maxInFlight > 1)
        }
    }

    /// (item, offset) of a request to `/items/<item>/offset?offset=O…`.
    static func sequentialOrder(_ target: String) -> [Int] {
        let item = target.split(separator: "/").dropFirst().first.flatMap { items.firstIndex(of: String($0)) } ?? -1
        let offset = target.split(separator: "?").last?.split(separator: "&").first { $0.hasPrefix("offset=") }
            .flatMap { Int($0.dropFirst(7)) } ?? 0
        return [item, offset]
    }

    /// Guesses made before the first page said how many records there are (`meta.total`) are
    /// cancelled once it did: the server is not asked for pages past the total.
    @Test func pagesGuessedPastTheTotalAreNotRequested() throws {
        // 15 records at 10 a page: two pages. Ahead of the first, the stream guesses 7 more.
        let server = try LatencyServer(LatencyServer.Options(delay: 0.3, recordsPerPage: 5, pages: 3))
        defer { server.stop() }
        let yaml = Self.pipeline(.offset, url: server.url("/offset"), top: "concurrency: 2", extra: "    prefetch: 8")
        let workspace = try Self.run(yaml)
        let stats = try server.stats()
        let offsets = stats.requests.compactMap { $0.parameters["offset"].flatMap(Int.init) }.sorted()
        // Pages 0 and 1 are needed; as they answer, the engine may start two guesses (the
        // concurrency) before the loop has read the total. No more: 8 without the cancel.
        #expect(offsets.count <= 4 && Array(offsets.prefix(2)) == [0, 10], "\(offsets)")
        let source = try ResumeTests.source(workspace)
        #expect(source["records"] as? Int == 15)
    }
}
