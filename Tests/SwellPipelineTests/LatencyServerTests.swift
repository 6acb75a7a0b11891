import Foundation
import SwellLocks
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The latency server itself (`Tests/servers/latency_server.py`), which the "Real networks"
/// tests and `bench/latency.sh` run against (Pipeline file reference, "Real networks"):
/// requests in flight together overlap, faults fire on the request they name, `/_stats`
/// records what arrived, and every paging form serves each record once.
@Suite struct LatencyServerTests {
    @Test func requestsInFlightTogetherOverlap() throws {
        let server = try LatencyServer(.init(delay: 0.2))
        let statuses = onThreads(2) { index in (try? server.get("/offset?offset=\(index * 10)"))?.status ?? -1 }
        #expect(statuses == [200, 200])
        let stats = try server.stats()
        #expect(stats.maxInFlight == 2)
        #expect(stats.count == 2)
        let (first, second) = (stats.requests[0], stats.requests[1])
        // Each waited its latency, and each arrived before the other was answered.
        for request in stats.requests {
            #expect((request.tEnd ?? 0) - request.t >= 0.19, "\(request)")
        }
        #expect(first.t < second.tEnd ?? 0 && second.t < first.tEnd ?? 0, "\(stats.requests)")
    }

    @Test func requestsOneAfterAnotherDoNotOverlapAndArriveInOrder() throws {
        let server = try LatencyServer(.init(delay: 0.05))
        for page in 1...3 { #expect(try server.get("/pages?page=\(page)").status == 200) }
        let stats = try server.stats()
        #expect(stats.maxInFlight == 1)
        #expect(stats.requests.map { $0.parameters["page"] } == ["1", "2", "3"])
        #expect(stats.maxArrivals(within: 0.04) == 1)
    }

    @Test func aFaultFiresOnTheNthMatchingRequestOnly() throws {
        let server = try LatencyServer(.init(faults: [
            .init(pathPrefix: "/offset", nth: 3, status: 503, retryAfter: "1"),
            .init(pathPrefix: "/pages", status: 429, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{unix+5}"]),
        ]))
        let limited = try server.get("/pages?page=1")
        #expect(limited.status == 429)
        #expect(limited.header("x-ratelimit-remaining") == "0")
        let reset = Double(limited.header("X-RateLimit-Reset") ?? "") ?? 0
        let now = Date().timeIntervalSince1970
        #expect(reset > now + 3 && reset < now + 7, "reset \(reset) at \(now)")
        #expect(try server.get("/pages?page=1").status == 200)
        var answers: [TestHTTPResponse] = []
        for page in 0..<4 { answers.append(try server.get("/offset?offset=\(page * 10)")) }
        #expect(answers.map(\.status) == [200, 200, 503, 200])
        #expect(answers[2].header("Retry-After") == "1")
        #expect((answers[3].json as? [String: Any])?["data"] as? [Any] != nil)
        let stats = try server.stats()
        #expect(stats.requests.map(\.fault) == [1, nil, nil, nil, 0, nil])
        #expect(stats.faults.map(\.seen) == [4, 2])
        #expect(stats.faults.map(\.fired) == [1, 1])
    }

    @Test func rulesSetLaterReplaceTheScriptAndCanBreakTheConnection() throws {
        let server = try LatencyServer(.init(faults: [.init(times: 0, status: 500)]))
        #expect(try server.get("/offset").status == 500)
        try server.setFaults([.init(query: "page=2", resetMidBody: true), .init(query: "page=3", close: true)])
        #expect(try server.get("/next?page=1").status == 200)
        #expect(throws: ServerError.self) { try server.get("/next?page=2") }
        // On a fresh connection: libcurl (URLSession's, as Swell's) sends a request again, once,
        // when a reused connection closes before any byte of the answer.
        #expect(throws: ServerError.self) { try TestHTTP().send("GET", server.url("/next?page=3")) }
        #expect(try server.get("/next?page=2").status == 200)
        let stats = try server.stats()
        #expect(stats.requests.map(\.status) == [500, 200, 200, 0, 200])
        try server.setFaults([])
        #expect(try server.get("/offset").status == 200)
    }

    @Test func aHeldRequestWaitsForTheReleaseAndTheWaitSeesIt() throws {
        let server = try LatencyServer(.init(faults: [.init(pathPrefix: "/link", hold: true)]))
        let answers = LockedAnswers()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            answers.add((try? server.get("/link?page=1"))?.status ?? -1)
            done.signal()
        }
        #expect(try server.wait(requests: 1, held: 1))
        let held = try server.stats()
        #expect(held.held == 1 && held.inFlight == 1)
        #expect(answers.all.isEmpty)
        try server.release()
        done.wait()
        #expect(answers.all == [200])
        #expect(try server.stats().held == 0)
        // Nothing else arrives: the wait says so when its time is up.
        #expect(try server.wait(requests: 2, timeout: 0.2) == false)
    }

    @Test func statsRecordEachRequestAndResetClearsThem() throws {
        let server = try LatencyServer(.init(recordsPerPage: 5, pages: 4, items: ["a", "b"]))
        let answer = try server.get("/items/b/offset?offset=10&limit=5", headers: ["X-Test": "yes"])
        #expect(answer.status == 200)
        let page = answer.json as? [String: Any]
        let ids = (page?["data"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
        #expect(ids == [31, 32, 33, 34, 35])  // item b's ids start after item a's 20
        #expect((page?["meta"] as? [String: Any])?["total"] as? Int == 20)
        #expect(try server.get("/items/c/offset").status == 404)
        let stats = try server.stats()
        #expect(stats.count == 2)
        let request = stats.requests[0]
        #expect(request.method == "GET" && request.path == "/items/b/offset" && request.query == "offset=10&limit=5")
        #expect(request.header("x-test") == "yes")
        #expect(request.status == 200 && request.t <= request.tEnd ?? -1)
        #expect(stats.startedUnix > 1_700_000_000 && stats.startedUnix <= Date().timeIntervalSince1970)
        try server.reset()
        #expect(try server.stats().count == 0)
    }

    /// Each paging form, followed to its end as a client would, gives each of an item's
    /// records once (the item holds a `/`, as `owner/repo` does).
    @Test func everyPagingFormServesEachRecordOnce() throws {
        let server = try LatencyServer(.init(recordsPerPage: 4, pages: 3, items: ["octo/one", "octo/two"]))
        let expected = Array(13...24)  // the second item's
        let prefix = "/items/octo/two"
        #expect(try ids(server, following: \.linkNext, from: prefix + "/link?per_page=4") == expected)
        #expect(try ids(server, following: { $0.bodyNext }, from: prefix + "/next") == expected)
        var cursorIDs: [Int] = []
        var cursor: String? = ""
        while let current = cursor {
            let page = try server.get(prefix + "/cursor" + (current.isEmpty ? "" : "?cursor=\(current)")).json as? [String: Any]
            cursorIDs += Self.ids(in: page?["data"])
            cursor = page?["next_cursor"] as? String
        }
        #expect(cursorIDs == expected)
        var numbered: [Int] = []
        for number in 1... {
            let records = Self.ids(in: try server.get(prefix + "/pages?page=\(number)").json)
            if records.isEmpty { break }
            numbered += records
        }
        #expect(numbered == expected)
        let last = try server.get(prefix + "/link?page=3&per_page=4")
        #expect(last.header("link")?.contains("rel=\"next\"") == false)
        #expect(last.header("link")?.contains("rel=\"prev\"") == true)
    }

    private func ids(_ server: LatencyServer, following next: (TestHTTPResponse) -> String?, from start: String) throws -> [Int] {
        let http = TestHTTP()
        var result: [Int] = []
        var url: String? = server.url(start)
        while let current = url, result.count < 1000 {
            let answer = try http.send("GET", current)
            #expect(answer.status == 200)
            result += Self.ids(in: (answer.json as? [String: Any])?["data"] ?? answer.json)
            url = next(answer)
        }
        return result
    }

    static func ids(in records: Any?) -> [Int] {
        (records as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }
}

extension TestHTTPResponse {
    /// The `rel="next"` target of a `Link` header.
    var linkNext: String? {
        guard let link = header("link") else { return nil }
        for part in link.split(separator: ",") where part.contains("rel=\"next\"") {
            guard let open = part.firstIndex(of: "<"), let close = part.firstIndex(of: ">") else { continue }
            return String(part[part.index(after: open)..<close])
        }
        return nil
    }

    /// The `next` URL of a JSON page.
    var bodyNext: String? { (json as? [String: Any])?["next"] as? String }
}

/// Statuses collected from other threads.
final class LockedAnswers: Sendable {
    private let statuses = LockedValue<[Int]>([])
    func add(_ status: Int) { statuses.withLock { $0.append(status) } }
    var all: [Int] { statuses.withLock { $0 } }
}
