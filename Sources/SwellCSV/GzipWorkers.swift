import CZlib
import Foundation

/// Compression threads for `GzipEncoder`: each owns one raw-deflate `z_stream` and compresses
/// the blocks it takes from a shared queue, in any order; the encoder puts them back in order.
///
/// `@unchecked Sendable`: the queue, the thread count and every block's `isFinished`/`failure`
/// are read and written only while holding `condition`. A block taken from the queue belongs to
/// the one worker compressing it until it is marked finished; each `z_stream` is used by its own
/// worker only (it lives at a stable address because zlib keeps pointers into it).
final class GzipWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [GzipBlock] = []
    private var running = 0
    private var stopping = false
    private let streams: [UnsafeMutablePointer<z_stream>]

    /// Starts `threads` workers, each with a raw deflate stream (windowBits -15, memLevel 8) at `level`.
    ///
    /// - Throws: `CSVError` naming `path` when zlib cannot start a stream.
    init(threads: Int, level: Int, path: String) throws(CSVError) {
        var streams: [UnsafeMutablePointer<z_stream>] = []
        for _ in 0..<threads {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            let status = swell_deflate_init2(stream, Int32(level), Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)
            guard status == Z_OK else {
                stream.deinitialize(count: 1)
                stream.deallocate()
                GzipWorkers.release(streams)
                throw CSVError(.compression, path: path, message: "cannot start gzip compression (zlib status \(status))")
            }
            streams.append(stream)
        }
        self.streams = streams
        running = threads
        for index in 0..<threads {
            let thread = Thread { [self] in work(with: self.streams[index]) }
            thread.name = "swell-gzip-\(index)"
            thread.start()
        }
    }

    deinit {
        GzipWorkers.release(streams)
    }

    /// Queues `block` for compression.
    func submit(_ block: GzipBlock) {
        condition.lock()
        queue.append(block)
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until `block` is compressed; returns zlib's failing status, or nil on success.
    func wait(for block: GzipBlock) -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        while !block.isFinished { condition.wait() }
        return block.failure
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

    private func work(with stream: UnsafeMutablePointer<z_stream>) {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping { break }
            let block = queue.removeFirst()
            condition.unlock()
            let failure = block.compress(using: stream)
            condition.lock()
            block.failure = failure
            block.isFinished = true
            condition.broadcast()
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    private static func release(_ streams: [UnsafeMutablePointer<z_stream>]) {
        for stream in streams {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
    }
}
