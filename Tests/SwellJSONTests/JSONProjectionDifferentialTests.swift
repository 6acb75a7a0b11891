import Foundation
import Testing
@testable import SwellJSON

// Random pages projected through `JSONProjectionReader`, against the same pages
// read by `JSONPageReader` with each field looked up in the record's tree. The
// seeds are fixed; a failure names its seed, and `SWELL_PROJECTION_SEED=<seed>`
// runs that one alone.

/// SplitMix64: small, fast, and the same sequence on every platform.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// Writes random pages: records drawn from a small pool of keys (so keys
/// repeat, and paths meet arrays, scalars and null on their way), every
/// kind of value, escapes, and random whitespace.
private struct RandomPages {
    var random: SeededGenerator
    /// Whether whitespace may hold newlines (not in NDJSON records).
    var newlines = true

    static let keys = ["a", "b", "id", "name", "é", "x y", "", "a_long_key_name"]

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

    mutating func space() -> String {
        guard chance(20) else { return "" }
        return pick(newlines ? [" ", "\t", "\n", " \r\n  ", "  "] : [" ", "\t", "\r", "  "])
    }

    mutating func key() -> String {
        let key = pick(Self.keys)
        if key == "a", chance(30) { return #""\u0061""# }
        return "\"" + key + "\""
    }

    mutating func string() -> String {
        var text = "\""
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            text += pick([
                "abc", "Ocean Beach, CA", #"\""#, #"\\"#, #"\/"#, #"\n"#, #"\u00e9"#, "é", "東京", "😀", #"\ud83d\ude00"#,
                #"\t"#, #"\u0001"#, #"\u001F"#, " ", "Kelly's Cove", "0123456789abcdef0123456789",
            ])
        }
        return text + "\""
    }

    mutating func number() -> String {
        pick([
            "0", "-0", "7", "-12", "123456", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "1.5", "10.0", "-0.0", "1e2", "1E-2", "2.5e+3", "123456789012345678901234567890", "0.1", "1e400",
            "4.9e-324", "100e-2", "3.14159", "-1e-7",
        ])
    }

    mutating func value(depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 10), using: &random) {
        case 0: return "null"
        case 1: return pick(["true", "false"])
        case 2, 3: return number()
        case 4, 5: return string()
        case 6, 7: return object(depth: depth + 1)
        default: return array(depth: depth + 1)
        }
    }

    mutating func object(depth: Int) -> String {
        let members = (0..<Int.random(in: 0...5, using: &random)).map { _ in
            space() + key() + space() + ":" + space() + value(depth: depth) + space()
        }
        return "{" + (members.isEmpty ? space() : members.joined(separator: ",")) + "}"
    }

    mutating func array(depth: Int) -> String {
        let elements = (0..<Int.random(in: 0...3, using: &random)).map { _ in space() + value(depth: depth) + space() }
        return "[" + (elements.isEmpty ? space() : elements.joined(separator: ",")) + "]"
    }

    mutating func record() -> String {
        chance(90) ? object(depth: 0) : value(depth: 0)
    }

    mutating func fields() -> [JSONProjection.Field] {
        let kinds: [JSONProjection.Kind] = [.integer, .double, .boolean, .string, .json, .text]
        return (0..<Int.random(in: 1...8, using: &random)).map { _ in
            let path = (0..<Int.random(in: 0...3, using: &random)).map { _ in pick(Self.keys) }
            return JSONProjection.Field(path.isEmpty && chance(50) ? ["a"] : path, as: pick(kinds))
        }
    }
}

/// A page and how to read it.
private struct RandomCase {
    var page: [UInt8]
    var format: JSONPageReader.Format
    var recordsPath: [String]?
    var fields: [JSONProjection.Field]
    var cuts: [Int]

    init(seed: UInt64) {
        var pages = RandomPages(random: SeededGenerator(state: seed))
        format = pages.chance(50) ? .json : .ndjson
        pages.newlines = format == .json
        let records = (0..<Int.random(in: 0...12, using: &pages.random)).map { _ in pages.record() }
        var text: String
        if format == .ndjson {
            text = records.map { pages.space() + $0 + pages.space() }.joined(separator: pages.pick(["\n", "\r\n", "\n\n"]))
            recordsPath = nil
        } else if pages.chance(50) {
            text = "[" + records.map { pages.space() + $0 + pages.space() }.joined(separator: ",") + "]"
            recordsPath = nil
        } else {
            text = #"{"meta":{"n":1},"data":["# + records.joined(separator: "," + pages.space()) + #"],"next":null}"#
            recordsPath = ["data"]
        }
        page = Array(text.utf8)
        fields = pages.fields()
        let chunk = pages.pick([1, 2, 3, 5, 8, 13, 64, 1 << 16])
        cuts = Array(stride(from: chunk, to: page.count, by: chunk))
    }
}

/// What `field` should give for `record`, from its tree (`JSONValue.value(at:)`).
///
/// A mismatch's position is left out (the tree has none), and so is the
/// excerpt of a string, which is the string as written in the page.
private func expectedValue(_ record: JSONValue, _ field: JSONProjection.Field) -> Projected {
    guard let value = record.value(at: field.path) else { return .missing }
    let origin = JSONPosition(byteOffset: 0, line: 0, column: 0)
    func mismatch() -> Projected {
        let kind: JSONValueKind
        let text: String
        switch value {
        case .null: kind = .null; text = "null"
        case .bool(let flag): kind = .boolean; text = flag ? "true" : "false"
        case .number(let number): kind = .number; text = number.text
        case .string: kind = .string; text = ""
        case .array: kind = .array; text = value.jsonText
        case .object: kind = .object; text = value.jsonText
        }
        return .mismatch(kind, excerpt: excerptOf(text), position: origin)
    }
    switch (value, field.kind) {
    case (.null, _): return .null
    case (.number(let number), .integer): return number.int64.map { .integer($0) } ?? mismatch()
    case (.number(let number), .double): return number.double.map { .double($0) } ?? mismatch()
    case (.number(let number), .text): return .text(number.text)
    case (.string(let string), .string), (.string(let string), .text): return .text(string)
    case (.bool(let flag), .boolean): return .bool(flag)
    case (.bool(let flag), .text): return .text(flag ? "true" : "false")
    case (_, .json): return .json(value.jsonText)
    default: return mismatch()
    }
}

private func excerptOf(_ text: String) -> String {
    let bytes = Array(text.utf8)
    guard bytes.count > JSONFieldMismatch.excerptLimit else { return text }
    var cut = JSONFieldMismatch.excerptLimit
    while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
    return String(decoding: bytes[..<cut], as: UTF8.self)
}

/// A projected value as the tree can check it: positions and string excerpts left out.
private func comparable(_ value: Projected) -> Projected {
    guard case .mismatch(let kind, let excerpt, _) = value.withoutPosition else { return value }
    return .mismatch(kind, excerpt: kind == .string ? "" : excerpt, position: JSONPosition(byteOffset: 0, line: 0, column: 0))
}

/// Runs one seed: the page as it is, then three times with one byte changed,
/// inserted or deleted; both readers must agree on every field of every
/// record, or throw the same error.
private func checkSeed(_ seed: UInt64) throws {
    var random = SeededGenerator(state: seed ^ 0x5EED)
    let original = RandomCase(seed: seed)
    for round in 0..<4 {
        var testCase = original
        if round > 0 {
            guard !testCase.page.isEmpty else { return }
            let bytes: [UInt8] = Array("{}[],:\"\\ 0-1e.tfnu\n".utf8) + [0xC3, 0x80, 0x01, 0xED]
            let at = Int.random(in: 0..<testCase.page.count, using: &random)
            let byte = bytes[Int.random(in: 0..<bytes.count, using: &random)]
            switch Int.random(in: 0..<3, using: &random) {
            case 0: testCase.page[at] = byte
            case 1: testCase.page.insert(byte, at: at)
            default: testCase.page.remove(at: at)
            }
            testCase.cuts = testCase.cuts.filter { $0 < testCase.page.count }
        }
        let label = "seed \(seed)\(round > 0 ? " (one byte changed)" : ""): \(String(decoding: testCase.page, as: UTF8.self).debugDescription) fields \(testCase.fields)"
        let expected: FedPage
        do {
            expected = try feed(testCase.page, chunkSize: 1 << 20, format: testCase.format, recordsPath: testCase.recordsPath)
        } catch {
            let projected = projectError(testCase.page, testCase.fields, chunkSize: testCase.cuts.first ?? 1 << 20,
                                         format: testCase.format, recordsPath: testCase.recordsPath)
            #expect(projected == error as? JSONError, "\(label)")
            continue
        }
        let projected = try project(testCase.page, testCase.fields, cuts: testCase.cuts, format: testCase.format, recordsPath: testCase.recordsPath)
        #expect(projected.records.count == expected.records.count, "\(label)")
        for (index, (record, tree)) in zip(projected.records, expected.records).enumerated() {
            #expect(record.index == index, "\(label)")
            // The record's own text, from its start to its end, is the record.
            let text = testCase.page[max(0, record.start.byteOffset)..<max(0, min(record.end, testCase.page.count))]
            #expect((try? JSONValue.parse(text)) == tree, "\(label): record \(index)'s text \(String(decoding: text, as: UTF8.self).debugDescription)")
            guard case .object = tree else {
                #expect(record.fields.isEmpty && record.notAnObject != nil, "\(label): record \(index)")
                continue
            }
            #expect(record.notAnObject == nil, "\(label): record \(index)")
            let wanted = testCase.fields.map { comparable(expectedValue(tree, $0)) }
            #expect(record.fields.map(comparable) == wanted, "\(label): record \(index)")
        }
    }
}

@Test func randomRecordsProjectAsTheirTreesAreReadWithEverySeed() throws {
    if let replay = ProcessInfo.processInfo.environment["SWELL_PROJECTION_SEED"], let seed = UInt64(replay) {
        try checkSeed(seed)
        return
    }
    for seed in UInt64(1)...1000 {
        try checkSeed(seed)
    }
}

// `JSONProjection.wholeRecords`: the projection reader builds each record whole, and must
// give exactly `JSONPageReader`'s trees — and its errors — on the same random pages, cut
// into chunks anywhere (a record cut in two, a token carried).

/// Collects whole records with their places.
private struct TreeSink: JSONProjectionSink {
    var trees: [JSONValue] = []
    var places: [(index: Int, start: Int, end: Int)] = []
    private var pending: JSONValue?

    mutating func field(_ field: Int, value: JSONFieldValue) throws { Issue.record("a field with wholeRecords") }
    mutating func notAnObject(_ found: JSONFieldMismatch) throws { Issue.record("notAnObject with wholeRecords") }
    mutating func record(_ value: JSONValue) throws { pending = value }
    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        guard let tree = pending else {
            Issue.record("record \(index) ended without its tree")
            return
        }
        trees.append(tree)
        places.append((index, start.byteOffset, end))
        pending = nil
    }
}

/// The page's records built whole through the projection reader, cut at `cuts`.
private func buildWhole(_ testCase: RandomCase, maxDepth: Int = 512) throws -> TreeSink {
    var reader = JSONProjectionReader(projection: .wholeRecords, format: testCase.format, recordsPath: testCase.recordsPath,
                                      maxDepth: maxDepth)
    var sink = TreeSink()
    try testCase.page.withUnsafeBytes { buffer in
        var start = 0
        for end in testCase.cuts + [buffer.count] where end >= start {
            let chunk = Array(buffer[start..<end])
            try chunk.withUnsafeBytes { try reader.feed($0, into: &sink) }
            start = end
        }
    }
    _ = try reader.finish(into: &sink)
    return sink
}

private func checkWholeRecordsSeed(_ seed: UInt64) throws {
    var random = SeededGenerator(state: seed ^ 0x7EE5)
    let original = RandomCase(seed: seed)
    for round in 0..<4 {
        var testCase = original
        if round > 0 {
            guard !testCase.page.isEmpty else { return }
            let bytes: [UInt8] = Array("{}[],:\"\\ 0-1e.tfnu\n".utf8) + [0xC3, 0x80, 0x01, 0xED]
            let at = Int.random(in: 0..<testCase.page.count, using: &random)
            let byte = bytes[Int.random(in: 0..<bytes.count, using: &random)]
            switch Int.random(in: 0..<3, using: &random) {
            case 0: testCase.page[at] = byte
            case 1: testCase.page.insert(byte, at: at)
            default: testCase.page.remove(at: at)
            }
            testCase.cuts = testCase.cuts.filter { $0 < testCase.page.count }
        }
        let label = "seed \(seed)\(round > 0 ? " (one byte changed)" : ""): \(String(decoding: testCase.page, as: UTF8.self).debugDescription) cuts \(testCase.cuts.prefix(3))…"
        let expected: FedPage
        do {
            expected = try feed(testCase.page, chunkSize: 1 << 20, format: testCase.format, recordsPath: testCase.recordsPath)
        } catch {
            let pageError = try #require(error as? JSONError, "\(label)")
            #expect(throws: pageError, "\(label)") { _ = try buildWhole(testCase) }
            continue
        }
        let built = try buildWhole(testCase)
        #expect(built.trees == expected.records, "\(label)")
        for (n, place) in built.places.enumerated() {
            #expect(place.index == n, "\(label)")
            let text = testCase.page[max(0, place.start)..<max(0, min(place.end, testCase.page.count))]
            #expect((try? JSONValue.parse(text)) == built.trees[n], "\(label): record \(n)'s text")
        }
    }
}

@Test func wholeRecordsAreTheTreesThePageReaderBuildsWithEverySeed() throws {
    if let replay = ProcessInfo.processInfo.environment["SWELL_PROJECTION_SEED"], let seed = UInt64(replay) {
        try checkWholeRecordsSeed(seed)
        return
    }
    for seed in UInt64(1)...1000 {
        try checkWholeRecordsSeed(seed)
    }
}

@Test func wholeRecordsCountDepthFromTheTopOfThePage() throws {
    // Records two levels down a page ({"data": [ … ]}): a record of depth 3 is 5 deep.
    let page = Array(#"{"data":[{"a":{"b":[1]}}]}"#.utf8)
    var testCase = RandomCase(seed: 1)
    testCase.page = page
    testCase.format = .json
    testCase.recordsPath = ["data"]
    testCase.cuts = []
    let fine = try buildWhole(testCase, maxDepth: 5)
    #expect(fine.trees.count == 1)
    let pageError = try #require(pageReaderError(page, recordsPath: ["data"], maxDepth: 4))
    #expect(throws: pageError) { _ = try buildWhole(testCase, maxDepth: 4) }
}
