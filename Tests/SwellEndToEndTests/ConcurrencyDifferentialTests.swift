import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Real networks", rule 1, as a differential test: random `for_each` datasets whose
/// keys repeat across pages and items (so "the later record wins" depends on the order pages
/// are applied), served by the latency server with random latencies per page and random
/// faults (503s, resets mid-body, closed connections), synced with a random concurrency,
/// prefetch and host cap. The store's export must equal, byte for byte, that of the same file
/// at `concurrency: 1`, and both must hold what a model computed here from the records alone
/// says: for each key, its last record in item order, then page order, then record order. The
/// report's counts must equal the sequential run's.
///
/// CI runs seeds 1…6 (`DifferentialSeeds`); a failure names its seed and the command that
/// replays it.
@Suite struct ConcurrencyDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 6) }

    /// One record as served and as the model keeps it.
    struct Record: Equatable {
        var id: Int
        var item: String
        var page: Int
        var name: String
        var value: Double

        var json: String {
            #"{"id": \#(id), "item": "\#(item)", "page": \#(page), "name": "\#(name)", "value": \#(value)}"#
        }
    }

    /// The paging forms whose every page the test scripts.
    enum Paging: CaseIterable {
        case pages, offset, link
    }

    /// One seed's dataset, faults and settings.
    struct Case {
        static let limit = 4
        var paging: Paging
        var items: [String]
        /// Per item, its pages of records.
        var pages: [[[Record]]]
        var rules: [LatencyServer.FaultRule] = []
        var concurrency: Int
        var prefetch: Int?
        var hostCap: Int?

        init(seed: UInt64) {
            var random = SeededGenerator(state: seed)
            paging = Paging.allCases.randomElement(using: &random)!
            items = Array(["a", "b", "c", "d", "e", "f"].prefix(Int.random(in: 2...6, using: &random)))
            concurrency = Int.random(in: 2...8, using: &random)
            prefetch = Bool.random(using: &random) ? Int.random(in: 1...6, using: &random) : nil
            hostCap = Int.random(in: 0...3, using: &random) == 0 ? Int.random(in: 1...3, using: &random) : nil
            let keys = Int.random(in: 8...40, using: &random)  // few keys: they repeat
            var pages: [[[Record]]] = []
            for item in items {
                let count = Int.random(in: 1...8, using: &random)
                var itemPages: [[Record]] = []
                for page in 1...count {
                    // Offset pages are full but the last; the others hold 1…6 records.
                    let size = paging == .offset ? (page < count ? Self.limit : Int.random(in: 1...Self.limit, using: &random))
                                                 : Int.random(in: 1...6, using: &random)
                    itemPages.append((0..<size).map { _ in
                        Record(id: Int.random(in: 1...keys, using: &random), item: item, page: page,
                               name: "n\(Int.random(in: 0...999, using: &random))",
                               value: Double(Int.random(in: -400...400, using: &random)) / 4)
                    })
                }
                pages.append(itemPages)
            }
            self.pages = pages
            rules = makeRules(using: &random)
        }

        /// The query that names page `page` (1-based) of the paging form, unique by its ending `&`
        /// (the files' URLs put the paging parameter first and `x=1` last).
        func query(page: Int) -> String {
            switch paging {
            case .pages, .link: "page=\(page)&"
            case .offset: "offset=\((page - 1) * Self.limit)&"
            }
        }

        /// Every page of every item scripted: a body (and Link header), a delay, sometimes a
        /// fault first; then per item a catch-all for what lies past its last page.
        private func makeRules(using random: inout SeededGenerator) -> [LatencyServer.FaultRule] {
            var rules: [LatencyServer.FaultRule] = []
            for (index, item) in items.enumerated() {
                let prefix = "/items/\(item)/\(paging == .offset ? "offset" : paging == .link ? "link" : "pages")"
                let itemPages = pages[index]
                let total = itemPages.map(\.count).reduce(0, +)
                for (offset, records) in itemPages.enumerated() {
                    let page = offset + 1
                    let query = query(page: page)
                    switch Int.random(in: 0..<14, using: &random) {
                    case 0: rules.append(.init(pathPrefix: prefix, query: query, status: 503, retryAfter: "0"))
                    case 1: rules.append(.init(pathPrefix: prefix, query: query, resetMidBody: true))
                    case 2: rules.append(.init(pathPrefix: prefix, query: query, close: true))
                    default: break
                    }
                    let array = "[" + records.map(\.json).joined(separator: ", ") + "]"
                    let body: String
                    var headers: [String: String]?
                    switch paging {
                    case .pages: body = array
                    case .offset: body = #"{"data": \#(array), "meta": {"total": \#(total)}}"#
                    case .link:
                        body = array
                        if page < itemPages.count { headers = ["Link": "<\(prefix)?page=\(page + 1)&x=1>; rel=\"next\""] }
                    }
                    rules.append(.init(pathPrefix: prefix, query: query, times: 0,
                                       delay: Double(Int.random(in: 0...40, using: &random)) / 1000, body: body, headers: headers))
                }
                let past = paging == .offset ? #"{"data": [], "meta": {"total": \#(total)}}"# : "[]"
                rules.append(.init(pathPrefix: prefix, times: 0, body: past))
            }
            return rules
        }

        /// The file, at `concurrency`.
        func yaml(_ server: LatencyServer, concurrency: Int) -> String {
            let url: String
            let paginate: String
            switch paging {
            case .pages:
                url = server.url("/items/${item}/pages?page=1&x=1")
                paginate = "paginate: { param: page, start: 1 }"
            case .offset:
                url = server.url("/items/${item}/offset?offset=0&limit=\(Self.limit)&x=1")
                paginate = "records: data\n    paginate: { offset: { param: offset, limit_param: limit, limit: \(Self.limit), total: meta.total } }"
            case .link:
                url = server.url("/items/${item}/link?page=1&x=1")
                paginate = "paginate: { link_header: true }"
            }
            let hosts = hostCap.map { "hosts:\n  \"\(server.baseURL)\": { concurrency: \($0) }" } ?? ""
            return """
                version: 4
                name: items
                store: .swell/items.sqlite
                concurrency: \(concurrency)
                \(hosts)
                entities:
                  Item:
                    key: [id]
                    attributes: { id: integer, item: string, page: integer, name: string, value: double }
                sources:
                  - name: items
                    entity: Item
                    url: "\(url)"
                    retries: 4
                    for_each: [\(items.joined(separator: ", "))]
                \(prefetch.map { "    prefetch: \($0)" } ?? "")
                    \(paginate)
                exports:
                  - { name: items, entity: Item, path: out/items.csv, columns: [id, item, page, name, value] }
                """
        }

        /// The model: each key's last record, in item, page and record order.
        var expected: [Int: Record] {
            var last: [Int: Record] = [:]
            for itemPages in pages { for records in itemPages { for record in records { last[record.id] = record } } }
            return last
        }
    }

    @Test(arguments: seeds)
    func concurrentRunsLeaveWhatASequentialRunAndTheModelSay(seed: UInt64) throws {
        let draw = Case(seed: seed)
        let replay = "SWELL_DIFF_SEED=\(seed) swift test --filter ConcurrencyDifferentialTests"
        let label = "seed \(seed) (\(draw.paging), \(draw.items.count) items, concurrency \(draw.concurrency), "
            + "prefetch \(draw.prefetch.map(String.init) ?? "default"), host cap \(draw.hostCap.map(String.init) ?? "none")); replay: \(replay)"
        let server = try LatencyServer(.init(recordsPerPage: 1, pages: 1, items: draw.items, faults: draw.rules))
        defer { server.stop() }

        let sequential = try ConcurrencyTests.run(draw.yaml(server, concurrency: 1), label: label)
        // One at a time; a connection the server closes or resets is still being closed on its
        // side when the retry arrives, so there the server may count two at once.
        let cutConnections = draw.rules.contains { $0.close == true || $0.resetMidBody == true }
        #expect(try server.stats().maxInFlight <= (cutConnections ? 2 : 1), "\(label)")
        try server.setFaults(draw.rules)  // the faults fire again
        try server.reset()
        let concurrent = try ConcurrencyTests.run(draw.yaml(server, concurrency: draw.concurrency), label: label)
        let stats = try server.stats()
        #expect(stats.maxInFlight <= min(draw.concurrency, draw.hostCap ?? .max) + (cutConnections ? 1 : 0), "\(label)")

        #expect(draw.hostCap == 1 || stats.maxInFlight > 1, "nothing went side by side: \(label)")

        let exported = try ResumeTests.outcome(concurrent, .columns).exports["items"] ?? Data()
        #expect(try exported == ResumeTests.outcome(sequential, .columns).exports["items"], "the exports differ: \(label)")
        // Retries depend on the connections (libcurl sends a request again by itself when a reused
        // connection closes): the other counts must be equal.
        let counts = { (workspace: Workspace) in try ConcurrencyTests.counts(workspace).map { $0.filter { $0.key != "retries" } } }
        let (concurrentCounts, sequentialCounts) = (try counts(concurrent), try counts(sequential))
        #expect(concurrentCounts == sequentialCounts, "the report's counts differ: \(label)")
        let rows = try Self.rows(exported)
        let expected = draw.expected
        #expect(rows.count == expected.count, "\(rows.count) rows, the model has \(expected.count): \(label)")
        let wrong = expected.values.filter { rows[$0.id] != $0 }.map(\.id).sorted()
        #expect(wrong.isEmpty, "keys \(wrong.prefix(5)) differ from the model: \(label)")
    }

    /// The export's rows by key.
    static func rows(_ csv: Data) throws -> [Int: Record] {
        var rows: [Int: Record] = [:]
        for line in String(decoding: csv, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, let id = Int(fields[0]), let page = Int(fields[2]), let value = Double(fields[4]) else {
                Issue.record("an export line that is not a row: \(line)")
                continue
            }
            rows[id] = Record(id: id, item: fields[1], page: page, name: fields[3], value: value)
        }
        return rows
    }
}
