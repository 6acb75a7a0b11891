/// A pipeline file that does not load or validate: names the file, the line
/// and column (1-based) and what is wrong. `swell` exits 64 with it.
public struct PipelineFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given to the loader.
    public var path: String
    /// The line of the problem, 1-based.
    public var line: Int
    /// The column of the problem, 1-based.
    public var column: Int
    /// What is wrong.
    public var message: String

    /// An error at `path`:`line`:`column` saying `message`.
    public init(path: String, line: Int, column: Int, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    /// `path:line:column: message`, as `swell` prints it.
    public var description: String { "\(path):\(line):\(column): \(message)" }
}
