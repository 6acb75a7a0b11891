import Foundation
@testable import SwellInput
import SwellTestSupport
import Testing

/// `GzipInflater` reads back what `gzip` (the command) wrote, fed in any pieces: one
/// member or several, and refuses a cut-short or foreign stream naming the byte.
@Suite struct GzipInflaterTests {
    /// `bytes` compressed by the system's `gzip -c`.
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("swell-input-tests-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-6", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    /// Inflates `compressed` fed in pieces cut at random (seeded) places.
    static func inflate(_ compressed: [UInt8], seed: UInt64) throws -> [UInt8] {
        var random = SeededGenerator(state: seed)
        let inflater = try #require(GzipInflater())
        var out: [UInt8] = []
        var offset = 0
        while offset < compressed.count {
            let size = min(compressed.count - offset, Int.random(in: 1...5000, using: &random))
            try compressed[offset..<offset + size].withUnsafeBytes { piece in
                try inflater.inflate(piece) { out.append(contentsOf: $0) }
            }
            offset += size
        }
        try inflater.finish()
        return out
    }

    @Test(arguments: 0..<6)
    func readsBackWhatGzipWroteInAnyPieces(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        // Text-like data with repeats (so the stream has back-references), up to 1.5 MB.
        let words = (0..<50).map { n in Array("word\(n)-\(String(repeating: "x", count: n % 7)) ".utf8) }
        var plain: [UInt8] = []
        for _ in 0..<Int.random(in: 0...150_000, using: &random) { plain += words.randomElement(using: &random)! }
        plain += (0..<Int.random(in: 0...4096, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let compressed = try Self.gzip(plain)
        #expect(try Self.inflate(compressed, seed: seed) == plain, "seed \(seed)")
        // Two members one after the other read as their contents joined.
        #expect(try Self.inflate(compressed + (try Self.gzip(Array("tail".utf8))), seed: seed + 100) == plain + Array("tail".utf8))
    }

    @Test func aCutShortOrForeignStreamIsRefusedNamingTheByte() throws {
        let compressed = try Self.gzip(Array(String(repeating: "abc ", count: 10_000).utf8))
        #expect(throws: GzipInflater.Failure.self) { _ = try Self.inflate(Array(compressed.prefix(compressed.count - 20)), seed: 1) }
        do {
            _ = try Self.inflate([0x1F, 0x8C] + Array("{\"not\": \"gzip\"}".utf8), seed: 2)
            Issue.record("a foreign stream inflated")
        } catch let failure as GzipInflater.Failure {
            #expect(failure.offset <= 2 && failure.description.contains("not valid gzip at byte \(failure.offset)") && failure.description.contains("header"), "\(failure)")
        }
        // Bytes that do not start as gzip does (decoded already by curl) pass through.
        #expect(try Self.inflate(Array("{\"a\": 1}".utf8), seed: 3) == Array("{\"a\": 1}".utf8))
    }
}
