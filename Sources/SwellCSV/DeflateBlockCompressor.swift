import CLibDeflate
import CZlib

/// Compresses one block of a parallel gzip stream: libdeflate deflates the whole buffer, and a
/// block that is not the stream's last is then made joinable to the next one.
///
/// libdeflate compresses in one call at about a third of zlib's CPU for the same level and size,
/// but every stream it writes ends with a final block (BFINAL set), which would end the deflate
/// stream there. For a block that is not the last, `compress` finds that final block's header
/// and clears the bit, then ends the block on a byte boundary with an empty stored block
/// (`00 00 FF FF`, what zlib's Z_SYNC_FLUSH writes), so blocks concatenate into one deflate
/// stream inside one gzip member, as pigz's do. Finding the last block's header takes a pass of
/// zlib's inflate with Z_BLOCK, which stops at every block boundary and reports the bit
/// position there (the technique of zlib's own `examples/gzjoin.c`). That pass also proves the
/// block decompresses.
///
/// One compressor per thread: neither libdeflate's compressor nor the inflate stream may be
/// shared. Not `Sendable`; `GzipWorkers` gives each of its threads one.
final class DeflateBlockCompressor {
    /// Bytes `compress` may add after libdeflate's own output: a byte for the stored block's
    /// header and its LEN/NLEN.
    static let joinBytes = 5

    private let compressor: OpaquePointer
    private let inflater: UnsafeMutablePointer<z_stream>
    /// Where inflate writes what it decompresses; only the bit positions are used.
    private let scratch: UnsafeMutablePointer<UInt8>
    private static let scratchSize = 64 * 1024

    /// A compressor at `level` (1...9, libdeflate's levels, which follow zlib's); nil when
    /// libdeflate or zlib cannot allocate one.
    init?(level: Int) {
        guard let compressor = libdeflate_alloc_compressor(Int32(level)) else { return nil }
        let inflater = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        inflater.initialize(to: z_stream())
        guard swell_inflate_init2(inflater, -15) == Z_OK else {
            libdeflate_free_compressor(compressor)
            inflater.deinitialize(count: 1)
            inflater.deallocate()
            return nil
        }
        self.compressor = compressor
        self.inflater = inflater
        scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: DeflateBlockCompressor.scratchSize)
    }

    deinit {
        libdeflate_free_compressor(compressor)
        inflateEnd(inflater)
        inflater.deinitialize(count: 1)
        inflater.deallocate()
        scratch.deallocate()
    }

    /// The output capacity `compress` needs for `count` input bytes, at any level.
    static func bound(for count: Int) -> Int {
        // The bound for a nil compressor holds for every level.
        libdeflate_deflate_compress_bound(nil, count) + joinBytes
    }

    /// Deflates `count` bytes of `input` into `output` (at least `bound(for: count)` bytes).
    ///
    /// - Parameter isLast: the block ends the deflate stream; otherwise it ends on a byte
    ///   boundary without the final bit, ready for the next block's deflate bytes.
    /// - Returns: the bytes written, or nil when libdeflate's output did not fit (it cannot, at
    ///   `bound`) or its output did not decompress.
    func compress(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>, capacity: Int, isLast: Bool) -> Int? {
        let deflated = libdeflate_deflate_compress(compressor, input, count, output, capacity - DeflateBlockCompressor.joinBytes)
        guard deflated > 0 else { return nil }
        return isLast ? deflated : join(output, count: deflated)
    }

    /// Clears the final bit of the deflate stream in `stream`'s first `count` bytes and ends it
    /// with an empty stored block; returns the new length, nil when the stream does not inflate.
    func join(_ stream: UnsafeMutablePointer<UInt8>, count: Int) -> Int? {
        guard inflateReset(inflater) == Z_OK else { return nil }
        inflater.pointee.next_in = stream
        inflater.pointee.avail_in = UInt32(count)
        defer {
            inflater.pointee.next_in = nil
            inflater.pointee.next_out = nil
        }
        // The block being decoded starts at this bit (its BFINAL bit): the stream's first bit at first.
        var headerByte = 0
        var headerBit = 0
        while true {
            inflater.pointee.next_out = scratch
            inflater.pointee.avail_out = UInt32(DeflateBlockCompressor.scratchSize)
            let status = inflate(inflater, Z_BLOCK)
            guard status == Z_OK else { return nil }
            let state = inflater.pointee.data_type
            let consumed = count - Int(inflater.pointee.avail_in)
            guard state & 128 != 0 else {
                // Mid-block: the scratch filled up. No input left means a cut stream.
                guard inflater.pointee.avail_in > 0 || inflater.pointee.avail_out == 0 else { return nil }
                continue
            }
            // At a block boundary: `unused` high bits of the last byte read are not the block's.
            let unused = Int(state & 7)
            guard state & 64 != 0 else {
                (headerByte, headerBit) = unused > 0 ? (consumed - 1, 8 - unused) : (consumed, 0)
                continue
            }
            // The block just decoded is the final one: nothing may follow it.
            guard consumed == count else { return nil }
            stream[headerByte] &= ~(UInt8(1) << UInt8(headerBit))
            var end = count
            // The stored block's three header bits (0: not final, 00: stored) go in the last
            // byte's unused bits when they fit, else in a byte of their own; both are zeros.
            if unused > 0 { stream[end - 1] &= UInt8(0xFF) >> UInt8(unused) }
            if unused < 3 {
                stream[end] = 0
                end += 1
            }
            // LEN 0, NLEN 0xFFFF.
            stream[end] = 0
            stream[end + 1] = 0
            stream[end + 2] = 0xFF
            stream[end + 3] = 0xFF
            return end + 4
        }
    }
}

@available(*, unavailable)
extension DeflateBlockCompressor: Sendable {}
