import CZlib

/// Decompresses gzip: the package's tests read exports back with it (`package`, not public API).
package enum Gzip {
    /// The `path` that errors from in-memory decompression carry.
    static let memoryPath = "(gzip data)"

    /// Decompresses one gzip file's bytes; concatenated members (as `cat a.gz b.gz` makes) are joined.
    ///
    /// - Throws: `CSVError` when the data is not gzip, is corrupt (CRC or length mismatch) or is truncated.
    package static func decompress(_ data: [UInt8]) throws(CSVError) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        // windowBits 15 + 16: gzip wrapper only.
        let status = swell_inflate_init2(stream, 15 + 16)
        guard status == Z_OK else {
            throw CSVError(.compression, path: memoryPath, message: "cannot start gzip decompression (zlib status \(status))")
        }
        defer { inflateEnd(stream) }

        let chunkSize = 256 * 1024
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: max(data.count, 1))
        defer { input.deallocate() }
        data.withUnsafeBufferPointer { source in
            if let base = source.baseAddress {
                input.update(from: base, count: source.count)
            }
        }

        var result: [UInt8] = []
        result.reserveCapacity(data.count * 4)
        var consumed = 0
        var memberEnded = false
        while true {
            if memberEnded {
                if consumed == data.count { break }
                inflateReset(stream)
                memberEnded = false
            }
            let available = min(data.count - consumed, Int(UInt32.max))
            stream.pointee.next_in = input + consumed
            stream.pointee.avail_in = UInt32(available)
            stream.pointee.next_out = chunk
            stream.pointee.avail_out = UInt32(chunkSize)
            let status = inflate(stream, Z_NO_FLUSH)
            consumed += available - Int(stream.pointee.avail_in)
            let produced = chunkSize - Int(stream.pointee.avail_out)
            result.append(contentsOf: UnsafeBufferPointer(start: chunk, count: produced))
            switch status {
            case Z_STREAM_END:
                memberEnded = true
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                guard produced > 0 else {
                    throw CSVError(.invalidGzip, path: memoryPath, message: "gzip data is truncated")
                }
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw CSVError(.invalidGzip, path: memoryPath, message: "not valid gzip data: \(reason)")
            }
        }
        return result
    }
}
