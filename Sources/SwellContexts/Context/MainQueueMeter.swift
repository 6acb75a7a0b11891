import Dispatch
import SwellStoreCore
import Synchronization

/// Measures how long main-queue contexts keep the main queue busy (the
/// three-level stack's promise: the main queue never waits for disk).
/// Off unless `start()` is called; then every block a main-queue context runs
/// adds its duration.
public enum MainQueueMeter {
    private static let enabled = Atomic<Bool>(false)
    private static let busy = Atomic<UInt64>(0)
    private static let blocks = Atomic<Int>(0)

    /// Starts counting (and resets the counts).
    public static func start() {
        busy.store(0, ordering: .relaxed)
        blocks.store(0, ordering: .relaxed)
        enabled.store(true, ordering: .releasing)
    }

    /// Stops counting.
    public static func stop() { enabled.store(false, ordering: .releasing) }

    /// Nanoseconds main-queue contexts spent running blocks since `start()`.
    public static var busyNanoseconds: UInt64 { busy.load(ordering: .relaxed) }

    /// Blocks main-queue contexts ran since `start()`.
    public static var blockCount: Int { blocks.load(ordering: .relaxed) }

    static var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    static func record(since start: UInt64) {
        busy.add(DispatchTime.now().uptimeNanoseconds &- start, ordering: .relaxed)
        blocks.add(1, ordering: .relaxed)
    }
}
