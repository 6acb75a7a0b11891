import Foundation

/// Counts the batches upsert workers saved into the view context and how many
/// of them the writer has committed, so workers wait (backpressure) instead of
/// piling changes up in the view and writer contexts when the disk is slower
/// than parsing: memory stays bounded whatever the input size.
///
/// `@unchecked Sendable`: every access to the counts holds `condition`.
final class SaveBacklog<Counts: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var saved = 0
    private var committedCount = 0
    private var released = false
    /// What each saved batch did, by number, until it is known to be on disk.
    private var uncommitted: [Int: Counts] = [:]
    /// The rows each saved batch moved, by number, until the writer is done with it.
    private var rowsByBatch: [Int: Int] = [:]
    /// Rows saved into the view context and not yet done with by the writer: what memory holds.
    private var rowsInFlight = 0

    /// Batches saved so far.
    var savedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return saved
    }

    /// Rows of saved batches the writer is not done with yet.
    var uncommittedRows: Int {
        condition.lock()
        defer { condition.unlock() }
        return rowsInFlight
    }

    /// Counts one more saved batch (of `rows` rows moved) and keeps what it did until it is on disk.
    func batchSaved(_ counts: Counts, rows: Int) {
        condition.lock()
        defer { condition.unlock() }
        saved += 1
        uncommitted[saved] = counts
        rowsByBatch[saved] = rows
        rowsInFlight += rows
    }

    /// The writer is done with every batch saved up to `count` (on disk when
    /// `written`); returns what the batches newly known to be on disk did.
    @discardableResult
    func committed(upTo count: Int, written: Bool = true) -> [Counts] {
        condition.lock()
        defer { condition.unlock() }
        committedCount = max(committedCount, count)
        for batch in rowsByBatch.keys where batch <= count {
            rowsInFlight -= rowsByBatch.removeValue(forKey: batch) ?? 0
        }
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

    /// Waits while more than `limit` rows of saved batches are not committed; `stop` ends the wait early.
    func waitForRoom(rows limit: Int, stop: () -> Bool) {
        condition.lock()
        defer { condition.unlock() }
        while !released && rowsInFlight > limit && !stop() {
            condition.wait()
        }
    }
}
