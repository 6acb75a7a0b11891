import Foundation
import SwellHTTP
import SwellTestSupport
import Testing

/// Redirects are followed by the client itself so that credentials stay with their origin:
/// libcurl would send a custom header such as `X-Api-Key` on to any host a redirect names.
/// Two loopback servers on two ports are two origins.
@Suite struct HTTPRedirectTests {
    static func request(_ url: String, method: String = "GET", body: [UInt8]? = nil) -> HTTPRequest {
        var request = HTTPRequest(url: url)
        request.method = method
        request.body = body
        request.headers = [HTTPHeader(name: "Authorization", value: "Bearer t0ken"), HTTPHeader(name: "X-Api-Key", value: "k3y"),
                           HTTPHeader(name: "Cookie", value: "session=c00kie"), HTTPHeader(name: "X-Trace", value: "abc")]
        request.credentialHeaders = ["x-api-key"]
        return request
    }

    @Test func aRedirectToAnotherOriginDropsEveryCredentialAndKeepsTheRest() throws {
        let other = try LoopbackHTTPServer(responses: [.json("[1]")])
        let first = try LoopbackHTTPServer(responses: [.init(status: 302, headers: [("Location", other.baseURL + "/landing")])])
        let (response, body) = try get(Self.request(first.baseURL + "/start"))
        #expect(body.text == "[1]" && response.effectiveURL == other.baseURL + "/landing")
        let sent = try #require(other.requests.first)
        for name in ["authorization", "x-api-key", "cookie"] {
            #expect(sent.headers[name] == nil, "\(name) went to another origin")
        }
        #expect(sent.headers["x-trace"] == "abc")
        #expect(first.requests.first?.headers["x-api-key"] == "k3y")
    }

    @Test func aRedirectWithinTheOriginKeepsTheCredentials() throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/start" ? .init(status: 301, headers: [("Location", "/next")]) : .json("[2]")
        }
        let (_, body) = try get(Self.request(server.baseURL + "/start"))
        #expect(body.text == "[2]")
        let sent = try #require(server.requests.last)
        #expect(sent.path == "/next" && sent.headers["x-api-key"] == "k3y" && sent.headers["authorization"] == "Bearer t0ken")
    }

    @Test(arguments: [(303, "POST", "GET"), (302, "POST", "GET"), (301, "PUT", "GET"), (307, "POST", "POST"), (308, "PUT", "PUT")])
    func theMethodAfterARedirectIsTheOneBrowsersAndCurlUse(status: Int, method: String, expected: String) throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/start" ? .init(status: status, headers: [("Location", "/next")]) : .json("[3]")
        }
        var request = Self.request(server.baseURL + "/start", method: method, body: Array(#"{"q":1}"#.utf8))
        request.headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
        _ = try get(request)
        let sent = try #require(server.requests.last)
        #expect(sent.method == expected, "\(status) after \(method)")
        #expect((sent.body == Array(#"{"q":1}"#.utf8)) == (expected != "GET"), "\(status) after \(method): body \(sent.body.count) bytes")
        #expect((sent.headers["content-type"] != nil) == (expected != "GET"))
    }

    @Test func aRedirectToAnotherSchemeFails() throws {
        let server = try LoopbackHTTPServer(responses: [.init(status: 302, headers: [("Location", "file:///etc/passwd")])])
        let error = #expect(throws: HTTPError.self) { try get(HTTPRequest(url: server.baseURL + "/start")) }
        #expect(error?.kind == .invalidURL && error?.url == server.baseURL + "/start", "\(String(describing: error))")
    }
}
