import Foundation
import SwellHTTP
@testable import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// README, "Real networks": memory stays bounded by what is in flight — the pages requested
/// ahead of the page loop by all the streams of a run (`Link` chains of items opened ahead)
/// share one room (`PagesAhead`); a stream refused room waits and goes on when pages are taken.
@Suite struct PagesAheadTests {
    /// A stream of item `item` following the `Link` chain of `/items/<name>/link` on `server`.
    static func stream(_ server: LatencyServer, engine: HTTPEngine, item: Int, room: PagesAhead) -> PageStream {
        let requests = PageStream.Requests(
            prepare: { page in HTTPRequest(url: page.url) },
            renewCredentials: nil,
            nextFromHeaders: { response, request in
                guard let link = response.header("link"), let next = HTTPLinks.nextLink(in: link, base: request.url) else { return nil }
                return PageRequest(url: next)
            },
            retry: RetryPolicy(retries: 0),
            maxWait: 60,
            budgets: { _ in (nil, []) })
        return PageStream(engine: engine, item: item, prefetch: 8, requests: requests, room: room)
    }

    @Test func linkChainsOfItemsAheadShareTheRunsRoomAndGoOnWhenPagesAreTaken() throws {
        let items = ["a", "b", "c"]
        let server = try LatencyServer(LatencyServer.Options(delay: 0.01, recordsPerPage: 50, pages: 10, items: items))
        defer { server.stop() }
        let engine = try HTTPEngine(HTTPEngine.Configuration(concurrency: 8, userAgent: "swell-tests"))
        defer { engine.stop() }
        // Room for about three pages ahead (a page of 50 records is some 8 KB).
        let pageSize = try server.get("/items/a/link?page=1").body.count
        let room = PagesAhead(limit: 3 * pageSize)
        let streams = items.enumerated().map { Self.stream(server, engine: engine, item: $0.offset, room: room) }
        var urls = items.map { server.url("/items/\($0)/link?page=1") }
        for (index, stream) in streams.enumerated() { stream.want(PageRequest(url: urls[index]), index: 0) }
        // Items b and c wait while item a is read whole: their chains stop when the room is full.
        var bodies: [[UInt8]] = []
        for (index, stream) in streams.enumerated() {
            var page = 0
            while true {
                stream.want(PageRequest(url: urls[index]), index: page)
                let deadline = Date().addingTimeInterval(30)
                let arrival = try #require(stream.take(PageRequest(url: urls[index])) { Date() > deadline }, "item \(items[index]) page \(page) never came")
                guard case .success(let response) = arrival.result.outcome else {
                    Issue.record("item \(items[index]) page \(page): \(arrival.result.outcome)")
                    return
                }
                bodies.append(arrival.result.body)
                guard let link = response.header("link"), let next = HTTPLinks.nextLink(in: link, base: urls[index]) else { break }
                urls[index] = next
                page += 1
            }
            stream.close()
            #expect(page == 9, "item \(items[index]) ended at page \(page)")
        }
        #expect(bodies.count == 30)
        // Held at once: the room, plus the page each stream's loop asks for (always requested).
        #expect(room.highWaterBytes <= 3 * pageSize + items.count * pageSize, "held \(room.highWaterBytes) bytes, room \(3 * pageSize)")
        // Without the shared room every chain runs to its end while item a is read: 20 pages held.
        #expect(room.highWaterBytes < 10 * pageSize)
    }
}
