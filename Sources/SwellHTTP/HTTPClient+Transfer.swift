import CCurl
import Foundation

/// What curl's callbacks see during one attempt (through the userdata pointer, unretained:
/// the attempt keeps it alive across `curl_easy_perform`).
final class Transfer {
    private let onBody: (UnsafeRawBufferPointer) throws -> Void
    private let isFile: Bool
    private let maxBytes: Int64?
    private let rejectsHTML: Bool
    /// The latest response's status line (each redirect's response replaces the previous one).
    private(set) var status = 0
    private(set) var reason = ""
    private(set) var headers: [HTTPHeader] = []
    private(set) var bodyBytes: Int64 = 0
    /// The consumer's error from `onBody`, rethrown unchanged after the aborted transfer.
    private(set) var bodyError: (any Error)?
    private(set) var isTooLarge = false

    /// The first bytes of an error status's body, up to `errorBodyLimit`.
    private(set) var errorBody: [UInt8] = []
    private let errorBodyLimit: Int

    init(onBody: @escaping (UnsafeRawBufferPointer) throws -> Void, isFile: Bool, maxBytes: Int64?, rejectsHTML: Bool = false,
         errorBodyLimit: Int = 0) {
        self.errorBodyLimit = errorBodyLimit
        self.onBody = onBody
        self.isFile = isFile
        self.maxBytes = maxBytes
        self.rejectsHTML = rejectsHTML
    }

    /// The response's `Content-Type`, as sent.
    var contentType: String? { headers.last { $0.name == "content-type" }?.value }

    /// Set when a 2xx body labelled `text/html` starts with `<`: an error page,
    /// not data (some APIs label JSON `text/html`; their bodies start otherwise).
    private(set) var isUnwantedHTML = false
    /// Whether the body's first non-blank byte is still to be looked at.
    private var sniffing = true

    /// Looks at the body's first non-blank byte when the answer may be an error page.
    private func sniffHTML(_ chunk: UnsafeRawBufferPointer) {
        guard sniffing else { return }
        guard rejectsHTML, !isFile, (200...299).contains(status), status != 204,
              contentType?.lowercased().hasPrefix("text/html") == true else {
            sniffing = false
            return
        }
        guard let first = chunk.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else { return }
        sniffing = false
        isUnwantedHTML = first == UInt8(ascii: "<")
    }

    static func isSuccess(_ status: Int) -> Bool {
        (200...299).contains(status) || status == 304
    }

    var hasSuccessStatus: Bool { isFile || Self.isSuccess(status) }

    /// One body chunk; false aborts the transfer. Bodies of error statuses are dropped.
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard hasSuccessStatus else {
            errorBody += chunk.prefix(max(0, errorBodyLimit - errorBody.count))
            return true
        }
        sniffHTML(chunk)
        if isUnwantedHTML { return false }
        if let maxBytes, bodyBytes + Int64(chunk.count) > maxBytes {
            isTooLarge = true
            return false
        }
        do {
            try onBody(chunk)
        } catch {
            bodyError = error
            return false
        }
        bodyBytes += Int64(chunk.count)
        return true
    }

    /// One complete header line, CRLF included: a status line starts a new response.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var line = Substring(String(decoding: bytes, as: UTF8.self))
        while let last = line.last, last == "\r\n" || last == "\n" || last == "\r" { line.removeLast() }
        guard !line.isEmpty else { return }
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            reason = parts.count > 2 ? String(parts[2]) : ""
            headers = []
            sniffing = true
            isUnwantedHTML = false
        } else if line.first == " " || line.first == "\t" {
            guard !headers.isEmpty else { return }
            headers[headers.count - 1].value += " " + line.trimmingWhitespace()
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = String(String(line[line.index(after: colon)...]).trimmingWhitespace())
            headers.append(HTTPHeader(name: name, value: value))
        }
    }
}

/// Where an attempt goes: the URL handed to curl, and whether it is a file.
struct RequestTarget {
    var curlURL: String
    var isFile: Bool
    /// The URL reported as effective for files: the path or file URL as given.
    var reportedURL: String

    /// Accepts http, https and file URLs and plain paths (made absolute against the current directory).
    init(_ url: String) throws(HTTPError) {
        guard !url.isEmpty else {
            throw HTTPError(kind: .invalidURL, url: url, message: "empty URL")
        }
        reportedURL = url
        if let separator = url.range(of: "://"), Self.isScheme(url[..<separator.lowerBound]) {
            let scheme = url[..<separator.lowerBound].lowercased()
            guard ["http", "https", "file"].contains(scheme) else {
                throw HTTPError(kind: .invalidURL, url: url, message: "unsupported scheme \(scheme) (http, https, file or a path)")
            }
            curlURL = url
            isFile = scheme == "file"
        } else {
            let absolute = url.hasPrefix("/") ? url : FileManager.default.currentDirectoryPath + "/" + url
            curlURL = "file://" + HTTPLinks.percentEncoded(absolute, keeping: [UInt8(ascii: "/")])
            isFile = true
        }
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }
}

/// The request's header lines as a curl_slist, freed in deinit.
final class HeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?

    init(_ request: HTTPRequest) throws(HTTPError) {
        var fields = request.headers
        if let tag = request.ifNoneMatch { fields.append(HTTPHeader(name: "If-None-Match", value: tag)) }
        if let date = request.ifModifiedSince { fields.append(HTTPHeader(name: "If-Modified-Since", value: date)) }
        // A body is sent at once, without waiting for a `100 Continue` that some servers never send.
        if request.body != nil || request.method != "GET" { list = curl_slist_append(list, "Expect:") }
        for field in fields {
            let badName = field.name.isEmpty || field.name.contains(where: { $0 == ":" || $0.isWhitespace || $0.isNewline })
            guard !badName else {
                throw HTTPError(kind: .invalidHeader, url: request.url, message: "a request header name is empty or holds a colon, space or line break")
            }
            guard !field.value.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw HTTPError(kind: .invalidHeader, url: request.url, message: "the value of request header \(field.name) holds a line break")
            }
            // curl sends "Name;" as a header with an empty value ("Name:" would remove it).
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            guard let appended = curl_slist_append(list, line) else {
                throw HTTPError(kind: .connection, url: request.url, message: "out of memory for request headers", isRetryable: false)
            }
            list = appended
        }
    }

    deinit {
        curl_slist_free_all(list)
    }
}

/// Reason phrases for status lines that carry none (HTTP/2).
enum HTTPStatus {
    static func reason(for status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
