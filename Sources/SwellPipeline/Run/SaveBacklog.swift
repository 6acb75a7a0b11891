import Foundation

/// Counts the batches upsert workers saved into the view context and how many
/// of them the writer has committed, so workers wait (backpressure) instead of
/// piling changes up in the view and writer contexts when the disk is slower
/// than parsing: memory stays bounded whatever the input size.
///
/// `@unchecked Sendable`: every access to the counts holds `condition`.
final class SaveBacklog: @unchecked Sendable {
    private let condition = NSCondition()
    private var saved = 0
    private var committedCount = 0
    private var released = false

    /// Batches saved so far.
    var savedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return saved
    }

    /// Counts one more saved batch; returns its number (from 1).
    @discardableResult
    func batchSaved() -> Int {
        condition.lock()
        defer { condition.unlock() }
        saved += 1
        return saved
    }

    /// The writer committed every batch saved up to `count`.
    func committed(upTo count: Int) {
        condition.lock()
        committedCount = max(committedCount, count)
        condition.broadcast()
        condition.unlock()
    }

    /// Lets every waiting worker go (the run failed or ended).
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits while more than `limit` saved batches are not committed; `stop` ends the wait early.
    func waitForRoom(limit: Int, stop: () -> Bool) {
        condition.lock()
        defer { condition.unlock() }
        while !released && saved - committedCount > limit && !stop() {
            condition.wait()
        }
    }
}
