import Foundation
import SwellLocks
import Synchronization

/// What a run did so far, source by source, for the progress lines on stderr.
/// Sendable: the sources' counters are atomic, their list behind a lock.
public final class ProgressCounter: Sendable {
    private let sources = LockedValue<[SourceProgress]>([])

    /// A counter with no source started yet.
    public init() {}

    /// The counter of the source named `name` (made on first use; sources keep the order they started in).
    func source(_ name: String) -> SourceProgress {
        sources.withLock { sources in
            if let existing = sources.first(where: { $0.name == name }) { return existing }
            let made = SourceProgress(name: name)
            sources.append(made)
            return made
        }
    }

    /// One line per source that has started: `journal: 12345 records (4100/s), 3 pages, 2.4 MB`,
    /// with `, 4 in flight, waited 1.2 s for budgets` for an HTTP source, `, 42 %, ETA 0:12` when the size is known and `, done in 3.2 s` once it finished
    /// (`, failed after 3.2 s` when it failed).
    public func lines(now: Date = Date()) -> [String] {
        sources.withLock { $0 }.map { $0.line(now: now) }
    }
}

/// One source's counts: records upserted, pages and bytes read, and — for a source
/// that is one local file — the bytes it has in all, for a percentage and an ETA.
final class SourceProgress: Sendable {
    let name: String
    private let records = Atomic<Int>(0)
    private let pages = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    private let expectedBytes = Atomic<Int>(0)
    private let started: Date
    /// Seconds from `started` to the end, as bits of a Double; 0 while running.
    private let finishedAfter = Atomic<UInt64>(0)
    /// Whether the source ended in a failure.
    private let failed = Atomic<Bool>(false)
    /// Its HTTP requests outstanding now and the seconds budgets held them (`PageStream`).
    private let network = LockedValue<(@Sendable () -> (inFlight: Int, waited: Double))?>(nil)

    init(name: String, started: Date = Date()) {
        self.name = name
        self.started = started
    }

    func addRecords(_ count: Int) { records.add(count, ordering: .relaxed) }
    func addPage() { pages.add(1, ordering: .relaxed) }
    func addBytes(_ count: Int) { bytes.add(count, ordering: .relaxed) }
    /// The size of what the source reads in all, when known (a local file).
    func expect(bytes count: Int) { expectedBytes.store(count, ordering: .relaxed) }
    /// Where the line reads the source's requests in flight and time waited for budgets.
    func watchNetwork(_ read: @escaping @Sendable () -> (inFlight: Int, waited: Double)) {
        network.withLock { $0 = read }
    }
    func finish(failed: Bool = false) {
        self.failed.store(failed, ordering: .relaxed)
        finishedAfter.store(max(0.001, Date().timeIntervalSince(started)).bitPattern, ordering: .relaxed)
    }

    func line(now: Date) -> String {
        let finished = Double(bitPattern: finishedAfter.load(ordering: .relaxed))
        let elapsed = finished > 0 ? finished : max(0.001, now.timeIntervalSince(started))
        let count = records.load(ordering: .relaxed)
        let read = bytes.load(ordering: .relaxed)
        var line = "\(name): \(count) records (\(Int(Double(count) / elapsed))/s), \(pages.load(ordering: .relaxed)) pages, "
            + String(format: "%.1f MB", Double(read) / 1_000_000)
        let expected = expectedBytes.load(ordering: .relaxed)
        if finished > 0 {
            line += String(format: failed.load(ordering: .relaxed) ? ", failed after %.1f s" : ", done in %.1f s", finished)
        } else if let read = network.withLock({ $0 }) {
            let (inFlight, waited) = read()
            line += ", \(inFlight) in flight"
            if waited > 0 { line += String(format: ", waited %.1f s for budgets", waited) }
        } else if expected > 0 {
            let fraction = min(1, Double(read) / Double(expected))
            line += ", \(Int(fraction * 100)) %"
            if read > 0 && fraction < 1 {
                line += ", ETA " + Self.duration((elapsed / fraction) - elapsed)
            }
        }
        return line
    }

    /// `m:ss`, or `h:mm:ss` from an hour on.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}
