import Foundation
import SwellHTTP
import SwellTestSupport

/// A fetched body and the number of onBody calls it took.
struct Received {
    var bytes: [UInt8] = []
    var chunks = 0
    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// The `User-Agent` the tests' clients send.
let testUserAgent = "swell-tests/1"

/// GETs `request` once, collecting the body.
func get(_ request: HTTPRequest, with client: HTTPClient? = nil) throws -> (HTTPResponse, Received) {
    let client = try client ?? HTTPClient(userAgent: testUserAgent)
    var received = Received()
    let response = try client.perform(request) { chunk in
        received.bytes += chunk
        received.chunks += 1
    }
    return (response, received)
}

/// Fetches `request` with retries, starting the body afresh on each attempt.
/// `wait` spends the waits between attempts (blocking, by default).
func fetch(_ request: HTTPRequest, policy: RetryPolicy, wait: (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) })
    throws -> (response: HTTPResponse, retries: Int, body: Received, attempts: [Int]) {
    let client = try HTTPClient(userAgent: testUserAgent)
    var received = Received()
    var attempts: [Int] = []
    let (response, retries) = try client.fetch(request, policy: policy, onAttempt: { attempt in
        attempts.append(attempt)
        received = Received()
    }, wait: wait, onBody: { chunk in
        received.bytes += chunk
        received.chunks += 1
    })
    return (response, retries, received, attempts)
}

/// A fresh directory under the system's temporary directory.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("swell-http-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
