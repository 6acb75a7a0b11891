import CZlib
import Foundation
import SwellTestSupport
import Testing
@testable import SwellCSV

/// Lines like a journal export (id, spot, text with a comma, number, date), cut to exactly `count` bytes.
private func csvLikeBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var generator = SeededGenerator(state: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 128)
    var row = 0
    while bytes.count < count {
        let line = "\(row),Spot \(generator.next() % 977),\"North Shore, reef\",\(generator.next() % 100_000),2024-03-\(row % 28 + 10)T06:\(row % 60):00Z\n"
        bytes.append(contentsOf: line.utf8)
        row += 1
    }
    return Array(bytes.prefix(count))
}

private func randomBytes(_ count: Int, seed: UInt64 = 11) -> [UInt8] {
    var generator = SeededGenerator(state: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
}

/// Gzips `bytes` through `GzipFileOutput` into `path`, in writes of `writeSize` bytes (one write when nil); returns the file.
private func gzip(_ bytes: [UInt8], to path: String, writeSize: Int? = nil, level: Int = 6, threads: Int = 2) throws -> [UInt8] {
    let output = try GzipFileOutput(path: path, level: level, threads: threads)
    try bytes.withUnsafeBytes { all in
        let step = writeSize ?? max(all.count, 1)
        var offset = 0
        while offset < all.count {
            let end = min(offset + step, all.count)
            try output.write(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
            offset = end
        }
    }
    try output.finish()
    return try readBytes(path)
}

/// Whether `data` is exactly one gzip member: zlib reaches the end of the stream on the last byte.
private func isOneGzipMember(_ data: [UInt8]) -> Bool {
    inflateWhole(data, windowBits: 15 + 16) != nil
}

/// `gzip -t` on `path`; nil when there is no /bin/gzip on this machine.
private func gzipCommandAccepts(_ path: String) throws -> Bool? {
    guard FileManager.default.isExecutableFile(atPath: "/bin/gzip") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-t", path]
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0
}

private let block = GzipEncoder.blockSize

@Test(arguments: [0, 1, block - 1, block, block + 1, 2 * block, 3 * block + 17])
func parallelGzipDecompressesToExactlyTheInput(size: Int) throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/out.csv.gz"
        let plain = csvLikeBytes(size)
        let compressed = try gzip(plain, to: path)
        #expect(try Gzip.decompress(compressed) == plain)
        #expect(isOneGzipMember(compressed))
        if let accepted = try gzipCommandAccepts(path) { #expect(accepted) }
    }
}

// The argument is the input's name, not its bytes: Swift Testing prints arguments in the log.
@Test(arguments: ["csv", "random"])
func parallelGzipRoundTripsManyBlocks(name: String) throws {
    let plain = name == "csv" ? csvLikeBytes(5_000_000) : randomBytes(2_000_000)
    try withTemporaryDirectory { directory in
        let path = directory + "/\(name).gz"
        let compressed = try gzip(plain, to: path, writeSize: 256 * 1024 + 3)
        #expect(try Gzip.decompress(compressed) == plain)
        #expect(isOneGzipMember(compressed))
        if name == "csv" { #expect(compressed.count * 4 < plain.count) }
        if let accepted = try gzipCommandAccepts(path) { #expect(accepted) }
    }
}

@Test func parallelGzipTrailerHoldsTheCRCAndLengthOfTheWholeInput() throws {
    try withTemporaryDirectory { directory in
        let plain = csvLikeBytes(5 * block + 1234)
        let compressed = try gzip(plain, to: directory + "/out.gz")
        let wholeCRC = plain.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        let trailer = Array(compressed.suffix(8))
        let storedCRC = trailer[0..<4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let storedLength = trailer[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(storedCRC == wholeCRC)
        #expect(storedLength == UInt32(plain.count))
    }
}

@Test func parallelGzipOutputDoesNotDependOnWriteSizes() throws {
    try withTemporaryDirectory { directory in
        let small = csvLikeBytes(3000)
        let smallWhole = try gzip(small, to: directory + "/small-whole.gz")
        #expect(try gzip(small, to: directory + "/small-1.gz", writeSize: 1) == smallWhole)

        let large = csvLikeBytes(4 * block + 999)
        let largeWhole = try gzip(large, to: directory + "/large-whole.gz")
        for writeSize in [7, 64 * 1024, block + 1] {
            #expect(try gzip(large, to: directory + "/large-\(writeSize).gz", writeSize: writeSize) == largeWhole)
        }
    }
}

@Test func parallelGzipOutputDoesNotDependOnThreadsOrRun() throws {
    try withTemporaryDirectory { directory in
        let plain = csvLikeBytes(12 * block + 5)
        let first = try gzip(plain, to: directory + "/first.gz")
        #expect(try gzip(plain, to: directory + "/second.gz") == first)
        for threads in [1, 3] {
            #expect(try gzip(plain, to: directory + "/threads-\(threads).gz", threads: threads) == first)
        }
    }
}

@Test(arguments: [(1, UInt8(4)), (6, UInt8(0)), (9, UInt8(2))])
func parallelGzipHeaderAndLevels(level: Int, extraFlags: UInt8) throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/level\(level).gz"
        let plain = csvLikeBytes(3 * block + 100)
        let compressed = try gzip(plain, to: path, level: level)
        #expect(Array(compressed.prefix(10)) == [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, extraFlags, 3])
        #expect(try Gzip.decompress(compressed) == plain)
        #expect(isOneGzipMember(compressed))
        if let accepted = try gzipCommandAccepts(path) { #expect(accepted) }
    }
}

@Test func higherGzipLevelsAreNotLarger() throws {
    try withTemporaryDirectory { directory in
        let plain = csvLikeBytes(6 * block)
        let sizes = try [1, 6, 9].map { try gzip(plain, to: directory + "/\($0).gz", level: $0).count }
        #expect(sizes[0] > sizes[1])
        #expect(sizes[1] >= sizes[2])
    }
}

@Test func abortWhileBlocksAreCompressingLeavesNoTemporaryFile() throws {
    try withTemporaryDirectory { directory in
        let output = try GzipFileOutput(path: directory + "/out.csv.gz")
        let plain = csvLikeBytes(10 * block + 3)
        try plain.withUnsafeBytes { try output.write($0) }
        #expect(try listing(directory).count == 1)
        output.abort()
        #expect(try listing(directory).isEmpty)
        #expect((#expect(throws: CSVError.self) { try plain.withUnsafeBytes { try output.write($0) } })?.kind == .finished)
        #expect((#expect(throws: CSVError.self) { try output.finish() })?.kind == .finished)
        #expect(try listing(directory).isEmpty)
    }
}

@Test func fewerThanOneGzipThreadIsRejectedWithoutTouchingTheDirectory() throws {
    try withTemporaryDirectory { directory in
        let path = directory + "/x.csv.gz"
        let error = #expect(throws: CSVError.self) { try GzipFileOutput(path: path, threads: 0) }
        #expect(error?.path == path)
        #expect(error?.kind == .invalidSetting)
        let names = try listing(directory)
        #expect(names.isEmpty)
    }
}
