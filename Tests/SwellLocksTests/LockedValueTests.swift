import Dispatch
import SwellLocks
import Testing

@Suite struct LockedValueTests {
    @Test func concurrentIncrementsGiveTheExactTotal() {
        let counter = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func concurrentAppendsKeepEveryElement() {
        let list = LockedValue<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<1_000 { list.withLock { $0.append(worker * 1_000 + index) } }
        }
        #expect(list.withLock { $0.sorted() } == Array(0..<8_000))
    }

    @Test func withLockReturnsTheBodysValue() {
        let lock = LockedValue("swell")
        let count = lock.withLock { value -> Int in
            value += "!"
            return value.count
        }
        #expect(count == 6)
        #expect(lock.withLock { $0 } == "swell!")
    }

    struct Refused: Error, Equatable {}

    @Test func withLockRethrowsAndReleasesTheLock() {
        let lock = LockedValue(1)
        #expect(throws: Refused.self) {
            try lock.withLock { (value: inout Int) throws(Refused) in
                value = 2
                throw Refused()
            }
        }
        // The lock was released and the change made before the throw is kept.
        #expect(lock.withLock { $0 } == 2)
    }

    @Test func copiesShareOneLockAndValue() {
        let lock = LockedValue(0)
        let copy = lock
        copy.withLock { $0 = 7 }
        #expect(lock.withLock { $0 } == 7)
    }
}
