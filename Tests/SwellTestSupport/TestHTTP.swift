import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SwellLocks

/// What a test server answered: any status (a 429 or a 503 is an answer, not an error).
public struct TestHTTPResponse: Sendable {
    /// The HTTP status.
    public let status: Int
    /// The header fields by lowercased name.
    public let headers: [String: String]
    /// The body.
    public let body: Data

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body as a JSON value (`JSONSerialization`), or nil when it is not JSON.
    public var json: Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
}

/// A blocking HTTP client for tests to talk to their servers with, on Foundation's
/// `URLSession` (so a test's own requests go through other code than the one under test).
///
/// One session per value: its connections are kept alive between requests. Calls block
/// the calling thread until the answer is in; several threads may call at once.
public final class TestHTTP: Sendable {
    private let session: URLSession

    /// A client with its own ephemeral session (no cache, no cookies).
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends one request and waits for its answer.
    ///
    /// - Throws: ``ServerError`` when the transfer fails (connection refused or reset,
    ///   a body shorter than its `Content-Length`, `timeout` seconds passed).
    public func send(_ method: String = "GET", _ url: String, body: Data? = nil, headers: [String: String] = [:],
                     timeout: Double = 60) throws -> TestHTTPResponse {
        guard let target = URL(string: url) else { throw ServerError("not a URL: \(url)") }
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Result<TestHTTPResponse, ServerError>?>(nil)
        let task = session.dataTask(with: request) { data, response, error in
            let result: Result<TestHTTPResponse, ServerError>
            if let error {
                result = .failure(ServerError("\(method) \(url) failed: \(error.localizedDescription)"))
            } else if let response = response as? HTTPURLResponse {
                var fields: [String: String] = [:]
                for (name, value) in response.allHeaderFields {
                    if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
                }
                result = .success(TestHTTPResponse(status: response.statusCode, headers: fields, body: data ?? Data()))
            } else {
                result = .failure(ServerError("\(method) \(url): no HTTP response"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        task.resume()
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { throw ServerError("\(method) \(url): no outcome") }
        return try result.get()
    }

    /// `send`, then the body decoded as `T` (JSON); a status other than 2xx throws.
    public func decode<T: Decodable>(_ type: T.Type, _ method: String = "GET", _ url: String, body: Data? = nil,
                                     timeout: Double = 60) throws -> T {
        let response = try send(method, url, body: body, timeout: timeout)
        guard (200..<300).contains(response.status) else {
            throw ServerError("\(method) \(url): HTTP \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return try JSONDecoder().decode(T.self, from: response.body)
    }
}
