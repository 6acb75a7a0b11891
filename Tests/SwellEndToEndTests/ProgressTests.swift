import Foundation
@testable import SwellPipeline
import SwellLocks
import Testing
import SwellPipelineTestSupport

/// The progress lines (issue 12, item 5): one per source, with records/s, pages and bytes,
/// a percentage and an ETA when the size is known, and how long it took once done.
@Suite struct ProgressTests {
    @Test func aSourceOfKnownSizeShowsItsPercentageAndETA() {
        let started = Date(timeIntervalSince1970: 1_000_000)
        let progress = SourceProgress(name: "dump", started: started)
        progress.expect(bytes: 200_000_000)
        progress.addBytes(50_000_000)
        progress.addRecords(250_000)
        progress.addPage()
        #expect(progress.line(now: started.addingTimeInterval(10))
                == "dump: 250000 records (25000/s), 1 pages, 50.0 MB, 25 %, ETA 0:30")
        progress.addBytes(150_000_000)
        #expect(progress.line(now: started.addingTimeInterval(40)) == "dump: 250000 records (6250/s), 1 pages, 200.0 MB, 100 %")
    }

    @Test func aSourceOfUnknownSizeShowsNoPercentage() {
        let started = Date(timeIntervalSince1970: 1_000_000)
        let progress = SourceProgress(name: "journal", started: started)
        progress.addBytes(1_234_567)
        progress.addRecords(100)
        progress.addPage()
        progress.addPage()
        #expect(progress.line(now: started.addingTimeInterval(4)) == "journal: 100 records (25/s), 2 pages, 1.2 MB")
    }

    /// README, "Real networks": a source fetching over HTTP shows its requests in flight and,
    /// once budgets or a server's reset held it, the time it waited.
    @Test func aNetworkSourceShowsItsRequestsInFlightAndTheTimeItWaited() {
        let started = Date(timeIntervalSince1970: 1_000_000)
        let progress = SourceProgress(name: "issues", started: started)
        let network = LockedNetwork(inFlight: 3, waited: 0)
        progress.watchNetwork { network.read() }
        progress.addRecords(100)
        progress.addPage()
        #expect(progress.line(now: started.addingTimeInterval(2)) == "issues: 100 records (50/s), 1 pages, 0.0 MB, 3 in flight")
        network.set(inFlight: 8, waited: 12.34)
        #expect(progress.line(now: started.addingTimeInterval(2))
                == "issues: 100 records (50/s), 1 pages, 0.0 MB, 8 in flight, waited 12.3 s for budgets")
        // Once done, the line says so instead.
        progress.finish()
        let done = progress.line(now: started.addingTimeInterval(9))
        #expect(done.contains(", done in ") && !done.contains("in flight"), "\(done)")
    }

    /// What the network reports, changed by the test.
    final class LockedNetwork: Sendable {
        private let state: LockedValue<(Int, Double)>
        init(inFlight: Int, waited: Double) { state = LockedValue((inFlight, waited)) }
        func set(inFlight: Int, waited: Double) { state.withLock { $0 = (inFlight, waited) } }
        func read() -> (inFlight: Int, waited: Double) { state.withLock { (inFlight: $0.0, waited: $0.1) } }
    }

    @Test func durationsReadAsMinutesOrHours() {
        #expect(SourceProgress.duration(0.2) == "0:01")
        #expect(SourceProgress.duration(75) == "1:15")
        #expect(SourceProgress.duration(3_725) == "1:02:05")
    }

    @Test func eachSourceHasItsLineInTheOrderTheyStarted() {
        let counter = ProgressCounter()
        counter.source("b").addRecords(2)
        counter.source("a").addRecords(1)
        counter.source("b").addRecords(3)
        let lines = counter.lines()
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("b: 5 records") && lines[1].hasPrefix("a: 1 records"))
    }

    /// `--progress always` into a pipe: the lines without terminal escapes, each source's
    /// last one saying it is done; a one-file source gets no percentage once finished.
    @Test func progressIntoAPipeIsPlainLinesOnePerSource() throws {
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json"))
        try workspace.write("data/items.json", EndToEndTests.page(1...3))
        let run = try workspace.run("import", "items.yml", "--progress", "always")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("items: 3 records ("), "\(run.stderr)")
        #expect(run.stderr.contains("/s), 1 pages, 0.0 MB, done in "), "\(run.stderr)")
        #expect(!run.stderr.contains("\u{1B}["))
        let quiet = try workspace.run("import", "items.yml", "--progress", "never")
        #expect(!quiet.stderr.contains("records ("))
    }
}
