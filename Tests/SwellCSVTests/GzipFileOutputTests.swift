import Foundation
import SwellCalendar
import SwellTestSupport
import Testing
@testable import SwellCSV

private let sampleRows: [[CSVCell]] = (0..<500).map { index in
    [.value(CSVFormat.integer(Int64(index))), .text("spot \(index), \"north\""), .value(CSVFormat.double(Double(index) / 8)), .null]
}

/// Writes the header and `sampleRows` to a gzip file at `path`.
private func writeSampleGzip(to path: String, level: Int = 6) throws {
    let writer = CSVWriter(output: try GzipFileOutput(path: path, level: level))
    try writer.writeHeader(["id", "name", "height", "note"])
    for row in sampleRows { try writer.writeRow(row) }
    try writer.finish()
}

@Test func gzipOutputDecompressesToExactlyTheCSV() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv.gz"
        try writeSampleGzip(to: path)
        let plain = try csvBytes(header: ["id", "name", "height", "note"], rows: sampleRows)
        let compressed = try readBytes(path)
        #expect(compressed.count < plain.count)
        #expect(try Gzip.decompress(compressed) == plain)
    }
}

@Test func gzipOutputIsByteIdenticalAcrossRuns() throws {
    try withTemporaryDirectory { directory in
        try writeSampleGzip(to: directory + "/first.csv.gz")
        try writeSampleGzip(to: directory + "/second.csv.gz")
        #expect(try readBytes(directory + "/first.csv.gz") == readBytes(directory + "/second.csv.gz"))
    }
}

@Test func gzipHeaderHasZeroMtimeNoFileNameAndUnixOS() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/named.csv.gz"
        try writeSampleGzip(to: path)
        let header = Array(try readBytes(path).prefix(10))
        #expect(header[0] == 0x1F && header[1] == 0x8B)
        #expect(header[2] == 8)
        #expect(header[3] & 0x08 == 0)
        #expect(header[3] == 0)
        #expect(Array(header[4..<8]) == [0, 0, 0, 0])
        #expect(header[9] == 3)
    }
}

@Test func gzipLevelsOneAndNineAreBothValid() throws {
    try withTemporaryDirectory { directory in
        let plain = try csvBytes(header: ["id", "name", "height", "note"], rows: sampleRows)
        for (level, extraFlags) in [(1, UInt8(4)), (9, UInt8(2))] {
            let path = directory + "/level\(level).csv.gz"
            try writeSampleGzip(to: path, level: level)
            let bytes = try readBytes(path)
            #expect(bytes[8] == extraFlags)
            #expect(try Gzip.decompress(bytes) == plain)
        }
    }
}

@Test func gzipLevelOutsideOneToNineIsRejectedWithoutTouchingTheDirectory() throws {
    try withTemporaryDirectory { directory in
        for level in [0, 10, -1] {
            let error = #expect(throws: CSVError.self) { try GzipFileOutput(path: directory + "/x.csv.gz", level: level) }
            #expect(error?.kind == .invalidSetting)
        }
        let names = try listing(directory)
        #expect(names.isEmpty)
    }
}

@Test func largeGzipOutputStreamsToDiskWhileWriting() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/large.csv.gz"
        let output = try GzipFileOutput(path: path)
        let writer = CSVWriter(output: output)
        var generator = SeededGenerator(state: 42)
        var samples: [Int64] = []
        var plainBytes = 0
        var row = 0
        while plainBytes < 20_000_000 {
            let cells: [CSVCell] = [
                .value(CSVFormat.integer(Int64(row))),
                .text("station \(generator.next() % 100_000), reading"),
                .value(CSVFormat.double(Double(generator.next() % 1_000_000) / 1000)),
                .value(ISODate.string(fromSeconds: Double(generator.next() % 2_000_000_000))),
                .text(String(generator.next(), radix: 36)),
            ]
            try writer.writeRow(cells)
            plainBytes += 64
            row += 1
            if row % 50_000 == 0 { samples.append(output.bytesWritten) }
        }
        #expect(samples.count >= 5)
        #expect(samples.first.map { $0 > 0 } == true)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 < $1 })
        #expect(!FileManager.default.fileExists(atPath: path))
        let beforeFinish = output.bytesWritten
        try writer.finish()
        let compressed = try readBytes(path)
        #expect(Int64(compressed.count) == output.bytesWritten)
        // Only the blocks still in flight, the block being filled and the trailer are left for finish().
        let outstanding = GzipEncoder.blocksInFlight(threads: 2) + 1
        #expect(output.bytesWritten - beforeFinish <= Int64(GzipEncoder.blockSize * outstanding + 8))
        let decompressed = try Gzip.decompress(compressed)
        #expect(decompressed.count > 15_000_000)
        #expect(decompressed.filter { $0 == UInt8(ascii: "\n") }.count == row)
    }
}

@Test func gzipDecompressRejectsCorruptAndTruncatedData() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv.gz"
        try writeSampleGzip(to: path)
        let bytes = try readBytes(path)
        var corrupt = bytes
        corrupt[corrupt.count - 6] ^= 0xFF
        for data in [Array(bytes.dropLast(12)), Array("plain,csv\n".utf8), [], corrupt] {
            let error = #expect(throws: CSVError.self) { try Gzip.decompress(data) }
            #expect(error?.kind == .invalidGzip)
        }
    }
}

@Test func gzipDecompressJoinsConcatenatedMembers() throws {
    try withTemporaryDirectory { directory in
        try writeSampleGzip(to: directory + "/a.csv.gz")
        let one = try readBytes(directory + "/a.csv.gz")
        let plain = try Gzip.decompress(one)
        #expect(try Gzip.decompress(one + one) == plain + plain)
    }
}
