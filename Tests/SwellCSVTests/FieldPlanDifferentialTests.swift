import SwellTestSupport
import Testing
@testable import SwellCSV

/// Differential: `FieldPlan` scans eight bytes at a time; a byte-by-byte model of the quoting
/// rule (RFC 4180: quote a field holding a quote, comma, CR or LF; double its quotes) must agree
/// on random fields of every length around the word size, with the special bytes anywhere,
/// among bytes one away from them (which a word test could confuse) and non-ASCII bytes.
@Test func fieldPlansAgreeWithAByteByByteModel() {
    let alphabet: [UInt8] = [0x22, 0x2C, 0x0A, 0x0D, 0x21, 0x23, 0x2B, 0x2D, 0x09, 0x0B, 0x0C, 0x0E, 0x20, 0x61, 0xC3, 0xA9, 0xFF, 0x00, 0x80]
    for seed in UInt64(1)...3000 {
        var generator = SeededGenerator(state: seed)
        let count = Int(generator.next() % 40)
        let special = generator.next() % 4 == 0
        let bytes: [UInt8] = (0..<count).map { _ in
            special || generator.next() % 8 == 0 ? alphabet[Int(generator.next() % UInt64(alphabet.count))] : UInt8(ascii: "a") + UInt8(generator.next() % 26)
        }
        let modelQuotes = bytes.filter { $0 == 0x22 }.count
        let modelQuoted = bytes.contains { $0 == 0x22 || $0 == 0x2C || $0 == 0x0A || $0 == 0x0D }
        let plan = bytes.withUnsafeBufferPointer { FieldPlan(scanning: $0, escapeFormulas: false) }
        #expect(plan.quotes == modelQuotes && plan.quoted == modelQuoted, "seed \(seed): \(bytes)")
        #expect(plan.length == count + (modelQuoted ? 2 + modelQuotes : 0), "seed \(seed)")
    }
}
