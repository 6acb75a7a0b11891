import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (or another local address) for tests: it answers each request with what a handler returns,
/// and can misbehave on purpose (reset, truncate, stall, close) to exercise a client's error paths.
///
/// It binds an ephemeral port in `init` and serves on its own threads (one accept thread, one thread per
/// connection); connections are kept alive between requests. Every response carries `Content-Length`
/// (the body's length unless the handler sets one or a fault declares another). Only GET-style requests
/// with an optional `Content-Length` body are understood; nothing listens beyond the address given
/// (127.0.0.1 unless a test gives one of its own, e.g. its end of a link to a network namespace).
///
/// Thread safety: `@unchecked Sendable` because all mutable state (recorded requests, open sockets, the
/// stopped flag) lives in one `State` object whose every access holds its `NSLock`.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// A request as received.
    public struct Request: Sendable {
        /// The method, e.g. `GET`.
        public var method: String
        /// The request target: the path with its query, e.g. `/items?page=2`.
        public var path: String
        /// Header fields by lowercased name; repeated fields are joined with `, `.
        public var headers: [String: String]
        /// The request body (empty for GET).
        public var body: [UInt8]
        /// The client's IPv4 address, e.g. `127.0.0.1`.
        public var peer: String

        /// Creates a request value.
        public init(method: String, path: String, headers: [String: String], body: [UInt8] = [], peer: String = "") {
            self.method = method
            self.path = path
            self.headers = headers
            self.body = body
            self.peer = peer
        }
    }

    /// What to answer, and how to misbehave while answering.
    public struct Response: Sendable {
        /// The status code; the reason phrase is the standard one.
        public var status: Int
        /// Header fields in order. `Content-Length` is added unless given here.
        public var headers: [(String, String)]
        /// The body bytes.
        public var body: [UInt8]
        /// A deliberate failure while answering.
        public var fault: Fault = .none

        /// Deliberate failures.
        public enum Fault: Sendable {
            /// Answer properly.
            case none
            /// Send the head and the first `bytes` of the body, then reset the connection (TCP RST).
            case resetAfter(bytes: Int)
            /// Declare `Content-Length: declaredLength`, send the (shorter) body, then close the connection.
            case truncate(declaredLength: Int)
            /// Never answer: hold the connection until the client gives up or the server stops.
            case stall
            /// Close the connection without sending anything.
            case closeWithoutResponse
        }

        /// Creates a response.
        public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = [], fault: Fault = .none) {
            self.status = status
            self.headers = headers
            self.body = body
            self.fault = fault
        }

        /// A response with a UTF-8 text body and `Content-Type: application/json`, then `headers`.
        public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Response {
            Response(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
        }
    }

    /// Why the server could not start: the system call and its errno.
    public struct SocketError: Error, CustomStringConvertible {
        /// The failing call, e.g. `bind`.
        public var call: String
        /// The errno it left.
        public var code: Int32

        /// The call and the system's message for the errno.
        public var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    private let state: State
    private let threads = DispatchGroup()

    /// The port the server listens on.
    public let port: Int
    /// The IPv4 address the server listens on.
    public let address: String

    /// `http://ADDRESS:PORT`, without a trailing slash.
    public var baseURL: String { "http://\(address):\(port)" }

    /// Every request received so far, in arrival order.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// Binds `address` (an IPv4 address of this machine) on an ephemeral port and starts serving;
    /// `handler` runs on a connection thread per request.
    public init(address: String = "127.0.0.1", handler: @escaping @Sendable (Request) -> Response) throws {
        let listener = try Self.makeListener(address: address)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard named == 0 else {
            let error = SocketError(call: "getsockname", code: errno)
            close(listener)
            throw error
        }
        port = Int(UInt16(bigEndian: bound.sin_port))
        self.address = address
        state = State(listener: listener, handler: handler)
        let state = self.state
        let threads = self.threads
        threads.enter()
        Thread.detachNewThread {
            Self.acceptLoop(state: state, threads: threads)
            threads.leave()
        }
    }

    /// Serves `responses` in order, one per request, repeating the last one once they run out.
    public convenience init(responses: [Response]) throws {
        let queue = ResponseQueue(responses)
        try self.init(handler: { _ in queue.next() })
    }

    deinit {
        stop()
    }

    /// Closes the listener and every open connection (ending stalls), and waits for the server's threads to end.
    public func stop() {
        state.stop()
        _ = threads.wait(timeout: .now() + 10)
    }

    /// A port on 127.0.0.1 where nothing listens (bound, then closed), for connection-refused tests.
    public static func closedPort() throws -> Int {
        let listener = try makeListener(address: "127.0.0.1")
        defer { close(listener) }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard named == 0 else { throw SocketError(call: "getsockname", code: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func makeListener(address text: String) throws -> Int32 {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw SocketError(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else {
            close(listener)
            throw SocketError(call: "inet_pton(\(text))", code: EINVAL)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let error = SocketError(call: bound == 0 ? "listen" : "bind", code: errno)
            close(listener)
            throw error
        }
        return listener
    }

    /// An IPv4 address as dotted text (`inet_ntop`, which unlike `inet_ntoa` shares no buffer between threads).
    private static func text(of address: in_addr) -> String {
        var address = address
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func acceptLoop(state: State, threads: DispatchGroup) {
        while true {
            var peerAddress = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(state.listener, $0, &length) }
            }
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                break
            }
            guard state.register(connection) else {
                close(connection)
                break
            }
            let peer = Self.text(of: peerAddress.sin_addr)
            threads.enter()
            Thread.detachNewThread {
                var served = Connection(socket: connection, peer: peer, state: state)
                served.serve()
                state.unregister(connection)
                close(connection)
                threads.leave()
            }
        }
        state.stop()
        close(state.listener)
    }
}

extension LoopbackHTTPServer {
    /// The server's shared state; every access holds `lock`.
    /// `@unchecked Sendable`: `locked` is only touched under `lock`; the rest is set once in `init`.
    final class State: @unchecked Sendable {
        struct Locked {
            var requests: [Request] = []
            var connections: Set<Int32> = []
            var isStopped = false
        }

        let listener: Int32
        let handler: @Sendable (Request) -> Response
        private let lock = NSLock()
        private var locked = Locked()

        init(listener: Int32, handler: @escaping @Sendable (Request) -> Response) {
            self.listener = listener
            self.handler = handler
        }

        func withLock<T>(_ body: (inout Locked) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&locked)
        }

        /// Records an accepted socket; false once the server is stopping.
        func register(_ socket: Int32) -> Bool {
            withLock { locked in
                guard !locked.isStopped else { return false }
                locked.connections.insert(socket)
                return true
            }
        }

        func unregister(_ socket: Int32) {
            withLock { _ = $0.connections.remove(socket) }
        }

        func record(_ request: Request) {
            withLock { $0.requests.append(request) }
        }

        /// Wakes every blocked accept, recv and send by shutting the sockets down; their threads close them.
        func stop() {
            withLock { locked in
                guard !locked.isStopped else { return }
                locked.isStopped = true
                shutdown(listener, Int32(SHUT_RDWR))
                for socket in locked.connections { shutdown(socket, Int32(SHUT_RDWR)) }
            }
        }
    }

    /// Hands out canned responses in order, repeating the last.
    /// `@unchecked Sendable`: `index` is only touched under `lock`; `responses` is set once.
    final class ResponseQueue: @unchecked Sendable {
        private let lock = NSLock()
        private let responses: [Response]
        private var index = 0

        init(_ responses: [Response]) {
            self.responses = responses
        }

        func next() -> Response {
            lock.lock()
            defer { lock.unlock() }
            guard !responses.isEmpty else { return Response(status: 500) }
            let response = responses[min(index, responses.count - 1)]
            index += 1
            return response
        }
    }
}
