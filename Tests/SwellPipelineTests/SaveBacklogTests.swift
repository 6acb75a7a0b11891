import Dispatch
import Foundation
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// The upsert workers' backpressure: a worker waits until the writer committed every batch it saved.
@Suite struct SaveBacklogTests {
    /// Runs `waitUntilCommitted` on another thread, then `action`; true when the wait returned
    /// within 10 s (never a hang).
    private func returns(_ backlog: SaveBacklog<Int>, stop: @escaping @Sendable () -> Bool = { false },
                         after action: () -> Void = {}) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            backlog.waitUntilCommitted(stop: stop)
            done.signal()
        }.start()
        action()
        return done.wait(timeout: .now() + 10) == .success
    }

    @Test func aWorkerGoesOnOnceTheWriterCommittedEverySavedBatch() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...5 { backlog.batchSaved(batch) }
        let went = returns(backlog, after: { backlog.committed(upTo: 5) })
        #expect(went)
        #expect(backlog.savedCount == 5)
    }

    @Test func aFailedRunReleasesEveryWaitingWorker() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...5 { backlog.batchSaved(batch) }
        let released = returns(backlog, after: { backlog.release() })
        #expect(released)
        let failing = SaveBacklog<Int>()
        for batch in 1...5 { failing.batchSaved(batch) }
        let stopped = returns(failing, stop: { true })
        #expect(stopped)
    }

    @Test func whatABatchDidIsHandedBackOnceItIsOnDiskAndNotWhenTheWriteFailed() {
        let backlog = SaveBacklog<Int>()
        for batch in 1...4 { backlog.batchSaved(batch * 10) }
        #expect(backlog.committed(upTo: 2) == [10, 20])
        #expect(backlog.committed(upTo: 3, written: false).isEmpty)
        #expect(backlog.committed(upTo: .max) == [30, 40])
        #expect(backlog.committed(upTo: .max).isEmpty)
    }
}
