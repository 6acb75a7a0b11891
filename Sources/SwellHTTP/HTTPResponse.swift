/// What came back for a successful attempt: the final response's status and headers.
///
/// The body is not kept here: it streams to the caller's `onBody` as it arrives.
public struct HTTPResponse: Sendable {
    /// The final HTTP status (2xx or 304); 200 for files.
    public var status: Int
    /// The final response's header fields in arrival order, names lowercased; empty for files.
    public var headers: [HTTPHeader]
    /// The URL after redirects; for a plain file path, the path as given.
    public var effectiveURL: String
    /// Bytes of body handed to `onBody`, after content decoding (gzip, deflate).
    public var bodyBytes: Int64

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader], effectiveURL: String, bodyBytes: Int64) {
        self.status = status
        self.headers = headers
        self.effectiveURL = effectiveURL
        self.bodyBytes = bodyBytes
    }

    /// The value of header `name`, compared case-insensitively; the last one wins when repeated.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.last(where: { $0.name == wanted })?.value
    }

    /// Whether the server answered a conditional GET with 304 Not Modified (no body).
    public var isNotModified: Bool { status == 304 }
}
