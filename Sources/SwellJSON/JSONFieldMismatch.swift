/// A value that does not fit where it was found: its kind, the start of its
/// text, and where it starts in the page.
///
/// The excerpt is valid only during the `JSONProjectionSink` call that receives it.
public struct JSONFieldMismatch {
    /// The most bytes an excerpt holds.
    public static let excerptLimit = 40

    /// What the value is.
    public let found: JSONValueKind
    /// The value's JSON text, cut after at most `excerptLimit` bytes (at a
    /// character boundary): a string with its quotes and escapes as written,
    /// an array or object in compact form.
    public let excerpt: UnsafeRawBufferPointer
    /// Where the value starts.
    public let position: JSONPosition

    /// A mismatch (made by the reader; public for sinks' tests).
    public init(found: JSONValueKind, excerpt: UnsafeRawBufferPointer, position: JSONPosition) {
        self.found = found
        self.excerpt = excerpt
        self.position = position
    }
}

@available(*, unavailable)
extension JSONFieldMismatch: Sendable {}
