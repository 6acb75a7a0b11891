import Foundation
import SwellHTTP
import SwellTestSupport
import Testing

private let quick = RetryPolicy(retries: 3, baseDelay: 0.01)

@Test func serverErrorThenSuccessTakesOneRetry() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 500), .json("[1]")])
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick)

    #expect(result.retries == 1)
    #expect(result.attempts == [1, 2])
    #expect(result.body.text == "[1]")
    #expect(server.requests.count == 2)
}

@Test func tooManyRequestsWithRetryAfterZeroIsRetried() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 429, headers: [("Retry-After", "0")]), .json("[2]")])
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: RetryPolicy(retries: 1))

    #expect(result.retries == 1)
    #expect(result.body.text == "[2]")
}

@Test func retryAfterSecondsAreWaitedBetweenAttempts() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 503, headers: [("Retry-After", "1")]), .json("[3]")])
    var waits: [TimeInterval] = []
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: RetryPolicy(retries: 1, baseDelay: 0), wait: { waits.append($0) })

    #expect(result.retries == 1)
    #expect(waits == [1])
}

@Test func serviceUnavailableEveryTimeFailsAfterRetriesPlusOneAttempts() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 503)])
    let url = server.baseURL + "/p2"
    let error = #expect(throws: HTTPError.self) { try fetch(HTTPRequest(url: url), policy: RetryPolicy(retries: 2, baseDelay: 0.01)) }

    #expect(error?.kind == .status(503))
    #expect(error?.description == "GET \(url): HTTP 503 Service Unavailable")
    #expect(server.requests.count == 3)
}

@Test func notFoundIsNotRetried() throws {
    let server = try LoopbackHTTPServer(responses: [.json("{}", status: 404), .json("[]")])
    let error = #expect(throws: HTTPError.self) { try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick) }

    #expect(error?.kind == .status(404))
    #expect(error?.isRetryable == false)
    #expect(server.requests.count == 1)
}

@Test func resetMidBodyIsARetryableConnectionError() throws {
    let big = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
    let server = try LoopbackHTTPServer(responses: [.init(status: 200, body: big, fault: .resetAfter(bytes: 1000))])
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: server.baseURL + "/p")) }

    #expect(error?.kind == .connection)
    #expect(error?.isRetryable == true)
}

@Test func resetMidBodyThenSuccessStartsTheBodyAfresh() throws {
    let big = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
    let server = try LoopbackHTTPServer(responses: [
        .init(status: 200, body: big, fault: .resetAfter(bytes: 1000)),
        .json("[\"whole\"]"),
    ])
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick)

    #expect(result.retries == 1)
    #expect(result.body.text == "[\"whole\"]")
}

@Test func truncatedBodyIsARetryableConnectionError() throws {
    let truncated = LoopbackHTTPServer.Response(status: 200, body: Array("[1,2".utf8), fault: .truncate(declaredLength: 100))
    let server = try LoopbackHTTPServer(responses: [truncated, .json("[1,2,3]")])
    let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: server.baseURL + "/p")) }

    #expect(error?.kind == .connection)
    #expect(error?.isRetryable == true)
}

@Test func truncatedBodyThenSuccessIsRetried() throws {
    let truncated = LoopbackHTTPServer.Response(status: 200, body: Array("[1,2".utf8), fault: .truncate(declaredLength: 100))
    let server = try LoopbackHTTPServer(responses: [truncated, .json("[1,2,3]")])
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick)

    #expect(result.retries == 1)
    #expect(result.body.text == "[1,2,3]")
}

@Test func closeWithoutResponseIsRetried() throws {
    let server = try LoopbackHTTPServer(responses: [.init(status: 200, fault: .closeWithoutResponse), .json("[]")])
    let result = try fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick)

    #expect(result.retries == 1)
}

@Test func stallPastTimeoutFailsAsTimeout() throws {
    let server = try LoopbackHTTPServer(responses: [.init(status: 200, fault: .stall)])
    var request = HTTPRequest(url: server.baseURL + "/slow")
    request.timeout = 1
    let error = #expect(throws: HTTPError.self) { try fetch(request, policy: RetryPolicy(retries: 0)) }

    #expect(error?.kind == .timeout)
    #expect(error?.isRetryable == true)
    #expect(server.requests.count == 1)
}

@Test func maxBytesExceededFailsAsTooLargeAndIsNotRetried() throws {
    let server = try LoopbackHTTPServer(responses: [.init(status: 200, body: [UInt8](repeating: 0x20, count: 1000))])
    var request = HTTPRequest(url: server.baseURL + "/p")
    request.maxBytes = 100
    let error = #expect(throws: HTTPError.self) { try fetch(request, policy: quick) }

    #expect(error?.kind == .tooLarge)
    #expect(error?.isRetryable == false)
    #expect(server.requests.count == 1)
}

private struct ParserGaveUp: Error, Equatable {
    var offset: Int
}

@Test func onBodyErrorIsRethrownUnchangedAndNotRetried() throws {
    let server = try LoopbackHTTPServer(responses: [.json("[1,2,3]")])
    let client = try HTTPClient(userAgent: testUserAgent)
    let error = #expect(throws: ParserGaveUp.self) {
        try client.fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick) { _ in throw ParserGaveUp(offset: 3) }
    }

    #expect(error == ParserGaveUp(offset: 3))
    #expect(server.requests.count == 1)
}

@Test func onBodyHTTPErrorIsNotRetriedEither() throws {
    let server = try LoopbackHTTPServer(responses: [.json("[1,2,3]")])
    let client = try HTTPClient(userAgent: testUserAgent)
    let thrown = HTTPError(kind: .connection, url: "consumer", message: "retryable-looking")
    let error = #expect(throws: HTTPError.self) {
        try client.fetch(HTTPRequest(url: server.baseURL + "/p"), policy: quick) { _ in throw thrown }
    }

    #expect(error?.url == "consumer")
    #expect(server.requests.count == 1)
}
