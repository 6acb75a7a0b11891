/// Why a JSON page or document could not be read, and where.
///
/// Every parse error names the first byte that made the input invalid: its
/// 0-based offset from the start of the page, and its 1-based line and byte
/// column. Lines are counted at `\n`.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "expected ',' or '}' after an object member", "invalid UTF-8", "nesting deeper than 512".
    public let message: String
    /// The 0-based byte offset from the start of the page or document.
    public let byteOffset: Int
    /// The 1-based line.
    public let line: Int
    /// The 1-based column, counted in bytes from the start of the line.
    public let column: Int

    /// Creates an error at a position.
    init(_ message: String, byteOffset: Int, line: Int, column: Int) {
        self.message = message
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
    }

    /// The message followed by its position, e.g. "invalid UTF-8 at line 3, column 7 (byte 52)".
    public var description: String {
        "\(message) at line \(line), column \(column) (byte \(byteOffset))"
    }
}
