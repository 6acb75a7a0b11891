import Foundation
@testable import SwellContexts
@testable import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The texts a position keeps (README, "Resuming a stopped source"): key chunks read back as
/// the keys that went in, compactly; a page's URL kept with `${VAR}` for each secret and filled
/// back, or not kept at all when a secret would stay.
@Suite struct PositionKeysTests {
    private func roundTrip(_ chunk: KeyChunk) -> KeyChunk? {
        KeyChunk(text: chunk.text)
    }

    @Test func integerKeysReadBackSortedAndOnceEachWhateverTheirOrder() throws {
        var random = SeededGenerator(state: 43)
        for _ in 0..<50 {
            var chunk = KeyChunk()
            let count = Int(random.next() % 2_000)
            chunk.integers = (0..<count).map { _ in
                switch random.next() % 4 {
                case 0: Int64(bitPattern: random.next())
                case 1: Int64(random.next() % 5_000) - 2_500
                default: Int64(random.next() % 100)
                }
            } + [.min, .max, 0, -1].prefix(Int(random.next() % 5))
            #expect(roundTrip(chunk)?.integers == Array(Set(chunk.integers)).sorted())
        }
    }

    @Test func idsInOrderCostAFewBytesABatch() throws {
        var chunk = KeyChunk()
        chunk.integers = Array(1...10_000)
        #expect(chunk.text.count < 16, "\(chunk.text)")
        chunk.integers = stride(from: 1, to: 30_000, by: 3).map { Int64($0) }
        // Every key its own run: two one-byte varints a key (base64: 4 characters per 3 bytes).
        #expect(chunk.text.count < chunk.integers.count * 3)
        #expect(roundTrip(chunk)?.integers == chunk.integers)
    }

    @Test func textAndCompositeKeysReadBack() throws {
        var chunk = KeyChunk()
        chunk.add([[.text("apple/swift")], [.text("apple/swift-nio")], [.text("")], [.text("Zürich 🏄")], [.text("apple/swift")]])
        chunk.add([[.integer(1), .text("a")], [.text("b"), .null], [.real(2.5), .integer(-3)]])
        let read = try #require(roundTrip(chunk))
        #expect(read.texts == ["", "Zürich 🏄", "apple/swift", "apple/swift-nio"].sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(read.others == chunk.others)
        let saved = SavedKeys([read])
        #expect(saved.contains([.text("apple/swift-nio")]) && !saved.contains([.text("apple/swif")]))
        #expect(saved.contains([.real(2.5), .integer(-3)]) && !saved.contains([.integer(1)]))
    }

    @Test func textThatIsNotAChunkReadsAsNone() {
        #expect(KeyChunk(text: "x123") == nil)
        #expect(KeyChunk(text: "i!!!") == nil)
        #expect(KeyChunk(text: "j[[") == nil)
    }

    @Test func aURLKeepsItsSecretsAsTheirVariablesAndGetsThemBack() throws {
        let variables = ["API_KEY": "k3y/with spaces", "TOKEN": "tok-123"]
        let template = SecretTemplate(variables: variables, redactor: Redactor(secrets: variables.values))
        let url = "https://api.example.com/items?page=3&key=k3y%2Fwith%20spaces&t=tok-123&price=$5"
        let kept = try #require(template.template(url))
        #expect(kept == "https://api.example.com/items?page=3&key=${API_KEY:query}&t=${TOKEN}&price=$$5")
        #expect(template.fill(kept) == url)
        // Another run without the variable cannot fill it: the position is dropped.
        #expect(SecretTemplate(variables: ["TOKEN": "tok-123"], redactor: Redactor(secrets: [])).fill(kept) == nil)
    }

    @Test func aURLHoldingASecretNoVariableStandsForIsNotKept() {
        let redactor = Redactor(secrets: ["literal-secret"])
        let template = SecretTemplate(variables: [:], redactor: redactor)
        #expect(template.template("https://h/items?p=2&key=literal-secret") == nil)
        redactor.learn("learnt-token-77")
        #expect(template.template("https://h/items?p=2&access_token=learnt-token-77") == nil)
        #expect(template.template("https://user:pw@h/items?p=2") == nil)
        #expect(template.template("https://h/items?p=2") == "https://h/items?p=2")
    }
}
