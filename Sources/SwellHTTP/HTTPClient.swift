import CCurl
import SwellLibcrypto
import Foundation

/// One libcurl easy handle, reused across requests (keep-alive). Not Sendable: one thread at a time.
///
/// `perform` and `fetch` block the calling thread for the whole transfer (and, for `fetch`,
/// the waits between attempts): call them from a worker thread, never from the main queue or
/// the cooperative pool. The handle is created in `init` and cleaned up in `deinit`; open
/// connections are kept between requests.
public final class HTTPClient {
    private let handle: UnsafeMutableRawPointer
    private let userAgent: String
    /// curl writes its own words about a failure here (CURLOPT_ERRORBUFFER); stable for the client's life.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Creates the easy handle (initialising libcurl once per process).
    ///
    /// - Parameter userAgent: sent as `User-Agent` unless a request gives its own. No default:
    ///   this module has no version of its own; `swell` sends `SwellVersion.userAgent`.
    /// - Throws: ``HTTPError`` (kind ``HTTPError/Kind/connection``, not retryable) when libcurl cannot start.
    public init(userAgent: String) throws(HTTPError) {
        guard CurlGlobal.isInitialised else {
            throw HTTPError(kind: .connection, url: "", message: "libcurl could not be initialised", isRetryable: false)
        }
        guard let handle = curl_easy_init() else {
            throw HTTPError(kind: .connection, url: "", message: "curl_easy_init failed", isRetryable: false)
        }
        self.handle = handle
        self.userAgent = userAgent
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// One attempt. Body bytes stream to onBody as they arrive (no whole-body copy). Redirects followed (max 10; more → .redirectLoop);
    /// a redirect to another origin does not carry the request's credential headers (``HTTPRequest/credentialHeaders``).
    ///
    /// Sends Accept-Encoding for gzip/deflate and lets curl decode, so `onBody` sees decoded bytes.
    /// TLS peer and host verification are on. Redirects may lead to http and https only.
    ///
    /// - Returns: the final response (2xx or 304; status 200 for files).
    /// - Throws: ``HTTPError`` for a status other than 2xx/304 (whose body is not passed to `onBody`)
    ///   and for transport failures; an error thrown by `onBody` aborts the transfer and is rethrown unchanged.
    public func perform(_ request: HTTPRequest, onBody: (UnsafeRawBufferPointer) throws -> Void) throws -> HTTPResponse {
        do {
            return try performOnce(request, onBody: onBody)
        } catch {
            switch error {
            case .http(let httpError): throw httpError
            case .body(let bodyError): throw bodyError
            }
        }
    }

    /// A failed attempt: either the transfer's own failure or the consumer's error from `onBody`.
    enum AttemptFailure: Error {
        case http(HTTPError)
        case body(any Error)
    }

    /// One attempt, following redirects itself (at most `maxRedirects`): a hop to another
    /// origin drops the credential headers (`HTTPClient+Redirect.swift`).
    func performOnce(_ request: HTTPRequest, onBody: (UnsafeRawBufferPointer) throws -> Void) throws(AttemptFailure) -> HTTPResponse {
        var hop = request
        for _ in 0...Self.maxRedirects {
            switch try performHop(hop, naming: request.url, onBody: onBody) {
            case .response(let response):
                return response
            case .redirect(let location, let status):
                do {
                    hop = try Self.redirected(hop, to: location, status: status, naming: request.url)
                } catch {
                    throw .http(error)
                }
            }
        }
        var failure = HTTPError(kind: .redirectLoop, url: request.url, message: "more than \(Self.maxRedirects) redirects")
        failure.method = request.method
        throw .http(failure)
    }

    /// What one request of an attempt led to.
    enum Hop {
        case response(HTTPResponse)
        /// A redirect status with the absolute URL of its `Location`.
        case redirect(String, status: Int)
    }

    /// One request; errors name `url` (the attempt's first URL).
    private func performHop(_ request: HTTPRequest, naming url: String, onBody: (UnsafeRawBufferPointer) throws -> Void) throws(AttemptFailure) -> Hop {
        try withoutActuallyEscaping(onBody) { onBody throws(AttemptFailure) -> Hop in
            let hop: ConfiguredHop
            do throws(HTTPError) {
                hop = try configureHop(request, naming: url, onBody: onBody)
            } catch {
                throw .http(error)
            }
            let code = curl_easy_perform(handle)
            return try conclude(hop, code: code)
        }
    }

    /// One hop set up on this client's handle, waiting to be performed (by `curl_easy_perform`,
    /// or by a multi handle: `HTTPEngine`); what curl's callbacks and options point at lives here.
    final class ConfiguredHop {
        let request: HTTPRequest
        /// The URL errors name: the attempt's first.
        let url: String
        let target: RequestTarget
        let headerList: HeaderList
        let transfer: Transfer

        fileprivate init(request: HTTPRequest, url: String, target: RequestTarget, headerList: HeaderList, transfer: Transfer) {
            self.request = request
            self.url = url
            self.target = target
            self.headerList = headerList
            self.transfer = transfer
        }
    }

    /// The libcurl easy handle, for a multi handle to drive (`HTTPEngine`).
    var easyHandle: UnsafeMutableRawPointer { handle }

    /// Resets the handle and sets it up for one hop of `request`; keep the hop until `conclude`.
    func configureHop(_ request: HTTPRequest, naming url: String,
                      onBody: @escaping (UnsafeRawBufferPointer) throws -> Void) throws(HTTPError) -> ConfiguredHop {
        let target = try RequestTarget(request.url)
        let headerList = try HeaderList(request)
        let transfer = Transfer(onBody: onBody, isFile: target.isFile, maxBytes: request.maxBytes, rejectsHTML: request.rejectsHTML,
                                errorBodyLimit: request.errorBodyLimit)
        try configure(request, target: target, headerList: headerList, transfer: transfer)
        return ConfiguredHop(request: request, url: url, target: target, headerList: headerList, transfer: transfer)
    }

    /// What a performed hop led to, from curl's result `code`: a response, a redirect, or why it failed.
    func conclude(_ hop: ConfiguredHop, code: CURLcode) throws(AttemptFailure) -> Hop {
        let (request, url, target, transfer) = (hop.request, hop.url, hop.target, hop.transfer)
        if let bodyError = transfer.bodyError { throw .body(bodyError) }
        if !target.isFile, code == CURLE_OK, Self.redirectStatuses.contains(transfer.status) {
            var location: UnsafeMutablePointer<CChar>? = nil
            if swell_curl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &location) == CURLE_OK, let location {
                return .redirect(String(cString: location), status: transfer.status)
            }
        }
        do {
            return .response(try response(request, naming: url, target: target, transfer: transfer, code: code))
        } catch {
            var failure = error
            if !target.isFile { failure.method = request.method }
            failure.headers = transfer.headers
            throw .http(failure)
        }
    }

    /// The attempt's response, or why it failed.
    private func response(_ request: HTTPRequest, naming url: String, target: RequestTarget, transfer: Transfer,
                          code: CURLcode) throws(HTTPError) -> HTTPResponse {
        if transfer.isUnwantedHTML {
            let type = transfer.contentType ?? "text/html"
            throw HTTPError(kind: .htmlPage, url: url,
                                  message: "HTTP \(transfer.status) with an HTML page (Content-Type: \(type)) instead of the data: a server or proxy error page")
        }
        if transfer.isTooLarge || (code == CURLE_FILESIZE_EXCEEDED && transfer.hasSuccessStatus) {
            let limit = request.maxBytes.map { " of \($0) bytes" } ?? ""
            throw HTTPError(kind: .tooLarge, url: url, message: "response body larger than the limit\(limit)")
        }
        if code != CURLE_OK && code != CURLE_FILESIZE_EXCEEDED {
            throw HTTPError(kind: Self.kind(of: code), url: url, message: curlMessage(code))
        }
        if target.isFile {
            return HTTPResponse(status: 200, headers: [], effectiveURL: target.reportedURL, bodyBytes: transfer.bodyBytes)
        }
        let status = transfer.status
        guard Transfer.isSuccess(status) else {
            let reason = transfer.reason.isEmpty ? HTTPStatus.reason(for: status) : transfer.reason
            var error = HTTPError(kind: .status(status), url: url, message: "HTTP \(status) \(reason)".trimmingCharacters(in: .whitespaces))
            error.retryAfter = transfer.headers.last(where: { $0.name == "retry-after" })?.value
            if !transfer.errorBody.isEmpty { error.body = transfer.errorBody }
            throw error
        }
        var effectiveURL: UnsafeMutablePointer<CChar>? = nil
        let reported = swell_curl_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effectiveURL) == CURLE_OK
            ? effectiveURL.map { String(cString: $0) } : nil
        return HTTPResponse(status: status, headers: transfer.headers, effectiveURL: reported ?? request.url, bodyBytes: transfer.bodyBytes)
    }

    /// Bytes read from a local file at a time.
    static let fileReadSize = 1 << 20

    /// Resets the handle (keeping its connections) and sets every option for one attempt.
    private func configure(_ request: HTTPRequest, target: RequestTarget, headerList: HeaderList, transfer: Transfer) throws(HTTPError) {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try set(CURLOPT_URL, target.curlURL)
        try set(CURLOPT_PROTOCOLS_STR, "http,https,file")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_NOSIGNAL, 1)
        // Redirects are followed by `performOnce`, which drops credentials on the way to another origin.
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_ACCEPT_ENCODING, "")
        try set(CURLOPT_USERAGENT, userAgent)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        // A local file is read in large pieces (libcurl's default is 16 KiB a read); the
        // body arrives in as many calls of the write callback.
        if target.isFile { try set(CURLOPT_BUFFERSIZE, Self.fileReadSize) }
        // A POST or PUT without a body still says `Content-Length: 0` (some servers want it).
        if !target.isFile, let body = request.body ?? (request.method == "GET" ? nil : []) {
            try check(swell_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), CURLOPT_POSTFIELDSIZE_LARGE)
            // curl copies the bytes: the request's array need not outlive this call.
            var bytes = body.isEmpty ? [0] : body
            let code = bytes.withUnsafeMutableBytes { swell_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            try check(code, CURLOPT_COPYPOSTFIELDS)
        }
        if !target.isFile, request.method != "GET", request.method != "POST" {
            try set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        if request.timeout > 0 {
            try set(CURLOPT_TIMEOUT_MS, Int(min(request.timeout * 1000, 1e12).rounded(.up)))
        }
        if let maxBytes = request.maxBytes {
            try check(swell_curl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, maxBytes))), CURLOPT_MAXFILESIZE_LARGE)
        }
        try check(swell_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList.list), CURLOPT_HTTPHEADER)
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        try check(swell_curl_setopt_write_callback(handle) { data, size, count, userdata in
            guard let userdata else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
            let length = size * count
            return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
        }, CURLOPT_WRITEFUNCTION)
        try set(CURLOPT_WRITEDATA, pointer: userdata)
        try check(swell_curl_setopt_header_callback(handle) { data, size, count, userdata in
            guard let userdata else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
            let length = size * count
            transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
            return length
        }, CURLOPT_HEADERFUNCTION)
        try set(CURLOPT_HEADERDATA, pointer: userdata)
    }

    private func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(swell_curl_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(swell_curl_setopt_string(handle, option, value), option)
    }

    private func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) throws(HTTPError) {
        try check(swell_curl_setopt_pointer(handle, option, pointer), option)
    }

    /// The one path for setopt results: anything but CURLE_OK becomes a non-retryable error.
    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard code == CURLE_OK else {
            throw HTTPError(kind: .connection, url: "", message: "curl_easy_setopt(\(option.rawValue)): \(String(cString: curl_easy_strerror(code)))", isRetryable: false)
        }
    }

    /// curl's own words for the last failure: its error buffer, else the code's text.
    private func curlMessage(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    static func kind(of code: CURLcode) -> HTTPError.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            .dns
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            .tls
        case CURLE_TOO_MANY_REDIRECTS:
            .redirectLoop
        case CURLE_FILE_COULDNT_READ_FILE, CURLE_READ_ERROR:
            .file
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            .invalidURL
        case CURLE_FILESIZE_EXCEEDED:
            .tooLarge
        default:
            .connection
        }
    }
}

@available(*, unavailable)
extension HTTPClient: Sendable {}

/// libcurl's process-wide initialisation, done once on first use. libcrypto (libcurl's TLS)
/// is initialised first without its exit handler (`LibcryptoLifetime`).
enum CurlGlobal {
    static let isInitialised: Bool = {
        LibcryptoLifetime.keepUntilExit()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
}
