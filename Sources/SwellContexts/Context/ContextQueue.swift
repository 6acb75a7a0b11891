import Dispatch
import Foundation
import SwellStoreCore
import Synchronization

/// The queue a context's work runs on, and the check "am I on it?".
///
/// A private-queue context owns a serial `DispatchQueue`; a main-queue context
/// uses `DispatchQueue.main`. While a block runs for the context, the queue
/// records the running thread, so that a `performAndWait` from inside it runs
/// at once (re-entrant) and the confinement check knows where it is. Code
/// already on the main queue counts as on a main-queue context's queue (a
/// `DispatchSpecificKey` says so, not `Thread.isMainThread`, which is wrong
/// under `swift test` on Linux).
final class ContextQueue: Sendable {
    let dispatchQueue: DispatchQueue
    let isMain: Bool
    /// The thread running a block for this context, or 0.
    private let runningThread = Atomic<UInt>(0)

    init(isMain: Bool, label: String) {
        self.isMain = isMain
        if isMain {
            MainQueueMarker.install()
            dispatchQueue = .main
        } else {
            dispatchQueue = DispatchQueue(label: label)
        }
    }

    static var currentThread: UInt { UInt(pthread_self()) }

    /// Whether the caller is running on this context's queue.
    var isCurrent: Bool {
        if runningThread.load(ordering: .acquiring) == Self.currentThread { return true }
        return isMain && MainQueueMarker.isOnMainQueue
    }

    /// Runs `block` later on the queue; returns at once.
    func async(_ block: @escaping @Sendable () -> Void) {
        dispatchQueue.async { self.run(block) }
    }

    /// Runs `block` on the queue and waits; runs it at once when already on the queue.
    func sync<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try block() }
        // A thread on the main queue that waits here still owns the main queue:
        // a main-queue context used inside this block must run at once, not deadlock.
        let holdsMain = MainQueueMarker.isOnMainQueue
        let previousHolder = holdsMain ? MainQueueMarker.holder.exchange(Self.currentThread, ordering: .acquiringAndReleasing) : 0
        defer { if holdsMain { MainQueueMarker.holder.store(previousHolder, ordering: .releasing) } }
        let result: Result<T, E> = dispatchQueue.sync {
            self.run { () -> Result<T, E> in
                do throws(E) { return .success(try block()) } catch { return .failure(error) }
            }
        }
        return try result.get()
    }

    private func run<T>(_ block: () -> T) -> T {
        let previous = runningThread.exchange(Self.currentThread, ordering: .acquiringAndReleasing)
        defer { runningThread.store(previous, ordering: .releasing) }
        guard isMain, MainQueueMeter.isEnabled else { return block() }
        let start = DispatchTime.now().uptimeNanoseconds
        defer { MainQueueMeter.record(since: start) }
        return block()
    }
}

/// Marks `DispatchQueue.main` so code can tell it runs there.
enum MainQueueMarker {
    /// Set once on the main queue, then only read.
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// A thread that owns the main queue while it waits in a private context's `performAndWait`.
    static let holder = Atomic<UInt>(0)

    static func install() { _ = key }

    /// Whether the caller runs on the main queue, or owns it while waiting in a `performAndWait`.
    static var isOnMainQueue: Bool {
        DispatchQueue.getSpecific(key: key) == true || holder.load(ordering: .acquiring) == ContextQueue.currentThread
    }
}
