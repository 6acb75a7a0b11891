import Dispatch
import Foundation
import SwellContexts
import Synchronization

/// `--measure-main-queue`: a heartbeat posted to the main queue every
/// millisecond from another thread measures the longest time the main queue
/// could not run (a stall); `MainQueueMeter` adds up the time main-queue
/// contexts kept it busy.
final class MainQueueProbe {
    /// What the heartbeats saw; shared with the timer's queue and the main queue.
    private final class Counts: Sendable {
        let longest = Atomic<UInt64>(0)
        let beats = Atomic<Int>(0)
    }

    private let timer: DispatchSourceTimer
    private let counts = Counts()
    private let started = DispatchTime.now().uptimeNanoseconds

    init() {
        MainQueueMeter.start()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "swell.main-queue-probe"))
        self.timer = timer
        timer.schedule(deadline: .now(), repeating: .milliseconds(1), leeway: .microseconds(100))
        timer.setEventHandler { [counts] in
            let posted = DispatchTime.now().uptimeNanoseconds
            DispatchQueue.main.async {
                let waited = DispatchTime.now().uptimeNanoseconds &- posted
                var current = counts.longest.load(ordering: .relaxed)
                while waited > current {
                    let (exchanged, original) = counts.longest.compareExchange(expected: current, desired: waited, ordering: .relaxed)
                    if exchanged { break }
                    current = original
                }
                counts.beats.add(1, ordering: .relaxed)
            }
        }
        timer.resume()
    }

    /// Stops and describes what it saw.
    func finish() -> (summary: String, longestStallMs: Double, busyShare: Double) {
        timer.cancel()
        MainQueueMeter.stop()
        let wall = Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9
        let busy = Double(MainQueueMeter.busyNanoseconds) / 1e9
        let stall = Double(counts.longest.load(ordering: .relaxed)) / 1e6
        let share = wall > 0 ? busy / wall : 0
        let summary = String(format: "main queue: longest stall %.1f ms, busy %.1f ms in %d blocks (%.2f%% of %.2f s wall), %d heartbeats",
                             stall, busy * 1000, MainQueueMeter.blockCount, share * 100, wall, counts.beats.load(ordering: .relaxed))
        return (summary, stall, share)
    }
}
