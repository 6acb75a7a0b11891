import Testing
@testable import SwellPipeline

/// When a worker looks its chunks' keys up for unchanged records: backs off while nothing is stored.
@Suite struct UnchangedProbeTests {
    /// Which of `chunks` chunks look up, when each look-up finds `stored(chunk)` keys.
    private func lookUps(_ chunks: Int, stored: (Int) -> Int) -> [Int] {
        var probe = UnchangedProbe()
        var looked: [Int] = []
        for chunk in 0..<chunks where probe.shouldLookUp() {
            looked.append(chunk)
            probe.found(stored(chunk))
        }
        return looked
    }

    @Test func aFirstImportLooksUpLessAndLessOften() {
        #expect(lookUps(60, stored: { _ in 0 }) == [0, 2, 5, 10, 19, 36, 53])
    }

    @Test func aResyncLooksUpEveryChunk() {
        #expect(lookUps(10, stored: { _ in 400 }) == Array(0..<10))
    }

    @Test func storedKeysAfterAQuietStretchMakeEveryChunkLookAgain() {
        // Nothing stored until chunk 5, then every key is.
        #expect(lookUps(12, stored: { $0 < 5 ? 0 : 400 }) == [0, 2, 5, 6, 7, 8, 9, 10, 11])
    }
}
