import CZlib

/// One fixed-size piece of the uncompressed input and its raw-deflate output.
///
/// The input buffer holds the previous block's last 32 KiB (the dictionary) followed by up to
/// `GzipEncoder.blockSize` bytes of this block. The encoder's thread fills a block, hands it to
/// `GzipWorkers`, and touches it again only after the workers mark it finished; in between one
/// worker owns it. That hand-over happens under the workers' lock, so the block needs none.
final class GzipBlock {
    /// Dictionary bytes (the previous block's tail) in front of `input`; 0 for the first block.
    private(set) var dictionaryCount = 0
    /// Input bytes of this block.
    private(set) var count = 0
    /// The last block ends the deflate stream (Z_FINISH); the others end on a byte boundary (Z_SYNC_FLUSH).
    var isLast = false
    /// CRC-32 of this block's input (not the dictionary), valid once compressed.
    private(set) var crc: UInt = 0
    /// zlib's status when compression failed, nil when it succeeded. Set by the workers under their lock.
    var failure: Int32?
    /// Set by the workers under their lock once `compress` returned.
    var isFinished = false

    private let storage: UnsafeMutablePointer<UInt8>
    /// Raw deflate bytes (`outputCount` of them), valid once compressed.
    private var output: UnsafeMutablePointer<UInt8>
    private var outputCount = 0
    private var outputCapacity: Int

    init() {
        storage = UnsafeMutablePointer<UInt8>.allocate(capacity: GzipEncoder.dictionarySize + GzipEncoder.blockSize)
        // compressBound covers a whole zlib stream of blockSize bytes; the sync flush adds at most 5.
        outputCapacity = Int(compressBound(UInt(GzipEncoder.blockSize))) + 16
        output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputCapacity)
    }

    deinit {
        storage.deallocate()
        output.deallocate()
    }

    /// Bytes still free in the input.
    var room: Int {
        GzipEncoder.blockSize - count
    }

    /// Empties the block and copies the dictionary (the last 32 KiB of `previous`'s input) in front of it.
    func reset(following previous: GzipBlock?) {
        count = 0
        outputCount = 0
        crc = 0
        isLast = false
        failure = nil
        isFinished = false
        dictionaryCount = 0
        guard let previous else { return }
        let size = min(GzipEncoder.dictionarySize, previous.dictionaryCount + previous.count)
        let tail = previous.storage + previous.dictionaryCount + previous.count - size
        storage.update(from: tail, count: size)
        dictionaryCount = size
    }

    /// Appends up to `room` bytes from `source`; returns how many were taken.
    func append(_ source: UnsafePointer<UInt8>, count wanted: Int) -> Int {
        let taken = min(wanted, room)
        (storage + dictionaryCount + count).update(from: source, count: taken)
        count += taken
        return taken
    }

    /// Deflates the input with `stream` (raw deflate, reset here), seeded with the dictionary.
    ///
    /// - Returns: nil on success, else zlib's failing status.
    func compress(using stream: UnsafeMutablePointer<z_stream>) -> Int32? {
        var status = deflateReset(stream)
        guard status == Z_OK else { return status }
        if dictionaryCount > 0 {
            status = deflateSetDictionary(stream, storage, UInt32(dictionaryCount))
            guard status == Z_OK else { return status }
        }
        let input = storage + dictionaryCount
        crc = crc32(0, input, UInt32(count))
        stream.pointee.next_in = input
        stream.pointee.avail_in = UInt32(count)
        let flush = isLast ? Z_FINISH : Z_SYNC_FLUSH
        outputCount = 0
        while true {
            stream.pointee.next_out = output + outputCount
            stream.pointee.avail_out = UInt32(outputCapacity - outputCount)
            status = deflate(stream, flush)
            outputCount = outputCapacity - Int(stream.pointee.avail_out)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { return status }
            let done = isLast ? status == Z_STREAM_END : stream.pointee.avail_out > 0
            if done { break }
            growOutput()
        }
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        return nil
    }

    /// The compressed bytes.
    var compressed: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: output, count: outputCount)
    }

    /// Doubles the output buffer, keeping what it holds (only for input that does not compress).
    private func growOutput() {
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: outputCapacity * 2)
        larger.update(from: output, count: outputCount)
        output.deallocate()
        output = larger
        outputCapacity *= 2
    }
}

@available(*, unavailable)
extension GzipBlock: Sendable {}
