import CZlib

/// A gzip stream compressed on several threads (as pigz does), written in order to an `AtomicFile`.
///
/// The input is cut into blocks of `blockSize` bytes at fixed offsets, whatever the sizes of the
/// `compress` calls. Each block is deflated on a worker by libdeflate (`DeflateBlockCompressor`),
/// on its own: at 1 MiB a block loses about 0.1 % of size to not seeing the previous block's
/// bytes. Every block but the last ends on a byte boundary without the final bit (an empty stored
/// block, as zlib's Z_SYNC_FLUSH leaves it), the last ends the stream; concatenated, they are one
/// deflate stream inside one gzip member, so readers that stop after a member see everything. The
/// header (mtime 0, no file name, OS 3) and trailer (CRC-32 combined block by block, length mod
/// 2^32) are written here. The output depends only on the bytes, the level and libdeflate's
/// version: not on how they were split across calls, nor on the number of threads.
///
/// At most `blocksInFlight(threads:)` blocks wait for or undergo compression; `compress` blocks
/// the caller while that many are outstanding, so memory stays bounded. Compressed blocks are
/// written by the caller's thread as they become ready. Use from one thread at a time.
final class GzipEncoder {
    /// Uncompressed bytes per block.
    static let blockSize = 2 * 1024 * 1024

    /// Blocks queued or being compressed at most, for `threads` workers.
    static func blocksInFlight(threads: Int) -> Int {
        2 * threads
    }

    private let workers: GzipWorkers
    private let path: String
    private let extraFlags: UInt8
    private let maxInFlight: Int
    /// The block being filled; handed to the workers once full and more input arrives, or at `finish`.
    private var current = GzipBlock()
    /// Submitted blocks, oldest first: they are written in this order.
    private var inFlight: [GzipBlock] = []
    private var spare: [GzipBlock] = []
    private var headerWritten = false
    /// The 10-byte header, later the 8-byte trailer, on their way to `file.write`.
    private let framing = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
    private var crc: UInt = 0
    private var length: UInt64 = 0

    /// Starts `threads` compression threads at `level` (1...9).
    ///
    /// - Throws: `CSVError` naming `path` when the level is out of range, `threads` is below 1,
    ///   or the compressor cannot start.
    init(level: Int, threads: Int, path: String) throws(CSVError) {
        guard (1...9).contains(level) else {
            throw CSVError(.invalidSetting, path: path, message: "gzip level must be 1...9, not \(level)")
        }
        guard threads >= 1 else {
            throw CSVError(.invalidSetting, path: path, message: "gzip needs at least 1 compression thread, not \(threads)")
        }
        workers = try GzipWorkers(threads: threads, level: level, path: path)
        self.path = path
        // XFL as zlib and gzip set it: 2 for the slowest level, 4 for the fastest.
        extraFlags = level == 9 ? 2 : level == 1 ? 4 : 0
        maxInFlight = GzipEncoder.blocksInFlight(threads: threads)
    }

    deinit {
        workers.stop()
        framing.deallocate()
    }

    /// Adds `bytes` to the stream; writes the blocks that are compressed by now, waiting only when too many are outstanding.
    ///
    /// - Throws: `CSVError` naming the path when compression fails or a write fails.
    func compress(_ bytes: UnsafeRawBufferPointer, into file: AtomicFile) throws(CSVError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var next = base.assumingMemoryBound(to: UInt8.self)
        var remaining = bytes.count
        while remaining > 0 {
            if current.room == 0 {
                try startNextBlock(into: file)
            }
            let taken = current.append(next, count: remaining)
            next += taken
            remaining -= taken
        }
        try writeCompressedBlocks(into: file, waiting: false)
    }

    /// Compresses the last block, writes every block in order and the trailer (CRC-32, length), then stops the threads.
    ///
    /// - Throws: `CSVError` naming the path when compression fails or a write fails.
    func finish(into file: AtomicFile) throws(CSVError) {
        current.isLast = true
        submit(current)
        try writeCompressedBlocks(into: file, waiting: true)
        storeLittleEndian(UInt32(truncatingIfNeeded: crc), at: 0)
        storeLittleEndian(UInt32(truncatingIfNeeded: length), at: 4)
        try file.write(UnsafeRawBufferPointer(start: framing, count: 8))
        workers.stop()
    }

    /// Stops the compression threads, dropping queued blocks (after an error or `abort()`).
    func stop() {
        workers.stop()
    }

    /// Submits the full `current` block and starts its successor.
    private func startNextBlock(into file: AtomicFile) throws(CSVError) {
        while inFlight.count >= maxInFlight {
            try writeOldestBlock(into: file)
        }
        let next = spare.popLast() ?? GzipBlock()
        next.reset()
        submit(current)
        current = next
    }

    private func submit(_ block: GzipBlock) {
        inFlight.append(block)
        workers.submit(block)
    }

    /// Writes compressed blocks in order: all of them when `waiting`, else those ready without waiting.
    private func writeCompressedBlocks(into file: AtomicFile, waiting: Bool) throws(CSVError) {
        while let oldest = inFlight.first, waiting || workers.isFinished(oldest) {
            try writeOldestBlock(into: file)
        }
    }

    /// Waits for the oldest submitted block, writes it (after the header, for the first) and keeps its buffers for reuse.
    private func writeOldestBlock(into file: AtomicFile) throws(CSVError) {
        let block = inFlight.removeFirst()
        if workers.wait(for: block) {
            throw CSVError(.compression, path: path, message: "gzip compression failed")
        }
        if !headerWritten {
            // ID1 ID2, CM 8 (deflate), FLG 0 (no name, comment or extra), MTIME 0, XFL, OS 3 (Unix).
            let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, extraFlags, 3]
            framing.update(from: header, count: header.count)
            try file.write(UnsafeRawBufferPointer(start: framing, count: header.count))
            headerWritten = true
        }
        try file.write(block.compressed)
        crc = crc32_combine(crc, UInt(block.crc), Int(block.count))
        length &+= UInt64(block.count)
        spare.append(block)
    }

    private func storeLittleEndian(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            framing[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index))
        }
    }
}

@available(*, unavailable)
extension GzipEncoder: Sendable {}
