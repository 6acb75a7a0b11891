import Foundation
import SwellLocks
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// The bounded queue between a flat source's stages.
@Suite struct BatchQueueTests {
    @Test func aHandOffReturnsFromPutOnlyOnceItsItemIsTaken() {
        // Capacity 0: no batch waits in the queue while its producer makes the next one.
        let queue = BatchQueue<Int>(capacity: 0)
        let takenWhenPutReturned = LockedValue<[Int]>([])
        let producer = Thread {
            for item in 1...50 {
                queue.put(item)
                let taken = queue.taken
                takenWhenPutReturned.withLock { $0.append(taken) }
            }
            queue.close()
        }
        producer.start()
        var received: [Int] = []
        while let item = queue.take() { received.append(item) }
        #expect(received == Array(1...50))
        // Each put returned after its own item was taken (never with it still queued).
        #expect(takenWhenPutReturned.withLock { $0 }.enumerated().allSatisfy { $0.element >= $0.offset + 1 })
    }

    @Test func aQueueWithRoomReturnsFromPutAtOnce() {
        let queue = BatchQueue<Int>(capacity: 2)
        queue.put(1)
        queue.put(2)
        #expect(queue.taken == 0)
        queue.close()
        #expect(queue.take() == 1)
        #expect(queue.take() == 2)
        #expect(queue.take() == nil)
    }
}
