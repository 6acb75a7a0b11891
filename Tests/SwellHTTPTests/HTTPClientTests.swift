import Foundation
import SwellHTTP
import SwellTestSupport
import Testing

/// `{"greeting":"hello, gzip","pad":"aaa…"}` (120 a's, 155 bytes) gzipped (57 bytes).
private let gzippedGreeting: [UInt8] = [
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0x2f, 0x4a, 0x4d, 0x2d, 0xc9, 0xcc,
    0x4b, 0x57, 0xb2, 0x52, 0xca, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x48, 0xaf, 0xca, 0x2c, 0x50, 0xd2, 0x51, 0x2a,
    0x48, 0x4c, 0x01, 0x8a, 0x25, 0x0e, 0x10, 0x50, 0xaa, 0x05, 0x00, 0x7b, 0x1a, 0xeb, 0x62, 0x9b, 0x00, 0x00, 0x00,
]
private let greeting = #"{"greeting":"hello, gzip","pad":""# + String(repeating: "a", count: 120) + #""}"#

@Test func getSendsRequestHeadersAndReportsResponseHeaders() throws {
    let server = try LoopbackHTTPServer(responses: [
        .json(#"{"ok":true}"#, headers: [("X-Dup", "first"), ("X-Dup", "second"), ("ETag", "\"v1\"")]),
    ])
    var request = HTTPRequest(url: server.baseURL + "/items?page=1")
    request.headers = [HTTPHeader(name: "Authorization", value: "Bearer s3cret"), HTTPHeader(name: "X-Trace", value: "abc")]
    let (response, body) = try get(request)

    let sent = try #require(server.requests.first)
    #expect(sent.method == "GET")
    #expect(sent.path == "/items?page=1")
    #expect(sent.headers["authorization"] == "Bearer s3cret")
    #expect(sent.headers["x-trace"] == "abc")
    #expect(sent.headers["user-agent"] == testUserAgent)
    #expect(sent.headers["accept-encoding"]?.contains("gzip") == true)
    #expect(response.status == 200)
    #expect(response.headers.allSatisfy { $0.name == $0.name.lowercased() })
    #expect(response.header("x-DUP") == "second")
    #expect(response.header("etag") == "\"v1\"")
    #expect(response.bodyBytes == 11)
    #expect(body.text == #"{"ok":true}"#)
}

@Test func bodyStreamsInSeveralChunksByteIdentical() throws {
    let payload = (0..<5_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
    let server = try LoopbackHTTPServer(responses: [.init(status: 200, body: payload)])
    let (response, body) = try get(HTTPRequest(url: server.baseURL + "/big"))

    #expect(body.chunks > 1)
    #expect(body.bytes == payload)
    #expect(response.bodyBytes == 5_000_000)
}

@Test func relativeRedirectIsFollowedAndEffectiveURLReported() throws {
    let server = try LoopbackHTTPServer { request in
        request.path == "/old/start"
            ? .init(status: 302, headers: [("Location", "../new/page?x=1")])
            : .json("[\"moved\"]")
    }
    let (response, body) = try get(HTTPRequest(url: server.baseURL + "/old/start"))

    #expect(server.requests.map(\.path) == ["/old/start", "/new/page?x=1"])
    #expect(response.effectiveURL == server.baseURL + "/new/page?x=1")
    #expect(body.text == "[\"moved\"]")
}

@Test func redirectLoopFailsAsRedirectLoop() throws {
    let server = try LoopbackHTTPServer(responses: [.init(status: 302, headers: [("Location", "/loop")])])
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: server.baseURL + "/loop")) }

    #expect(error?.kind == .redirectLoop)
    #expect(error?.isRetryable == false)
    #expect(server.requests.count == 11)
}

@Test func gzipBodyIsDecodedBeforeOnBody() throws {
    let server = try LoopbackHTTPServer(responses: [
        .init(status: 200, headers: [("Content-Encoding", "gzip"), ("Content-Type", "application/json")], body: gzippedGreeting),
    ])
    let (_, body) = try get(HTTPRequest(url: server.baseURL + "/gz"))

    #expect(body.text == greeting)
}

@Test func maxBytesCountsDecodedBytes() throws {
    let server = try LoopbackHTTPServer(responses: [
        .init(status: 200, headers: [("Content-Encoding", "gzip")], body: gzippedGreeting),
    ])
    var request = HTTPRequest(url: server.baseURL + "/gz")
    request.maxBytes = 100
    let error = #expect(throws: HTTPError.self) { try get(request) }

    #expect(error?.kind == .tooLarge)
}

@Test func fileURLIsRead() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("page 1.json")
    try Data(#"[{"id":1}]"#.utf8).write(to: file)
    let (response, body) = try get(HTTPRequest(url: file.absoluteString))

    #expect(file.absoluteString.hasPrefix("file:///"))
    #expect(response.status == 200)
    #expect(body.text == #"[{"id":1}]"#)
}

@Test func plainRelativePathIsReadAgainstTheCurrentDirectory() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try Data(#"{"page":2}"#.utf8).write(to: directory.appendingPathComponent("page #2.json"))
    let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
    let relative = String(repeating: "../", count: depth) + directory.path.dropFirst() + "/page #2.json"
    let (response, body) = try get(HTTPRequest(url: relative))

    #expect(!relative.hasPrefix("/"))
    #expect(response.status == 200)
    #expect(response.effectiveURL == relative)
    #expect(body.text == #"{"page":2}"#)
}

@Test func missingFileFailsAsFile() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let missing = directory.appendingPathComponent("nope.json").path
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: missing)) }

    #expect(error?.kind == .file)
    #expect(error?.isRetryable == false)
    #expect(error?.description.contains(missing) == true)
}

@Test func conditionalGetSendsValidatorsAndNotModifiedSkipsOnBody() throws {
    let server = try LoopbackHTTPServer { request in
        request.headers["if-none-match"] == "\"v7\"" && request.headers["if-modified-since"] != nil
            ? .init(status: 304, headers: [("ETag", "\"v7\"")])
            : .json("{}")
    }
    var request = HTTPRequest(url: server.baseURL + "/feed")
    request.ifNoneMatch = "\"v7\""
    request.ifModifiedSince = "Wed, 01 May 2024 06:30:00 GMT"
    var bodyCalls = 0
    let response = try HTTPClient(userAgent: testUserAgent).perform(request) { _ in bodyCalls += 1 }

    #expect(server.requests.first?.headers["if-modified-since"] == "Wed, 01 May 2024 06:30:00 GMT")
    #expect(response.isNotModified)
    #expect(response.header("etag") == "\"v7\"")
    #expect(bodyCalls == 0)
}

@Test func errorStatusNamesURLAndStatusAndKeepsBodyFromOnBody() throws {
    let server = try LoopbackHTTPServer(responses: [.json(#"{"error":"gone"}"#, status: 404)])
    let url = server.baseURL + "/missing"
    var bodyCalls = 0
    let error = #expect(throws: HTTPError.self) {
        try HTTPClient(userAgent: testUserAgent).perform(HTTPRequest(url: url)) { _ in bodyCalls += 1 }
    }

    #expect(error?.kind == .status(404))
    #expect(error?.description == "GET \(url): HTTP 404 Not Found")
    #expect(bodyCalls == 0)
}

@Test func errorsNeverShowRequestHeaderValues() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 500)])
    var request = HTTPRequest(url: server.baseURL + "/p")
    request.headers = [HTTPHeader(name: "Authorization", value: "Bearer TOKEN-123")]
    let error = #expect(throws: HTTPError.self) { try get(request) }

    #expect(error?.description.contains("TOKEN-123") == false)
    #expect(error?.message.contains("TOKEN-123") == false)
}

@Test func connectionRefusedFailsAsConnection() throws {
    let port = try LoopbackHTTPServer.closedPort()
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: "http://127.0.0.1:\(port)/")) }

    #expect(error?.kind == .connection)
    #expect(error?.isRetryable == true)
}

@Test func unsupportedSchemeFailsAsInvalidURL() throws {
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: "ftp://127.0.0.1/x.json")) }

    #expect(error?.kind == .invalidURL)
}

@Test func aHeaderThatCannotBeSentFailsAsInvalidHeaderWithoutItsValue() throws {
    for header in [HTTPHeader(name: "X Bad", value: "v"), HTTPHeader(name: "", value: "v"),
                   HTTPHeader(name: "Authorization", value: "Bearer SECRET\r\nX-Injected: 1")] {
        var request = HTTPRequest(url: "http://127.0.0.1:9/x.json")
        request.headers = [header]
        let error = #expect(throws: HTTPError.self) { try get(request) }
        #expect(error?.kind == .invalidHeader, "\(header.name)")
        #expect(error?.isRetryable == false)
        #expect(error?.description.contains("SECRET") == false)
    }
}

@Test func oneClientServesSeveralRequestsInTurn() throws {
    let server = try LoopbackHTTPServer { request in .json("\"\(request.path)\"") }
    let client = try HTTPClient(userAgent: testUserAgent)
    let first = try get(HTTPRequest(url: server.baseURL + "/a"), with: client).1
    let second = try get(HTTPRequest(url: server.baseURL + "/b"), with: client).1

    #expect(first.text == "\"/a\"")
    #expect(second.text == "\"/b\"")
}

@Test func anHTMLErrorPageIsRejectedButJSONLabelledHTMLPasses() throws {
    let html = LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                                           body: Array("\n  <html><body>Bad gateway</body></html>".utf8))
    let jsonAsHTML = LoopbackHTTPServer.Response(status: 200, headers: [("Content-Type", "text/html; charset=UTF-8")],
                                                 body: Array(#" {"data": []}"#.utf8))
    let notModified = LoopbackHTTPServer.Response(status: 304, headers: [("Content-Type", "text/html")], body: [])
    let server = try LoopbackHTTPServer(responses: [html, jsonAsHTML, notModified])
    var request = HTTPRequest(url: server.baseURL + "/items")
    request.rejectsHTML = true
    var received: [UInt8] = []
    let error = #expect(throws: HTTPError.self) {
        try HTTPClient(userAgent: testUserAgent).perform(request) { received += $0 }
    }
    #expect(error?.kind == .htmlPage)
    #expect(error?.isRetryable == true)
    #expect(received.isEmpty)
    let response = try HTTPClient(userAgent: testUserAgent).perform(request) { received += $0 }
    #expect(response.status == 200)
    #expect(String(decoding: received, as: UTF8.self) == #" {"data": []}"#)
    let unchanged = try HTTPClient(userAgent: testUserAgent).perform(request) { _ in }
    #expect(unchanged.isNotModified)
}
