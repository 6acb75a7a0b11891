/// A gzip file output: bytes are deflated into a temporary file that `finish()` renames onto `path`.
///
/// Compression runs on `threads` threads of its own, pigz-style: the input is cut into 2 MiB
/// blocks, each compressed on a worker by libdeflate, and the results are joined in order into
/// one deflate stream in one gzip member (mtime 0, no file name, OS 3; see `GzipEncoder`).
/// Identical input gives byte-identical files (for one libdeflate version), however it is split
/// across `write` calls and whatever `threads` is.
/// Compressed blocks reach the disk while you write, so `bytesWritten` grows before `finish()`;
/// `write` blocks while 2 × `threads` blocks are outstanding, so memory stays bounded. Writes to
/// the file happen on the calling thread: call from a thread that may block, not from the
/// cooperative pool's hot path. Use from one thread at a time.
public final class GzipFileOutput: CSVOutput {
    private let file: AtomicFile
    private let encoder: GzipEncoder

    /// Opens a temporary file beside `path` (creating missing directories) and starts `threads` compression threads at `level`.
    ///
    /// - Parameters:
    ///   - level: the compression level, 1 (fastest) ... 9 (smallest), as gzip's; 6 by default.
    ///   - threads: compression threads, at least 1; 2 by default.
    ///   - onFileBytes: called with every byte the file gets (compressed), in order, on the
    ///     writing thread — to hash the file as it is written rather than read it back.
    /// - Throws: `CSVError` naming `path` for a level outside 1...9, fewer than 1 thread, a
    ///   directory that cannot be created or a file that cannot be opened.
    public init(path: String, level: Int = 6, threads: Int = 2,
                onFileBytes: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(CSVError) {
        encoder = try GzipEncoder(level: level, threads: threads, path: path)
        file = try AtomicFile(path: path, observer: onFileBytes)
    }

    /// Compresses `bytes`; blocks compressed by now are written, in order.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError) {
        try file.checkOpen()
        do {
            try encoder.compress(bytes, into: file)
        } catch {
            encoder.stop()
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
            encoder.stop()
            file.discard()
            throw error
        }
        try file.commit()
    }

    /// Stops the compression threads and removes the temporary file; the target is left as it was.
    public func abort() {
        encoder.stop()
        file.discard()
    }

    /// Compressed bytes written to the file so far.
    public var bytesWritten: Int64 {
        file.bytesWritten
    }
}

@available(*, unavailable)
extension GzipFileOutput: Sendable {}
