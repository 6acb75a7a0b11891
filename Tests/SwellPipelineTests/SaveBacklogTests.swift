import Dispatch
import Foundation
import Testing
@testable import SwellPipeline

/// The upsert workers' backpressure: a worker waits while too many saved rows are not on disk.
@Suite struct SaveBacklogTests {
    /// Runs `waitForRoom` on another thread; true when it returned within 10 s (never a hang).
    private func returns(_ backlog: SaveBacklog<Int>, rows limit: Int, stop: @escaping @Sendable () -> Bool = { false },
                         after action: () -> Void = {}) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            backlog.waitForRoom(rows: limit, stop: stop)
            done.signal()
        }.start()
        action()
        return done.wait(timeout: .now() + 10) == .success
    }

    @Test func aWorkerGoesOnWhileTheBacklogIsWithinTheLimit() {
        let backlog = SaveBacklog<Int>()
        backlog.batchSaved(1, rows: 300)
        backlog.batchSaved(2, rows: 200)
        #expect(backlog.uncommittedRows == 500)
        let within = returns(backlog, rows: 500)
        #expect(within)
    }

    @Test func aWorkerWaitsUntilTheWriterCommitsEnough() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...5 { backlog.batchSaved(batch, rows: 100) }
        // 500 rows saved, none committed, limit 200: the wait ends only once the writer committed up to batch 3.
        let went = returns(backlog, rows: 200, after: { backlog.committed(upTo: 3) })
        #expect(went)
        #expect(backlog.uncommittedRows == 200)
        #expect(backlog.savedCount == 5)
    }

    @Test func aFailedRunReleasesEveryWaitingWorker() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...5 { backlog.batchSaved(batch, rows: 100) }
        let released = returns(backlog, rows: 100, after: { backlog.release() })
        #expect(released)
        let stopped = returns(backlog, rows: 100, stop: { true })
        #expect(stopped)
    }

    @Test func whatABatchDidIsHandedBackOnceItIsOnDiskAndNotWhenTheWriteFailed() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...4 { backlog.batchSaved(batch * 10, rows: 1) }
        #expect(backlog.committed(upTo: 2) == [10, 20])
        #expect(backlog.committed(upTo: 3, written: false).isEmpty)
        #expect(backlog.committed(upTo: .max) == [30, 40])
        #expect(backlog.committed(upTo: .max).isEmpty)
    }
}
