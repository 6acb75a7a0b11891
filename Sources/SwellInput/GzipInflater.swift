import CZlib

/// Reads gzip streams back, piece by piece, in constant memory (zlib's inflate): what a
/// source whose file or URL ends in `.gz` sends through before its pages are parsed.
/// Several gzip members one after another (what `cat a.gz b.gz` or a parallel compressor
/// writes) read as one stream, as `gzip -d` reads them. Input whose first byte is not
/// gzip's (0x1F) is passed on unchanged: no JSON or CSV text starts with that byte, and a
/// `.gz` URL served with `Content-Encoding: gzip` arrives already decoded.
///
/// One per stream; not shared between threads (zlib's stream is not).
public final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<UInt8>
    private static let outputSize = 256 * 1024
    /// The stream ended (a member's end) and no byte came after it yet.
    private var atMemberEnd = false
    /// The input did not start with gzip's magic byte: it is passed on as it is (a server
    /// that sent a `.gz` file with `Content-Encoding: gzip` had curl decode it already).
    private var passesThrough = false
    /// Compressed bytes taken so far, for error messages.
    private(set) public var consumed = 0

    /// Why a stream could not be read: the offset in the compressed bytes and zlib's words.
    public struct Failure: Error, CustomStringConvertible {
        public let offset: Int
        public let message: String
        public var description: String { "not valid gzip at byte \(offset) of the compressed data: \(message)" }
    }

    /// A new inflater; nil when zlib cannot allocate one.
    public init?() {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper (not zlib's, not raw deflate), the largest window.
        guard swell_inflate_init2(stream, 15 + 16) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        output = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.outputSize)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Inflates `input`, handing what it gives to `body` in pieces of at most 256 KiB.
    ///
    /// - Throws: `Failure` for bytes that are not gzip; `body`'s error.
    public func inflate(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), !input.isEmpty else { return }
        if consumed == 0 && !atMemberEnd && input[0] != 0x1F { passesThrough = true }
        if passesThrough {
            consumed += input.count
            return try body(input)
        }
        var offset = 0
        while offset < input.count {
            if atMemberEnd {
                // Another member follows: start it afresh.
                guard inflateReset(stream) == Z_OK else { throw Failure(offset: consumed, message: "zlib could not reset") }
                atMemberEnd = false
            }
            let chunk = min(input.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base + offset)
            stream.pointee.avail_in = UInt32(chunk)
            var ended = false
            repeat {
                stream.pointee.next_out = output
                stream.pointee.avail_out = UInt32(Self.outputSize)
                let code = CZlib.inflate(stream, Z_NO_FLUSH)
                let produced = Self.outputSize - Int(stream.pointee.avail_out)
                if produced > 0 { try body(UnsafeRawBufferPointer(start: output, count: produced)) }
                switch code {
                case Z_OK, Z_BUF_ERROR:
                    break
                case Z_STREAM_END:
                    ended = true
                default:
                    let taken = chunk - Int(stream.pointee.avail_in)
                    let words = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                    throw Failure(offset: consumed + taken, message: words)
                }
            } while !ended && (stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0)
            let taken = chunk - Int(stream.pointee.avail_in)
            consumed += taken
            offset += taken
            stream.pointee.next_in = nil
            if ended { atMemberEnd = true }
            if !ended && taken == 0 { break }
        }
    }

    /// Checks that the stream ended where its input did.
    ///
    /// - Throws: `Failure` when the last member is cut short.
    public func finish() throws {
        guard atMemberEnd || passesThrough else { throw Failure(offset: consumed, message: "the compressed data ends before its gzip stream does (a truncated file?)") }
    }
}
