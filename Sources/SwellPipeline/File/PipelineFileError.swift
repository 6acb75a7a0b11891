/// A pipeline file that does not load or validate: names the file, the line
/// and column (1-based) and what is wrong. `swell` exits 64 with it.
public struct PipelineFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var column: Int
    public var message: String

    public init(path: String, line: Int, column: Int, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "\(path):\(line):\(column): \(message)" }
}
