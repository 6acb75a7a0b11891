/// Why a request failed: the kind of failure, the URL and a short message in curl's or the server's words.
///
/// Request header values never appear here. The URL is kept as given (it may carry a token:
/// the pipeline redacts known secret values from every message it prints).
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: Sendable, Equatable {
        /// The connection could not be made, or broke: refused, reset, nothing received, a truncated body. Retryable.
        case connection
        /// The attempt took longer than ``HTTPRequest/timeout``. Retryable.
        case timeout
        /// The host name could not be resolved.
        case dns
        /// The TLS handshake or the certificate check failed.
        case tls
        /// The body is larger than ``HTTPRequest/maxBytes``.
        case tooLarge
        /// The final response has a status other than 2xx or 304; 429 and 5xx are retryable.
        case status(Int)
        /// A 2xx answer carried an HTML page where data was expected (``HTTPRequest/rejectsHTML``). Retryable.
        case htmlPage
        /// More than 10 redirects.
        case redirectLoop
        /// A file source could not be read (missing, unreadable).
        case file
        /// The URL is not one SwellHTTP can send (empty, or a scheme other than http, https or file).
        case invalidURL
        /// A request header cannot be sent: its name is empty or holds a colon, space or line
        /// break, or its value holds a line break. The message names the header, never its value.
        case invalidHeader
    }

    /// What went wrong.
    public var kind: Kind
    /// The request's URL, as given.
    public var url: String
    /// A short message: curl's words, or the server's status line.
    public var message: String
    /// Whether another attempt may succeed: connection failures, timeouts, 429 and 5xx.
    public var isRetryable: Bool
    /// The request's method (`GET`, `POST`, `PUT`), named in `description`.
    public var method = "GET"
    /// The first bytes of an error status's body, when the request asked to keep them
    /// (``HTTPRequest/errorBodyLimit``). Not part of `description`.
    public var body: [UInt8]? = nil
    /// The response's `Retry-After` value, kept for the retry policy.
    var retryAfter: String?
    /// The failed response's header fields (names lower-cased; empty when no response came):
    /// what it says about the host's rate budget (``ServerHold``).
    public var headers: [HTTPHeader] = []

    /// Creates an error; `isRetryable` defaults to what ``Kind`` implies.
    public init(kind: Kind, url: String, message: String, isRetryable: Bool? = nil) {
        self.kind = kind
        self.url = url
        self.message = message
        self.isRetryable = isRetryable ?? kind.isRetryableByDefault
    }

    /// The verb and URL, then what happened, e.g. `GET http://host/p2: HTTP 503 Service Unavailable`.
    public var description: String {
        let verb = kind == .file ? "read" : method
        return "\(verb) \(url): \(message)"
    }
}

extension HTTPError.Kind {
    var isRetryableByDefault: Bool {
        switch self {
        case .connection, .timeout, .htmlPage: true
        case .status(let code): code == 429 || (500...599).contains(code)
        case .dns, .tls, .tooLarge, .redirectLoop, .file, .invalidURL, .invalidHeader: false
        }
    }
}
