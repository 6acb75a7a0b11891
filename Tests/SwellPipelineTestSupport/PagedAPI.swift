import Foundation
import SwellLocks
import SwellTestSupport

/// A paged JSON API on a `LoopbackHTTPServer` for the resume tests: `pages` pages of
/// `perPage` records (ids from 1; with a `for_each`, each item its own pages under
/// `/items/<item>`), paged in any of the five forms a pipeline file reads. It can answer 500
/// from one page on (`failAt`), hold one page until let go (`holdAt`, for a kill), and echo
/// an API key from the query into its next links (as some servers do).
///
/// `@unchecked Sendable`: its mutable settings are `LockedValue`s; the rest is set in `init`.
package final class PagedAPI: @unchecked Sendable {
    /// How its pages are chained.
    package enum Paging: String, CaseIterable, Sendable, CustomStringConvertible {
        case offset, page, cursor, next, link

        package var description: String { rawValue }

        /// The source's `paginate` (and `records`) in a pipeline file.
        package var paginate: String {
            switch self {
            case .offset: "paginate: { offset: { param: offset, limit_param: limit, limit: \(PagedAPI.perPage), total: meta.total } }"
            case .page: "paginate: { param: page, start: 1 }"
            case .cursor: "paginate: { cursor: meta.cursor, param: after }"
            case .next: "paginate: { next: meta.next }"
            case .link: "paginate: { link_header: true }"
            }
        }
    }

    package static let perPage = 5
    package let paging: Paging
    package let pages: Int
    package let server: LoopbackHTTPServer
    /// Pages from this one on (0-based, in page order) answer 500.
    package let failAt = LockedValue<Int?>(nil)
    /// Only this `for_each` item's pages fail (nil: every item's).
    package let failItem = LockedValue<String?>(nil)
    /// This page waits for `release` before it answers.
    package let holdAt = LockedValue<Int?>(nil)
    private let held = DispatchSemaphore(value: 0)
    /// Each record's title gets this (a changed dataset between runs).
    package let titleSuffix = LockedValue("")
    /// Records with these ids are left out of the pages.
    package let leftOut = LockedValue<Set<Int>>([])
    /// The record with this id comes with a title that is not text (a bad record).
    package let badRecord = LockedValue<Int?>(nil)

    package init(paging: Paging, pages: Int = 6) throws {
        self.paging = paging
        self.pages = pages
        let box = Box()
        server = try LoopbackHTTPServer { request in box.api?.answer(request) ?? .json("{}", status: 500) }
        box.api = self
    }

    deinit {
        server.stop()
    }

    /// The first URL of the source (`item`: a `for_each` item's path segment).
    package func url(item: String? = nil, query: String = "") -> String {
        let path = item.map { "/items/\($0)" } ?? "/items"
        return "\(server.baseURL)\(path)\(query.isEmpty ? "" : "?\(query)")"
    }

    /// Lets a held page answer.
    package func release() { held.signal() }

    /// Requests the server received from `start` on (`server.requests.count` before a run).
    package func requests(from start: Int) -> [LoopbackHTTPServer.Request] {
        Array(server.requests.dropFirst(start))
    }

    /// The 0-based page a request asks for (nil: not one of its pages).
    package func pageIndex(_ request: LoopbackHTTPServer.Request) -> Int? {
        let query = Self.query(request.path)
        switch paging {
        case .offset: return query["offset"].flatMap(Int.init).map { $0 / Self.perPage } ?? 0
        case .page: return query["page"].flatMap(Int.init).map { $0 - 1 } ?? 0
        case .cursor: return query["after"].flatMap { Int($0.dropFirst()) } ?? 0
        case .next, .link: return query["p"].flatMap(Int.init) ?? 0
        }
    }

    /// The `for_each` item a request is for (nil: none).
    package static func item(_ request: LoopbackHTTPServer.Request) -> String? {
        let path = request.path.split(separator: "?").first.map(String.init) ?? ""
        let parts = path.split(separator: "/")
        return parts.count == 2 ? String(parts[1]) : nil
    }

    package static func query(_ target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var fields: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            fields[parts[0]] = parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : ""
        }
        return fields
    }

    private func answer(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
        guard let page = pageIndex(request) else { return .json("{}", status: 404) }
        let failing = failItem.withLock { $0 }
        if let failAt = failAt.withLock({ $0 }), page >= failAt, failing == nil || failing == Self.item(request) {
            return .json(#"{"error": "down"}"#, status: 500)
        }
        if holdAt.withLock({ $0 }) == page { held.wait() }
        let query = Self.query(request.path)
        let item = Self.item(request)
        let base = item.map { "/items/\($0)" } ?? "/items"
        // A key the client sent comes back in the next links (an echo the store must never keep).
        let key = query["key"].map { "&key=\($0)" } ?? ""
        let first = page * Self.perPage + 1
        let last = page < pages ? first + Self.perPage - 1 : first - 1
        let suffix = titleSuffix.withLock { $0 }
        let omitted = leftOut.withLock { $0 }
        let itemOffset = item.map { Int($0.unicodeScalars.first!.value) * 1_000 } ?? 0
        let bad = badRecord.withLock { $0 }
        let records = (first...max(first, last)).filter { $0 <= last && !omitted.contains($0) }.map { id -> String in
            let id = id + itemOffset
            // `rank` is largest at id 7 (page 1): an incremental cursor's largest comes early.
            let title = id == bad ? "[\"not text\"]" : "\"item \(id)\(suffix)\""
            return #"{"id": \#(id), "rank": \#(id == 7 ? 1_000 : id), "title": \#(title), "author": {"login": "a\#(id % 3)", "name": "Author \#(id % 3)"}, "#
                + #""notes": [{"id": \#(id * 10), "text": "n\#(id)"}, {"id": \#(id * 10 + 1), "text": "m\#(id)"}]}"#
        }
        let hasNext = page + 1 < pages
        var meta = #""total": \#(pages * Self.perPage)"#
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        switch paging {
        case .cursor: meta += hasNext ? #", "cursor": "c\#(page + 1)""# : #", "cursor": null"#
        case .next: meta += hasNext ? #", "next": "\#(base)?p=\#(page + 1)\#(key)""# : #", "next": null"#
        case .link: if hasNext { headers.append(("Link", "<\(base)?p=\(page + 1)\(key)>; rel=\"next\"")) }
        case .offset, .page: break
        }
        let body = #"{"data": [\#(records.joined(separator: ","))], "meta": {\#(meta)}}"#
        return LoopbackHTTPServer.Response(status: 200, headers: headers, body: Array(body.utf8))
    }

    /// Lets the server's handler reach the API made after it.
    private final class Box: @unchecked Sendable {
        weak var api: PagedAPI?
    }
}
