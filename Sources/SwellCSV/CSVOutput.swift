/// Where CSV bytes go. Implementations: `AtomicFileOutput` (plain) and `GzipFileOutput`.
///
/// An output is used from one thread at a time and is not `Sendable`. Its target appears whole or
/// not at all: bytes go to a temporary file beside the target, and only `finish()` renames it into
/// place. After a failed `write` or `finish` the temporary file is already removed and further
/// calls throw.
public protocol CSVOutput: AnyObject {
    /// Appends bytes to the file.
    ///
    /// - Throws: `CSVError` naming the target path (disk full, I/O error, already finished).
    func write(_ bytes: UnsafeRawBufferPointer) throws(CSVError)
    /// Completes the file: flushes, fsyncs, renames the temporary file onto the target. Only now does the target exist/change.
    ///
    /// - Throws: `CSVError` naming the target path; the target is then left as it was.
    func finish() throws(CSVError)
    /// Gives up: removes the temporary file; the target is left as it was. Also done by deinit when finish() was not called.
    func abort()
    /// Bytes written to the file so far (compressed bytes for gzip).
    var bytesWritten: Int64 { get }
}
