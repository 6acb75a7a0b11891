/// A plain file output: bytes go unchanged to a temporary file that `finish()` renames onto `path`.
///
/// `init` creates missing directories and the temporary file ".<name>.tmp-<pid>-<random>" beside
/// the target. Each `write` is one write(2) call, so hand it whole buffers (`CSVWriter` does).
/// Use from one thread at a time.
public final class AtomicFileOutput: CSVOutput {
    private let file: AtomicFile

    /// Opens a temporary file beside `path`, creating missing directories. `onFileBytes` is
    /// called with every byte the file gets, in order (to hash the file as it is written).
    ///
    /// - Throws: `CSVError` naming `path` when a directory cannot be created or the file cannot be opened.
    public init(path: String, onFileBytes: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(CSVError) {
        file = try AtomicFile(path: path, observer: onFileBytes)
    }

    /// Appends `bytes` to the temporary file.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError) {
        try file.write(bytes)
    }

    /// Fsyncs the temporary file and renames it onto the target.
    public func finish() throws(CSVError) {
        try file.commit()
    }

    /// Removes the temporary file; the target is left as it was.
    public func abort() {
        file.discard()
    }

    /// Bytes written to the file so far.
    public var bytesWritten: Int64 {
        file.bytesWritten
    }
}

@available(*, unavailable)
extension AtomicFileOutput: Sendable {}
