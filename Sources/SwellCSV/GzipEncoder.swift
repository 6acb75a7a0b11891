import CZlib

/// One zlib deflate stream with the gzip wrapper, writing its output to an `AtomicFile`.
///
/// Everything `GzipFileOutput` knows about compression lives here: a parallel encoder
/// (independent blocks on several cores) can replace this type without touching the output.
/// The gzip header zlib writes has mtime 0, no file name and OS 3, so identical input gives
/// identical bytes. The `z_stream` and the output buffer live at stable addresses because zlib
/// keeps pointers to them between calls.
final class GzipEncoder {
    /// Compressed bytes are collected here and written with one write(2) whenever it fills.
    static let outputBufferSize = 128 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<UInt8>
    private let path: String

    /// Starts a deflate stream at `level` (1...9).
    ///
    /// - Throws: `CSVError` naming `path` when the level is out of range or zlib cannot start.
    init(level: Int, path: String) throws(CSVError) {
        guard (1...9).contains(level) else {
            throw CSVError(path: path, message: "gzip level must be 1...9, not \(level)")
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15 + 16: a 32 KiB window with the gzip wrapper; memLevel 8 is zlib's default.
        let status = swell_deflate_init2(stream, Int32(level), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw CSVError(path: path, message: "cannot start gzip compression (zlib status \(status))")
        }
        self.stream = stream
        self.output = UnsafeMutablePointer<UInt8>.allocate(capacity: GzipEncoder.outputBufferSize)
        self.path = path
        resetOutput()
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `bytes`, writing each filled output buffer to `file`.
    func compress(_ bytes: UnsafeRawBufferPointer, into file: AtomicFile) throws(CSVError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var next = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        var remaining = bytes.count
        while remaining > 0 {
            let chunk = min(remaining, Int(UInt32.max))
            stream.pointee.next_in = next
            stream.pointee.avail_in = UInt32(chunk)
            while stream.pointee.avail_in > 0 {
                try run(Z_NO_FLUSH, into: file)
            }
            next += chunk
            remaining -= chunk
        }
        stream.pointee.next_in = nil
    }

    /// Ends the stream (the deflate tail and the gzip trailer: CRC-32 and length) and writes what is left.
    func finish(into file: AtomicFile) throws(CSVError) {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        while try run(Z_FINISH, into: file) != Z_STREAM_END {}
        try writeOutput(into: file)
    }

    /// One deflate call; a full output buffer is written to `file` afterwards.
    @discardableResult
    private func run(_ flush: Int32, into file: AtomicFile) throws(CSVError) -> Int32 {
        let status = deflate(stream, flush)
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            throw CSVError(path: path, message: "gzip compression failed (zlib status \(status))")
        }
        if stream.pointee.avail_out == 0 {
            try writeOutput(into: file)
        }
        return status
    }

    private func writeOutput(into file: AtomicFile) throws(CSVError) {
        let count = GzipEncoder.outputBufferSize - Int(stream.pointee.avail_out)
        guard count > 0 else { return }
        try file.write(UnsafeRawBufferPointer(start: output, count: count))
        resetOutput()
    }

    private func resetOutput() {
        stream.pointee.next_out = output
        stream.pointee.avail_out = UInt32(GzipEncoder.outputBufferSize)
    }
}
