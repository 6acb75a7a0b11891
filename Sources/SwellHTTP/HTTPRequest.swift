/// A request for one page of a source (a GET unless `method` and `body` say otherwise), or
/// for a token.
public struct HTTPRequest: Sendable {
    /// What to fetch: an `http://`, `https://` or `file://` URL, or a plain file path
    /// (relative paths resolve against the current working directory).
    public var url: String
    /// The method: `GET` (the default), `POST` or `PUT` (file URLs are only read).
    public var method = "GET"
    /// The body sent with a `POST` or `PUT`, as given (set its `Content-Type` in `headers`).
    public var body: [UInt8]? = nil
    /// Extra request headers; a `User-Agent` here replaces the client's.
    public var headers: [HTTPHeader] = []
    /// Seconds one attempt may take, connecting and the whole transfer included; 0 or less: no limit.
    public var timeout: Double = 30
    /// The largest body accepted, in bytes (declared length and decoded bytes alike);
    /// a larger one fails the request with ``HTTPError/Kind/tooLarge``, which is not retried.
    public var maxBytes: Int64? = nil
    /// An entity tag sent as `If-None-Match` (conditional GET).
    public var ifNoneMatch: String? = nil
    /// An HTTP-date sent as `If-Modified-Since` (conditional GET).
    public var ifModifiedSince: String? = nil
    /// Whether a 2xx answer labelled `Content-Type: text/html` whose body starts
    /// with `<` is a server's or a proxy's error page rather than the data: the
    /// attempt then fails with ``HTTPError/Kind/htmlPage`` (retryable) before any
    /// of its body reaches `onBody`. (JSON labelled `text/html` still passes.)
    public var rejectsHTML = false
    /// How many bytes of an error status's body to keep in ``HTTPError/body`` (0, the
    /// default: none; such bodies never reach `onBody`). A GraphQL API explains a refused
    /// query there.
    public var errorBodyLimit = 0

    /// Names of headers that carry credentials (any case): sent to the request's own origin
    /// only, and dropped when a redirect leads to another scheme, host or port.
    /// `Authorization`, `Proxy-Authorization` and `Cookie` are always treated so.
    public var credentialHeaders: Set<String> = []

    /// Creates a request for `url` with the defaults above.
    public init(url: String) {
        self.url = url
    }
}
