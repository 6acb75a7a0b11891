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
    /// The file's further problems, in file order (a file is read to its end: every problem
    /// is reported at once, except after one that leaves nothing to read on).
    public var more: [PipelineFileError] = []

    /// An error at `path`:`line`:`column` saying `message`.
    public init(path: String, line: Int, column: Int, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    /// This problem and the further ones, in file order.
    public var all: [PipelineFileError] {
        var first = self
        first.more = []
        return [first] + more
    }

    /// `path:line:column: message`, one line per problem, as `swell` prints them.
    public var description: String { all.map { "\($0.path):\($0.line):\($0.column): \($0.message)" }.joined(separator: "\n") }
}
