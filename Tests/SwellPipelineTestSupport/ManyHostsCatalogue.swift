import Foundation
@testable import SwellSQLite
import SwellContexts
import SwellLocks
import SwellStoreCore
import SwellTestSupport

/// The data of the many-hosts tests: items r0…r8, item k paged in 2 + k % 2 pages of
/// three records, record j of page p having id 1000·k + 10·p + j. The rows one
/// uninterrupted run leaves are computed from the same functions the server answers with.
package enum ManyHostsCatalogue {
    package static let items = (0..<9).map { "r\($0)" }

    package static func pageCount(item: Int) -> Int { 2 + item % 2 }

    /// The rows of `item`'s records: id, item, page, value (the columns of `Item`).
    package static func rows(item: Int) -> [[StoreValue]] {
        (1...pageCount(item: item)).flatMap { page in
            (1...3).map { record -> [StoreValue] in
                [.integer(Int64(1000 * item + 10 * page + record)), .text("r\(item)"), .integer(Int64(page)), .text("r\(item) page \(page) record \(record)")]
            }
        }
    }

    /// The rows of `items`, by id.
    package static func rows(items: some Sequence<Int>) -> [[StoreValue]] {
        items.flatMap(rows(item:)).sorted { $0[0].integer < $1[0].integer }
    }

    /// The body of `/items/r<k>?page=<p>`, or nil for a path that names no page.
    package static func body(path: String) -> String? {
        let parts = path.split(separator: "?")
        guard parts.count == 2, parts[0].hasPrefix("/items/r"), let item = Int(parts[0].dropFirst("/items/r".count)),
              items.indices.contains(item), parts[1].hasPrefix("page="), let page = Int(parts[1].dropFirst("page=".count)),
              (1...pageCount(item: item)).contains(page) else { return nil }
        let records = rows(item: item).filter { $0[2] == .integer(Int64(page)) }.map { row in
            "{\"id\": \(row[0].integer), \"item\": \"r\(item)\", \"page\": \(page), \"value\": \"\(row[3].text)\"}"
        }
        let next = page < pageCount(item: item) ? "\"/items/r\(item)?page=\(page + 1)\"" : "null"
        return "{\"data\": [\(records.joined(separator: ", "))], \"next\": \(next)}"
    }

    /// One source expanded per item (`items[r0]` … `items[r8]`), paged by `next`, into `Item` keyed by id.
    package static func pipeline(baseURL: String) -> String {
        """
        version: 1
        name: manyhosts
        entities:
          Item:
            key: [id]
            attributes: { id: integer, item: string, page: integer, value: string }
        sources:
          - name: items
            entity: Item
            url: "\(baseURL)/items/${item}?page=1"
            records: data
            paginate: { next: next }
            retries: 2
            timeout: 30
            for_each: [\(items.joined(separator: ", "))]
        """
    }
}

private extension StoreValue {
    var integer: Int64 {
        if case .integer(let value) = self { return value }
        return -1
    }

    var text: String {
        if case .text(let value) = self { return value }
        return ""
    }
}

/// The HTTP server of the many-hosts tests, serving `ManyHostsCatalogue` with faults:
/// the first request for each path in `failOnce` answers 503 (`Retry-After: 0`: the
/// runner retries at once), and the first request for `hold` waits, after signalling
/// `held`, until the test calls `release()` (or a minute passes).
package final class ManyHostsFaultServer: Sendable {
    package let held = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let http: LoopbackHTTPServer

    package var baseURL: String { http.baseURL }
    package var requests: [LoopbackHTTPServer.Request] { http.requests }

    package init(address: String, failOnce: Set<String> = [], hold: String? = nil) throws {
        let answered = LockedValue(Set<String>())
        let held = self.held
        let released = self.released
        http = try LoopbackHTTPServer(address: address) { request in
            let first = answered.withLock { $0.insert(request.path).inserted }
            if first && failOnce.contains(request.path) {
                return .json(#"{"error": "try again"}"#, status: 503, headers: [("Retry-After", "0")])
            }
            if first && request.path == hold {
                held.signal()
                _ = released.wait(timeout: .now() + 60)
            }
            guard let body = ManyHostsCatalogue.body(path: request.path) else { return .json("{}", status: 404) }
            return .json(body)
        }
    }

    /// Lets the held request be answered.
    package func release() { released.signal() }

    /// Releases the held request and stops serving.
    package func stop() {
        release()
        http.stop()
    }
}
