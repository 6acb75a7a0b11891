import Foundation

/// Counts the batches upsert workers saved into the view context and how many
/// of them the writer has committed, so a worker waits for its batches to be on
/// disk (backpressure) instead of piling changes up in the view and writer
/// contexts when the disk is slower than parsing: memory stays bounded whatever
/// the input size.
///
/// `@unchecked Sendable`: every access to the counts holds `condition`.
final class SaveBacklog<Counts: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var saved = 0
    private var committedCount = 0
    private var released = false
    /// What each saved batch did, by number, until it is known to be on disk.
    private var uncommitted: [Int: Counts] = [:]

    /// Batches saved so far.
    var savedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return saved
    }

    /// Counts one more saved batch and keeps what it did until it is on disk.
    func batchSaved(_ counts: Counts) {
        condition.lock()
        defer { condition.unlock() }
        saved += 1
        uncommitted[saved] = counts
    }

    /// The writer is done with every batch saved up to `count` (on disk when
    /// `written`); returns what the batches newly known to be on disk did.
    @discardableResult
    func committed(upTo count: Int, written: Bool = true) -> [Counts] {
        condition.lock()
        defer { condition.unlock() }
        committedCount = max(committedCount, count)
        condition.broadcast()
        guard written else { return [] }
        let done = uncommitted.keys.filter { $0 <= count }.sorted()
        return done.compactMap { uncommitted.removeValue(forKey: $0) }
    }

    /// Lets every waiting worker go (the run failed or ended).
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the writer is done with every batch saved so far; `stop` ends the wait early.
    func waitUntilCommitted(stop: () -> Bool) {
        condition.lock()
        defer { condition.unlock() }
        while !released && committedCount < saved && !stop() {
            condition.wait()
        }
    }
}
