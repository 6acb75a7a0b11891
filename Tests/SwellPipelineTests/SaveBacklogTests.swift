import Dispatch
import Foundation
import Testing
@testable import SwellPipeline

/// The upsert workers' backpressure: a worker waits while too many saved batches are not on disk.
@Suite struct SaveBacklogTests {
    /// Runs `waitForRoom` on another thread; true when it returned within 10 s (never a hang).
    private func returns(_ backlog: SaveBacklog, limit: Int, stop: @escaping @Sendable () -> Bool = { false },
                         after action: () -> Void = {}) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            backlog.waitForRoom(limit: limit, stop: stop)
            done.signal()
        }.start()
        action()
        return done.wait(timeout: .now() + 10) == .success
    }

    @Test func aWorkerGoesOnWhileTheBacklogIsWithinTheLimit() {
        let backlog = SaveBacklog()
        backlog.batchSaved()
        backlog.batchSaved()
        let within = returns(backlog, limit: 2)
        #expect(within)
    }

    @Test func aWorkerWaitsUntilTheWriterCommitsEnough() {
        let backlog = SaveBacklog()
        for _ in 0..<5 { backlog.batchSaved() }
        // 5 saved, 0 committed, limit 2: the wait ends only once the writer committed up to batch 3.
        let went = returns(backlog, limit: 2, after: { backlog.committed(upTo: 3) })
        #expect(went)
        #expect(backlog.savedCount == 5)
    }

    @Test func aFailedRunReleasesEveryWaitingWorker() {
        let backlog = SaveBacklog()
        for _ in 0..<5 { backlog.batchSaved() }
        let released = returns(backlog, limit: 1, after: { backlog.release() })
        #expect(released)
        let stopped = returns(backlog, limit: 1, stop: { true })
        #expect(stopped)
    }
}
