/// A gzip file output: bytes are deflated into a temporary file that `finish()` renames onto `path`.
///
/// zlib deflate with the gzip wrapper (windowBits 15+16): mtime 0, no file name, OS 3, so
/// identical input gives byte-identical files. Compressed bytes reach the disk in 128 KiB writes
/// while you write, so `bytesWritten` grows before `finish()`. Compression runs on the calling
/// thread: call from a thread that may block, not from the cooperative pool's hot path.
/// Use from one thread at a time.
public final class GzipFileOutput: CSVOutput {
    private let file: AtomicFile
    private let encoder: GzipEncoder

    /// Opens a temporary file beside `path` (creating missing directories) and starts compression at `level`.
    ///
    /// - Parameter level: zlib's level, 1 (fastest) ... 9 (smallest); 6 by default.
    /// - Throws: `CSVError` naming `path` for a level outside 1...9, a directory that cannot be
    ///   created or a file that cannot be opened.
    public init(path: String, level: Int = 6) throws(CSVError) {
        encoder = try GzipEncoder(level: level, path: path)
        file = try AtomicFile(path: path)
    }

    /// Compresses `bytes`; full compressed buffers are written as they fill.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError) {
        try file.checkOpen()
        do {
            try encoder.compress(bytes, into: file)
        } catch {
            file.discard()
            throw error
        }
    }

    /// Ends the gzip stream, fsyncs the temporary file and renames it onto the target.
    public func finish() throws(CSVError) {
        try file.checkOpen()
        do {
            try encoder.finish(into: file)
        } catch {
            file.discard()
            throw error
        }
        try file.commit()
    }

    /// Removes the temporary file; the target is left as it was.
    public func abort() {
        file.discard()
    }

    /// Compressed bytes written to the file so far.
    public var bytesWritten: Int64 {
        file.bytesWritten
    }
}

@available(*, unavailable)
extension GzipFileOutput: Sendable {}
