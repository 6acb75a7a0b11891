import CLibDeflate

/// One fixed-size piece of the uncompressed input and its raw-deflate output.
///
/// The encoder's thread fills a block, hands it to `GzipWorkers`, and touches it again only
/// after the workers mark it finished; in between one worker owns it. That hand-over happens
/// under the workers' lock, so the block needs none.
final class GzipBlock {
    /// Input bytes of this block.
    private(set) var count = 0
    /// The last block ends the deflate stream; the others end on a byte boundary, not final.
    var isLast = false
    /// CRC-32 of this block's input, valid once compressed.
    private(set) var crc: UInt32 = 0
    /// Set by the workers under their lock when compression failed.
    var failed = false
    /// Set by the workers under their lock once `compress` returned.
    var isFinished = false

    private let input: UnsafeMutablePointer<UInt8>
    /// Raw deflate bytes (`outputCount` of them), valid once compressed.
    private let output: UnsafeMutablePointer<UInt8>
    private let outputCapacity: Int
    private var outputCount = 0

    init() {
        input = UnsafeMutablePointer<UInt8>.allocate(capacity: GzipEncoder.blockSize)
        outputCapacity = DeflateBlockCompressor.bound(for: GzipEncoder.blockSize)
        output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputCapacity)
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// Bytes still free in the input.
    var room: Int {
        GzipEncoder.blockSize - count
    }

    /// Empties the block for reuse.
    func reset() {
        count = 0
        outputCount = 0
        crc = 0
        isLast = false
        failed = false
        isFinished = false
    }

    /// Appends up to `room` bytes from `source`; returns how many were taken.
    func append(_ source: UnsafePointer<UInt8>, count wanted: Int) -> Int {
        let taken = min(wanted, room)
        (input + count).update(from: source, count: taken)
        count += taken
        return taken
    }

    /// Deflates the input with `compressor` (which only the calling thread may be using).
    ///
    /// - Returns: false when compression failed; the block then holds no output.
    func compress(using compressor: DeflateBlockCompressor) -> Bool {
        crc = libdeflate_crc32(0, input, count)
        guard let written = compressor.compress(input, count: count, into: output, capacity: outputCapacity, isLast: isLast) else {
            outputCount = 0
            return false
        }
        outputCount = written
        return true
    }

    /// The compressed bytes.
    var compressed: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: output, count: outputCount)
    }
}

@available(*, unavailable)
extension GzipBlock: Sendable {}
