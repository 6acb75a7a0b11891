#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure while writing or reading an export: it names the file and says what went wrong.
///
/// `path` is the export's target path (the file the user asked for), also when the failing call
/// was on its temporary file; `message` says which operation failed and why, for example
/// "cannot write '.out.csv.tmp-41-9f3a': No space left on device (errno 28)".
public struct CSVError: Error, Sendable, CustomStringConvertible {
    /// The target file the error is about ("(gzip data)" for in-memory decompression).
    public var path: String
    /// What failed and why.
    public var message: String

    /// Creates an error about `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// "`path`: `message`".
    public var description: String {
        "\(path): \(message)"
    }
}

extension CSVError {
    /// An error for a failed system call: `operation` ("cannot write '…'") followed by the errno text.
    static func system(path: String, _ operation: String, errno code: Int32) -> CSVError {
        CSVError(path: path, message: "\(operation): \(String(cString: strerror(code))) (errno \(code))")
    }
}
