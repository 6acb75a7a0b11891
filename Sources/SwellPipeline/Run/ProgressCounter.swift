import Foundation
import Synchronization

/// Counts what a run did so far, for the progress line on stderr
/// (records/s, pages, bytes). Sendable: atomics.
public final class ProgressCounter: Sendable {
    private let records = Atomic<Int>(0)
    private let pages = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    private let started = Date()

    public init() {}

    func addRecords(_ count: Int) { records.add(count, ordering: .relaxed) }
    func addPages(_ count: Int = 1) { pages.add(count, ordering: .relaxed) }
    func addPage() { addPages(1) }
    func addBytes(_ count: Int) { bytes.add(count, ordering: .relaxed) }

    /// "12,345 records (4,100/s), 3 pages, 2.4 MB"
    public var line: String {
        let elapsed = max(0.001, Date().timeIntervalSince(started))
        let count = records.load(ordering: .relaxed)
        let megabytes = Double(bytes.load(ordering: .relaxed)) / 1_000_000
        return "\(count) records (\(Int(Double(count) / elapsed))/s), \(pages.load(ordering: .relaxed)) pages, \(String(format: "%.1f", megabytes)) MB"
    }
}
