import Foundation
@testable import SwellInput
import SwellTestSupport
import Testing

/// `CSVRecordTranscoder` against a model: random tables (delimiters, quotes, line breaks,
/// empty and quoted-empty fields, non-ASCII) written as RFC 4180 by the test, fed in random
/// pieces, must come back as one NDJSON object per row with the same strings (an empty
/// field null, a quoted empty one ""). Fixed seeds; a failing seed is named.
@Suite struct CSVRecordTranscoderTests {
    /// A cell: its text, or nil for an empty unquoted field; quoted when `quote`.
    struct Cell {
        var text: String?
        var quote: Bool
    }

    static func write(_ rows: [[Cell]], delimiter: Character, crlf: Bool) -> String {
        rows.map { row in
            row.map { cell in
                guard let text = cell.text else { return "" }
                let must = text.contains(delimiter) || text.contains("\"") || text.contains("\n") || text.contains("\r") || text.isEmpty
                return (must || cell.quote) ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
            }.joined(separator: String(delimiter))
        }.joined(separator: crlf ? "\r\n" : "\n") + (crlf ? "\r\n" : "\n")
    }

    static func transcode(_ text: String, delimiter: UInt8, header: Bool, seed: UInt64) throws -> [[String: Any]] {
        var random = SeededGenerator(state: seed)
        var transcoder = CSVRecordTranscoder(delimiter: delimiter, header: header)
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, Int.random(in: 1...40, using: &random))
            try bytes[offset..<offset + size].withUnsafeBytes { try transcoder.feed($0) { out.append(contentsOf: $0) } }
            offset += size
        }
        try transcoder.finish { out.append(contentsOf: $0) }
        return try out.split(separator: UInt8(ascii: "\n")).map { line in
            try JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed]) as? [String: Any] ?? [:]
        }
    }

    @Test(arguments: 0..<40)
    func rowsComeBackAsTheModelWroteThem(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let delimiter: Character = [",", ";", "\t", "|"].randomElement(using: &random)!
        let pieces = ["a", "b c", "x,y", "say \"hi\"", "line\nbreak", "é東京😀", "42", " padded ", "tab\there", "semi;colon", "cr\r\nlf"]
        let columns = Int.random(in: 1...5, using: &random)
        let names = (0..<columns).map { "col \($0)" }
        var rows: [[Cell]] = [names.map { Cell(text: $0, quote: false) }]
        for _ in 0..<Int.random(in: 0...30, using: &random) {
            rows.append((0..<columns).map { _ in
                switch Int.random(in: 0..<10, using: &random) {
                // A row of one empty unquoted field is a blank line, which is no row (RFC 4180
                // cannot tell them apart): with one column a null is not drawn.
                case 0 where columns > 1: Cell(text: nil, quote: false)
                case 1: Cell(text: "", quote: true)
                default: Cell(text: pieces.randomElement(using: &random)!, quote: Bool.random(using: &random))
                }
            })
        }
        let text = Self.write(rows, delimiter: delimiter, crlf: Bool.random(using: &random))
        let objects = try Self.transcode(text, delimiter: UInt8(ascii: delimiter.unicodeScalars.first!), header: true, seed: seed)
        #expect(objects.count == rows.count - 1, "seed \(seed)")
        for (row, object) in zip(rows.dropFirst(), objects) {
            for (name, cell) in zip(names, row) {
                if let text = cell.text {
                    #expect(object[name] as? String == text, "seed \(seed): \(name)")
                } else {
                    #expect(object[name] is NSNull, "seed \(seed): \(name) should be null")
                }
            }
        }
    }

    @Test func withoutAHeaderTheColumnsAreNumbered() throws {
        let objects = try Self.transcode("\u{FEFF}1,x\n\n2,\"y\"\n", delimiter: UInt8(ascii: ","), header: false, seed: 1)
        #expect(objects.map { $0["1"] as? String } == ["1", "2"])
        #expect(objects.map { $0["2"] as? String } == ["x", "y"])
    }

    /// Only EF BB BF is a byte-order mark: a first character that starts with EF stays.
    @Test func aFirstCharacterStartingLikeAByteOrderMarkStays() throws {
        let objects = try Self.transcode("ｺｰﾄﾞ,x\nA1,1\n", delimiter: UInt8(ascii: ","), header: true, seed: 5)
        #expect(objects.first?["ｺｰﾄﾞ"] as? String == "A1")
        #expect(try Self.transcode("\u{FEFF}", delimiter: UInt8(ascii: ","), header: true, seed: 6).isEmpty)
    }

    @Test func badCSVNamesItsLine() {
        func failure(_ text: String) -> CSVRecordTranscoder.Failure? {
            do {
                _ = try Self.transcode(text, delimiter: UInt8(ascii: ","), header: true, seed: 3)
                return nil
            } catch let failure as CSVRecordTranscoder.Failure {
                return failure
            } catch {
                return nil
            }
        }
        #expect(failure("a,b\n1,2\n1,2,3\n")?.description == "line 3: 3 fields where the header names 2")
        #expect(failure("a,b\n1,\"open\n")?.description.hasPrefix("line 2: a quoted field") == true)
        #expect(failure("a,b\n1,x\"y\n")?.description.hasPrefix("line 2: a double quote inside an unquoted field") == true)
    }
}
