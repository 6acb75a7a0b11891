import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension LoopbackHTTPServer {
    /// One client connection: reads requests and writes answers until either side closes.
    struct Connection {
        let socket: Int32
        let peer: String
        let state: State
        private var buffer: [UInt8] = []

        init(socket: Int32, peer: String, state: State) {
            self.socket = socket
            self.peer = peer
            self.state = state
        }

        mutating func serve() {
            while let request = readRequest() {
                state.record(request)
                let response = state.handler(request)
                guard answer(request, with: response) else { return }
                if request.headers["connection"]?.lowercased() == "close" { return }
            }
        }

        /// Writes the response (or its fault); returns whether the connection may serve another request.
        private func answer(_ request: Request, with response: Response) -> Bool {
            let body = request.method == "HEAD" ? [] : response.body
            switch response.fault {
            case .none:
                return send(head(of: response, contentLength: response.body.count) + body)
            case .resetAfter(let bytes):
                _ = send(head(of: response, contentLength: response.body.count) + body.prefix(max(0, bytes)))
                var reset = linger(l_onoff: 1, l_linger: 0)
                setsockopt(socket, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                return false
            case .truncate(let declaredLength):
                _ = send(head(of: response, contentLength: declaredLength) + body)
                return false
            case .stall:
                var scratch = [UInt8](repeating: 0, count: 4096)
                while recv(socket, &scratch, scratch.count, 0) > 0 {}
                return false
            case .closeWithoutResponse:
                return false
            }
        }

        private func head(of response: Response, contentLength: Int) -> [UInt8] {
            var text = "HTTP/1.1 \(response.status) \(Self.reason(for: response.status))\r\n"
            var hasLength = false
            for (name, value) in response.headers {
                if name.lowercased() == "content-length" {
                    if case .truncate = response.fault { continue }
                    hasLength = true
                }
                text += "\(name): \(value)\r\n"
            }
            if !hasLength { text += "Content-Length: \(contentLength)\r\n" }
            return Array((text + "\r\n").utf8)
        }

        private func send(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return true }
                var offset = 0
                while offset < raw.count {
                    let sent = Glibc.send(socket, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent < 0 && errno == EINTR { continue }
                    guard sent > 0 else { return false }
                    offset += sent
                }
                return true
            }
        }

        /// The next request, or nil when the client closed, the server stopped or the bytes are not HTTP.
        private mutating func readRequest() -> Request? {
            let terminator: [UInt8] = Array("\r\n\r\n".utf8)
            var headEnd: Int? = nil
            while headEnd == nil {
                if let found = Self.firstRange(of: terminator, in: buffer) {
                    headEnd = found
                } else if !receiveMore() {
                    return nil
                }
            }
            guard let headEnd else { return nil }
            let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
            buffer.removeFirst(headEnd + terminator.count)
            var lines = headText.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
            guard requestLine.count >= 2 else { return nil }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
            let length = headers["content-length"].flatMap { Int($0) } ?? 0
            while buffer.count < length {
                guard receiveMore() else { return nil }
            }
            let body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
            return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body, peer: peer)
        }

        private mutating func receiveMore() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let received = recv(socket, &chunk, chunk.count, 0)
                if received < 0 && errno == EINTR { continue }
                guard received > 0 else { return false }
                buffer += chunk[..<received]
                return true
            }
        }

        private static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
            guard haystack.count >= needle.count else { return nil }
            for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
                return start
            }
            return nil
        }

        private static func reason(for status: Int) -> String {
            switch status {
            case 200: "OK"
            case 201: "Created"
            case 204: "No Content"
            case 301: "Moved Permanently"
            case 302: "Found"
            case 303: "See Other"
            case 304: "Not Modified"
            case 307: "Temporary Redirect"
            case 308: "Permanent Redirect"
            case 400: "Bad Request"
            case 401: "Unauthorized"
            case 403: "Forbidden"
            case 404: "Not Found"
            case 429: "Too Many Requests"
            case 500: "Internal Server Error"
            case 502: "Bad Gateway"
            case 503: "Service Unavailable"
            case 504: "Gateway Timeout"
            default: "Status \(status)"
            }
        }
    }
}
