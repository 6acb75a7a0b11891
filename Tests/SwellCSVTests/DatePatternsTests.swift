import Foundation
import SwellCSV
import SwellCalendar
import SwellTestSupport
import Testing

/// Each caller's own date formatters give the text the one-call functions give, on any thread at once.
@Suite struct DatePatternsTests {
    @Test func aCallersFormattersWriteAndReadLikeTheOneCallFunctions() {
        // One instance for every pattern, interleaved: each pattern keeps its own formatter.
        let patterns = DatePatterns()
        var random = SeededGenerator(state: 9)
        for _ in 0..<50 {
            let seconds = Double(Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &random)) / 1000
            for pattern in ["yyyy-MM-dd", "dd/MM/yyyy HH:mm", "yyyy-MM-dd HH:mm:ss.SSS", "EEE, d MMM yyyy HH:mm:ss Z", "M/d/yy h:mm a"] {
                let text = patterns.string(fromSeconds: seconds, pattern: pattern)
                #expect(text == CSVFormat.date(seconds, pattern: pattern))
                #expect(patterns.seconds(from: text, pattern: pattern) == CSVFormat.parseDate(text, pattern: pattern))
            }
        }
        #expect(patterns.seconds(from: "31/02/2024 06:30", pattern: "dd/MM/yyyy HH:mm") == nil)
    }

    @Test func workersEachWithTheirOwnFormattersAgreeWithTheISOWriter() async {
        let pattern = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let patterns = DatePatterns()
                    var mismatches = 0
                    for step in 0..<2000 {
                        let seconds = Double(worker * 1_000_003 + step * 86_461 - 1_000_000_000)
                        let text = patterns.string(fromSeconds: seconds, pattern: pattern)
                        if text != ISODate.string(fromSeconds: seconds) || patterns.seconds(from: text, pattern: pattern) != seconds {
                            mismatches += 1
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
