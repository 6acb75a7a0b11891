/// A place in a page: the 0-based byte offset and the 1-based line and byte
/// column, counted as `JSONError` counts them.
public struct JSONPosition: Sendable, Hashable {
    /// The 0-based byte offset from the start of the page.
    public var byteOffset: Int
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in bytes from the start of the line.
    public var column: Int

    /// A position.
    public init(byteOffset: Int, line: Int, column: Int) {
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
    }
}
