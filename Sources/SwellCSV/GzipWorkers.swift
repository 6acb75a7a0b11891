import Foundation

/// Compression threads for `GzipEncoder`: each owns one `DeflateBlockCompressor` and compresses
/// the blocks it takes from a shared queue, in any order; the encoder puts them back in order.
///
/// `@unchecked Sendable`: the queue, the thread count and every block's `isFinished`/`failed`
/// are read and written only while holding `condition`. A block taken from the queue belongs to
/// the one worker compressing it until it is marked finished; each compressor is used by its
/// own worker only.
final class GzipWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [GzipBlock] = []
    private var running = 0
    private var stopping = false
    /// One per thread, used by that thread only.
    private let compressors: [DeflateBlockCompressor]

    /// Starts `threads` workers, each with a compressor at `level`.
    ///
    /// - Throws: `CSVError` naming `path` when a compressor cannot be allocated.
    init(threads: Int, level: Int, path: String) throws(CSVError) {
        var compressors: [DeflateBlockCompressor] = []
        for _ in 0..<threads {
            guard let compressor = DeflateBlockCompressor(level: level) else {
                throw CSVError(.compression, path: path, message: "cannot start gzip compression at level \(level)")
            }
            compressors.append(compressor)
        }
        self.compressors = compressors
        running = threads
        for index in 0..<threads {
            let thread = Thread { [self] in work(with: self.compressors[index]) }
            thread.name = "swell-gzip-\(index)"
            thread.start()
        }
    }

    /// Queues `block` for compression.
    func submit(_ block: GzipBlock) {
        condition.lock()
        queue.append(block)
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until `block` is compressed; returns whether compression failed.
    func wait(for block: GzipBlock) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !block.isFinished { condition.wait() }
        return block.failed
    }

    /// Whether `block` is compressed, without waiting.
    func isFinished(_ block: GzipBlock) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return block.isFinished
    }

    /// Drops queued blocks, lets each worker finish the block in hand, and waits for all of them to exit.
    ///
    /// Called when the stream is complete or abandoned; later calls return at once.
    func stop() {
        condition.lock()
        stopping = true
        queue.removeAll()
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work(with compressor: DeflateBlockCompressor) {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping { break }
            let block = queue.removeFirst()
            condition.unlock()
            let succeeded = block.compress(using: compressor)
            condition.lock()
            block.failed = !succeeded
            block.isFinished = true
            condition.broadcast()
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
