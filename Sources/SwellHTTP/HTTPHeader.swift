/// One header field of a request or a response.
///
/// Header values may hold secrets (an `Authorization` token): SwellHTTP never puts a value
/// into an error message or a description.
public struct HTTPHeader: Sendable, Equatable {
    /// The field name, as given for requests; lowercased in ``HTTPResponse/headers``.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
