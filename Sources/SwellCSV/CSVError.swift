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
    /// What kind of failure, to switch on (the message has the detail).
    public enum Kind: Sendable, Equatable {
        /// The disk (or the user's quota) is full: ENOSPC, EDQUOT.
        case diskFull
        /// The file or its directory may not be written: EACCES, EPERM.
        case permissionDenied
        /// The file system is mounted read-only: EROFS.
        case readOnlyFileSystem
        /// The directory does not exist (or a part of the path is not a directory): ENOENT, ENOTDIR.
        case noSuchDirectory
        /// Another failed system call, with its errno (EIO, EISDIR, …).
        case system(errno: Int32)
        /// `write(2)` accepted no bytes without reporting an error.
        case writeStalled
        /// The path is empty or does not name a file.
        case invalidPath
        /// The output was already finished (or failed earlier): nothing more can be written.
        case finished
        /// A setting is out of range (a gzip level outside 1...9, no compression thread).
        case invalidSetting
        /// The compressor (libdeflate) or zlib (reading gzip, joining blocks) failed to start or to go on.
        case compression
        /// The data is not gzip, or is cut short.
        case invalidGzip
    }

    /// What kind of failure.
    public var kind: Kind
    /// The target file the error is about ("(gzip data)" for in-memory decompression).
    public var path: String
    /// What failed and why.
    public var message: String

    /// Creates an error of `kind` about `path`.
    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// "`path`: `message`".
    public var description: String {
        "\(path): \(message)"
    }
}

extension CSVError.Kind {
    /// The kind of a failed system call's errno.
    init(errno code: Int32) {
        switch code {
        case ENOSPC, EDQUOT: self = .diskFull
        case EACCES, EPERM: self = .permissionDenied
        case EROFS: self = .readOnlyFileSystem
        case ENOENT, ENOTDIR: self = .noSuchDirectory
        default: self = .system(errno: code)
        }
    }
}

extension CSVError {
    /// An error for a failed system call: `operation` ("cannot write '…'") followed by the errno text.
    static func system(path: String, _ operation: String, errno code: Int32) -> CSVError {
        CSVError(Kind(errno: code), path: path, message: "\(operation): \(String(cString: strerror(code))) (errno \(code))")
    }
}
