import SwellTestSupport
import Testing
@testable import SwellCSV

/// A piece of input: text that compresses (runs of CSV-like lines) or random bytes that do not.
private func piece(_ count: Int, using generator: inout SeededGenerator) -> [UInt8] {
    if generator.next() % 3 == 0 {
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }
    var bytes: [UInt8] = []
    while bytes.count < count {
        bytes.append(contentsOf: "\(generator.next() % 5000),Spot \(generator.next() % 97),\"reef, north\",1.\(generator.next() % 9)\n".utf8)
    }
    return Array(bytes.prefix(count))
}

/// Compresses `plain` as one block with `compressor`.
private func compressBlock(_ plain: [UInt8], with compressor: DeflateBlockCompressor, isLast: Bool) -> [UInt8]? {
    var output = [UInt8](repeating: 0, count: DeflateBlockCompressor.bound(for: plain.count))
    let capacity = output.count
    let written = plain.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            compressor.compress(input.baseAddress ?? UnsafePointer(out.baseAddress!), count: input.count, into: out.baseAddress!, capacity: capacity, isLast: isLast)
        }
    }
    return written.map { Array(output.prefix($0)) }
}

/// Differential: random pieces (sizes, contents, levels) compressed block by block and
/// concatenated must inflate as ONE deflate stream to exactly the concatenated input. The
/// joint depends on where the final block ended inside its last byte; 400 cases reach both of
/// the joint's shapes (the stored block's header in the last byte, or in a byte of its own).
@Test func blocksCompressedApartJoinIntoOneDeflateStream() throws {
    var jointLengths: Set<Int> = []
    for seed in UInt64(1)...400 {
        var generator = SeededGenerator(state: seed)
        let level = Int(generator.next() % 9) + 1
        let compressor = try #require(DeflateBlockCompressor(level: level))
        let pieces = (0..<Int(generator.next() % 4) + 1).map { _ in piece(Int(generator.next() % 40_000), using: &generator) }
        var joined: [UInt8] = []
        for (index, plain) in pieces.enumerated() {
            let isLast = index == pieces.count - 1
            let block = try #require(compressBlock(plain, with: compressor, isLast: isLast), "seed \(seed)")
            if !isLast, let final = compressBlock(plain, with: compressor, isLast: true) {
                jointLengths.insert(block.count - final.count)
            }
            joined.append(contentsOf: block)
        }
        let inflatesToTheInput = inflateWhole(joined, windowBits: -15) == pieces.flatMap { $0 }
        #expect(inflatesToTheInput, "seed \(seed), level \(level), pieces \(pieces.map(\.count)): replay with this seed")
    }
    #expect(jointLengths == [4, 5])
}

@Test func aBlockWhoseStreamDoesNotInflateIsRefused() throws {
    let compressor = try #require(DeflateBlockCompressor(level: 6))
    var generator = SeededGenerator(state: 3)
    let plain = piece(20_000, using: &generator)
    var stream = try #require(compressBlock(plain, with: compressor, isLast: true))
    let count = stream.count
    stream.append(contentsOf: [0, 0, 0, 0, 0])
    // Cut short: the final block never ends.
    #expect(stream.withUnsafeMutableBufferPointer { compressor.join($0.baseAddress!, count: count / 2) } == nil)
    // Bytes after the final block: not one stream.
    stream[count] = 0x55
    #expect(stream.withUnsafeMutableBufferPointer { compressor.join($0.baseAddress!, count: count + 1) } == nil)
    // Not deflate at all (BTYPE 11 is reserved).
    var garbage: [UInt8] = [0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    #expect(garbage.withUnsafeMutableBufferPointer { compressor.join($0.baseAddress!, count: 5) } == nil)
}
