/// The bytes of a page a projection sink may read a record again from (to map it from its
/// text when the projection does not take it as it is): the chunk being fed (not copied)
/// and, between chunks, the page's bytes the reader may still complete a record from.
///
/// `chunk` points into the caller's buffer only between `reading` and `doneReading`.
struct RecordWindow {
    /// Bytes of earlier chunks of the page, from offset `windowBase` on.
    private var window: [UInt8] = []
    private var windowBase = 0
    /// The chunk being fed, at page offset `chunkBase` (right after the window's bytes).
    private var chunk: UnsafeRawBufferPointer?
    private var chunkBase = 0

    /// Starts (again) on a page.
    mutating func begin() {
        window.removeAll(keepingCapacity: true)
        windowBase = 0
    }

    /// The reader is about to read `bytes`, the page's next chunk.
    mutating func reading(_ bytes: UnsafeRawBufferPointer) {
        chunk = bytes
        chunkBase = windowBase + window.count
    }

    /// The chunk is read: keeps its bytes from `offset` on (the reader's
    /// `earliestNeededOffset`: the record under way, or bytes it holds back) and lets go of
    /// the window's before it, so the window stays about a record long whatever comes
    /// before, between or after the records.
    mutating func doneReading(keepingFrom offset: Int) {
        defer { chunk = nil }
        let drop = min(offset - windowBase, window.count)
        if drop > 0 {
            window.removeFirst(drop)
            windowBase += drop
        }
        guard let chunk else { return }
        let from = min(max(0, offset - chunkBase), chunk.count)
        if window.isEmpty { windowBase = chunkBase + from }
        window.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[from...]))
    }

    /// The page's bytes `start..<end`: from the chunk being read, from the window, or (a
    /// record that began in an earlier chunk) from both; nil when they are not kept.
    func bytes(_ start: Int, _ end: Int) -> [UInt8]? {
        if let chunk, start >= chunkBase {
            guard end - chunkBase <= chunk.count else { return nil }
            return Array(chunk[(start - chunkBase)..<(end - chunkBase)])
        }
        guard start >= windowBase else { return nil }
        if end <= windowBase + window.count { return Array(window[(start - windowBase)..<(end - windowBase)]) }
        guard let chunk, windowBase + window.count == chunkBase, end - chunkBase <= chunk.count else { return nil }
        return Array(window[(start - windowBase)...]) + chunk[..<(end - chunkBase)]
    }

    /// Calls `body` with the page's bytes `start..<end` in place when they lie in the chunk
    /// being read or in the window (most records: no copy), else with a copy of them joined
    /// from both; nil when they are not kept.
    func withBytes<R>(_ start: Int, _ end: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        if let chunk, start >= chunkBase {
            guard end - chunkBase <= chunk.count else { return nil }
            return try body(UnsafeRawBufferPointer(rebasing: chunk[(start - chunkBase)..<(end - chunkBase)]))
        }
        if start >= windowBase, end <= windowBase + window.count {
            return try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[(start - windowBase)..<(end - windowBase)])) }
        }
        guard let joined = bytes(start, end) else { return nil }
        return try joined.withUnsafeBytes(body)
    }

    /// What the window keeps, for an error that says a record's bytes were not kept.
    var description: String { "\(window.count) bytes from offset \(windowBase)" }
}
