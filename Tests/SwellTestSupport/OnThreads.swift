import Foundation
import SwellLocks

/// Runs `body(0)` … `body(count - 1)` each on a thread of its own, all at once, and returns
/// their results in index order once every one has returned.
///
/// For requests that must be in flight together (a server's concurrency, a rate limit's
/// burst): a thread each, since a pool may run blocking work one item after another.
public func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = LockedValue<[Int: T]>([:])
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            let result = body(index)
            results.withLock { $0[index] = result }
            group.leave()
        }
    }
    group.wait()
    return results.withLock { all in (0..<count).map { all[$0]! } }
}
