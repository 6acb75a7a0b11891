import Foundation
import Testing
@testable import SwellJSON

private typealias Field = JSONProjection.Field

/// The fields of the one record of an NDJSON page.
private func projectRecord(_ record: String, _ fields: [Field]) throws -> [Projected] {
    let page = try project(Array(record.utf8), fields, format: .ndjson)
    #expect(page.records.count == 1)
    return page.records.first?.fields ?? []
}

/// Where `part` first starts in `text`, as a position on line 1.
private func position(of part: String, in text: String) -> JSONPosition {
    let haystack = Array(text.utf8)
    let needle = Array(part.utf8)
    let offset = (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle } ?? -1
    return JSONPosition(byteOffset: offset, line: 1, column: offset + 1)
}

/// `text` cut as an excerpt is: at most `JSONFieldMismatch.excerptLimit` bytes, at a character boundary.
private func excerpt(_ text: String) -> String {
    let bytes = Array(text.utf8)
    guard bytes.count > JSONFieldMismatch.excerptLimit else { return text }
    var cut = JSONFieldMismatch.excerptLimit
    while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
    return String(decoding: bytes[..<cut], as: UTF8.self)
}

@Test func everyKindReadsItsValue() throws {
    let record = #"{"i":42,"d":2.5,"b":true,"s":"hé","j":{ "x" : [ 1 , "a", null ] , "y":{}},"t":12.50,"tb":false,"ts":"x"}"#
    let fields = try projectRecord(record, [
        Field(["i"], as: .integer), Field(["d"], as: .double), Field(["b"], as: .boolean), Field(["s"], as: .string),
        Field(["j"], as: .json), Field(["t"], as: .text), Field(["tb"], as: .text), Field(["ts"], as: .text),
        Field(["i"], as: .double), Field(["d"], as: .integer), Field(["j"], as: .text), Field(["s"], as: .json),
        Field(["b"], as: .json), Field(["t"], as: .json),
    ])
    #expect(fields == [
        .integer(42), .double(2.5), .bool(true), .text("hé"),
        .json(#"{"x":[1,"a",null],"y":{}}"#), .text("12.50"), .text("false"), .text("x"),
        .double(42), .mismatch(.number, excerpt: "2.5", position: position(of: "2.5", in: record)),
        .mismatch(.object, excerpt: #"{"x":[1,"a",null],"y":{}}"#, position: position(of: "{ \"x\"", in: record)),
        .json(#""hé""#), .json("true"), .json("12.50"),
    ])
}

@Test func nestedPathsReadInsideObjectsOnly() throws {
    let record = #"{"author":{"name":"Ann","address":{"city":"Oslo"}},"tags":[{"name":"x"}],"s":"str","n":null}"#
    let fields = try projectRecord(record, [
        Field(["author", "name"], as: .string), Field(["author", "address", "city"], as: .string),
        Field(["author", "missing"], as: .string), Field(["tags", "name"], as: .string), Field(["s", "x"], as: .string),
        Field(["n", "x"], as: .string), Field(["author"], as: .json), Field([], as: .json), Field(["author", "name"], as: .integer),
    ])
    #expect(fields == [
        .text("Ann"), .text("Oslo"), .missing, .missing, .missing, .missing,
        .json(#"{"name":"Ann","address":{"city":"Oslo"}}"#), .json(record),
        .mismatch(.string, excerpt: #""Ann""#, position: position(of: #""Ann""#, in: record)),
    ])
}

@Test func aMissingFieldIsNotANullOne() throws {
    let kinds: [JSONProjection.Kind] = [.integer, .double, .boolean, .string, .json, .text]
    let fields = kinds.map { Field(["a"], as: $0) } + kinds.map { Field(["b"], as: $0) }
    #expect(try projectRecord(#"{"a":null}"#, fields) == Array(repeating: .null, count: 6) + Array(repeating: .missing, count: 6))
    #expect(try projectRecord("{}", fields) == Array(repeating: .missing, count: 12))
}

@Test func theLaterOfTwoEqualKeysWinsAsInTheTree() throws {
    let cases: [(record: String, path: [String])] = [
        (#"{"a":1,"a":2}"#, ["a"]),
        (#"{"a":1,"a":null}"#, ["a"]),
        (#"{"a":{"x":1},"a":{"y":2}}"#, ["a", "x"]),
        (#"{"a":{"x":1},"a":{"y":2}}"#, ["a", "y"]),
        (#"{"a":{"x":1},"a":5}"#, ["a", "x"]),
        (#"{"a":{"x":1,"x":3},"b":0}"#, ["a", "x"]),
        (#"{"a":1,"\u0061":7}"#, ["a"]),
    ]
    for (record, path) in cases {
        let tree = try JSONValue.parse(Array(record.utf8))
        let expected: Projected = switch tree.value(at: path) {
        case nil: .missing
        case .null?: .null
        case .number(let number)?: .integer(number.int64 ?? -1)
        default: .json("unexpected")
        }
        #expect(try projectRecord(record, [Field(path, as: .integer)]) == [expected], "\(record) at \(path)")
    }
    #expect(try projectRecord(#"{"a":[1],"a":[2,3]}"#, [Field(["a"], as: .json)]) == [.json("[2,3]")])
}

@Test func escapesAreDecodedIntoStringsAndWrittenBackAsTheTreeWritesThem() throws {
    let record = #"{"s":"a\"b\\c\/d\n\u00e9\ud83d\ude00\u0001\t","n\u0061me":"x","plain":"é/"}"#
    let fields = try projectRecord(record, [
        Field(["s"], as: .string), Field(["s"], as: .text), Field(["s"], as: .json), Field(["name"], as: .string),
        Field(["plain"], as: .json),
    ])
    let decoded = "a\"b\\c/d\né😀\u{01}\t"
    let tree = try JSONValue.parse(Array(record.utf8))
    #expect(fields == [
        .text(decoded), .text(decoded), .json(tree.value(at: ["s"])?.jsonText ?? ""), .text("x"), .json(#""é/""#),
    ])
    #expect(fields[2] == .json(#""a\"b\\c/d\né😀\u0001\t""#))
}

@Test func keysThatJSONMustEscapeAreMatchedDecoded() throws {
    let record = #"{"we\"ird":1,"back\\slash":2,"tab\there":3,"\u00e9t\u00e9":4,"été":5}"#
    let fields = try projectRecord(record, [
        Field(["we\"ird"], as: .integer), Field(["back\\slash"], as: .integer), Field(["tab\there"], as: .integer),
        Field(["été"], as: .integer),
    ])
    #expect(fields == [.integer(1), .integer(2), .integer(3), .integer(5)])
}

@Test(arguments: [
    ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min), ("-0", 0), ("0", 0), ("-0.0", 0),
    ("1e2", 100), ("1E+2", 100), ("10.0", 10), ("100e-2", 1), ("123456789012345678", 123_456_789_012_345_678),
    ("1234567890123456789", 1_234_567_890_123_456_789), ("-1234567890123456789", -1_234_567_890_123_456_789),
    ("9.223372036854775807e18", Int64.max),
] as [(String, Int64)])
func integersAreExact(text: String, value: Int64) throws {
    #expect(try projectRecord(#"{"n":\#(text)}"#, [Field(["n"], as: .integer)]) == [.integer(value)])
    #expect(JSONNumber(text: text).int64 == value)
}

@Test(arguments: ["9223372036854775808", "-9223372036854775809", "99999999999999999999", "1.5", "1e-2", "1e19", "0.1", "12345678901234567891e-1"])
func numbersThatAreNotExactInt64AreMismatches(text: String) throws {
    let record = #"{"n":\#(text)}"#
    #expect(try projectRecord(record, [Field(["n"], as: .integer)]) == [
        .mismatch(.number, excerpt: text, position: JSONPosition(byteOffset: 5, line: 1, column: 6)),
    ])
    #expect(JSONNumber(text: text).int64 == nil)
}

@Test(arguments: [
    "0", "-0", "2.5", "0.1", "1e-300", "1.7976931348623157e308", "123456789012345678901234567890", "4.9e-324",
    "2.2250738585072011e-308", "9007199254740993", "0.000001234", "1e22", "1e23", "-12.75e-3", "5e-324", "9007199254740992e22",
    "0.30000000000000004", "100000000000000000000000",
])
func doublesAreTheNearestDouble(text: String) throws {
    let expected = try #require(Double(text))
    #expect(try projectRecord(#"{"n":\#(text)}"#, [Field(["n"], as: .double)]) == [.double(expected)])
}

@Test func doublesBeyondTheFiniteRangeAreMismatches() throws {
    #expect(try projectRecord(#"{"n":-1e400}"#, [Field(["n"], as: .double)]) == [
        .mismatch(.number, excerpt: "-1e400", position: JSONPosition(byteOffset: 5, line: 1, column: 6)),
    ])
}

@Test func mismatchesNameWhatWasThereWithAnExcerptAndItsPosition() throws {
    let long = "a long string that goes on and on and on, well past forty bytes"
    let accents = String(repeating: "é", count: 30)
    let text = "[\n  {\"a\": \"\(long)\",\n   \"b\": {\"deep\": [1, 2, 3], \"more\": \"x\"}, \"c\": \"\(accents)\", \"d\": [\"\(long)\"]}\n]"
    let page = try project(Array(text.utf8), [
        Field(["a"], as: .integer), Field(["b"], as: .integer), Field(["c"], as: .boolean), Field(["d"], as: .text),
    ])
    let lineTwo = "[\n".utf8.count
    let lineThree = lineTwo + "  {\"a\": \"\(long)\",\n".utf8.count
    #expect(page.records.first?.fields == [
        .mismatch(.string, excerpt: excerpt("\"\(long)\""), position: JSONPosition(byteOffset: lineTwo + 8, line: 2, column: 9)),
        .mismatch(.object, excerpt: #"{"deep":[1,2,3],"more":"x"}"#, position: JSONPosition(byteOffset: lineThree + 8, line: 3, column: 9)),
        .mismatch(.string, excerpt: "\"" + String(repeating: "é", count: 19), position: position(of: "\"éé", in: text).onLine(3, lineStart: lineThree)),
        .mismatch(.array, excerpt: excerpt("[\"\(long)\"]"), position: position(of: "[\"a long", in: text).onLine(3, lineStart: lineThree)),
    ])
}

extension JSONPosition {
    fileprivate func onLine(_ line: Int, lineStart: Int) -> JSONPosition {
        JSONPosition(byteOffset: byteOffset, line: line, column: byteOffset - lineStart + 1)
    }
}

@Test func recordsThatAreNotObjectsAreReportedAsSuch() throws {
    let text = "1\n\"x\"\n [1, {\"a\": 2}]\nnull\ntrue\n{\"a\":1}\n-2.5e3"
    let page = try project(Array(text.utf8), [Field(["a"], as: .integer), Field([], as: .json)], format: .ndjson)
    let notObjects = page.records.map(\.notAnObject)
    #expect(notObjects == [
        .mismatch(.number, excerpt: "1", position: JSONPosition(byteOffset: 0, line: 1, column: 1)),
        .mismatch(.string, excerpt: "\"x\"", position: JSONPosition(byteOffset: 2, line: 2, column: 1)),
        .mismatch(.array, excerpt: #"[1,{"a":2}]"#, position: JSONPosition(byteOffset: 7, line: 3, column: 2)),
        .mismatch(.null, excerpt: "null", position: JSONPosition(byteOffset: 21, line: 4, column: 1)),
        .mismatch(.boolean, excerpt: "true", position: JSONPosition(byteOffset: 26, line: 5, column: 1)),
        nil,
        .mismatch(.number, excerpt: "-2.5e3", position: JSONPosition(byteOffset: 39, line: 7, column: 1)),
    ])
    #expect(page.records.map(\.index) == Array(0..<7))
    #expect(page.records.map(\.start.byteOffset) == [0, 2, 7, 21, 26, 31, 39])
    #expect(page.records[5].fields == [.integer(1), .json(#"{"a":1}"#)])
    #expect(page.records[2].fields.isEmpty)
}

@Test func recordsPathAndCapturesAreReadAsByThePageReader() throws {
    let text = #"{"meta":{"page":1,"skip":[1,{"data":[]}]},"data":[{"id":1,"x":{"y":"a"}},{"id":2},7],"next":"p2"}"#
    let page = try project(Array(text.utf8), [Field(["id"], as: .integer), Field(["x", "y"], as: .string)],
                           chunkSize: 5, recordsPath: ["data"], capturePaths: [["next"], ["meta", "page"]])
    #expect(page.records.map(\.fields) == [[.integer(1), .text("a")], [.integer(2), .missing], []])
    #expect(page.records[2].notAnObject == .mismatch(.number, excerpt: "7", position: position(of: "7]", in: text)))
    #expect(page.records.map(\.start.byteOffset) == [50, 73, 82])
    #expect(page.captures == [["next"]: .string("p2"), ["meta", "page"]: .number(JSONNumber(text: "1"))])
    #expect(try project(Array(#"{"data":null}"#.utf8), [], recordsPath: ["data"]).records.isEmpty)
}

/// A small page with every kind of token, escapes cut anywhere, and multi-byte characters.
private let chunkedPage = """
{"data":[{"id":1,"name":"Ann \\"A\\" \\u00e9\\ud83d\\ude00","score":-12.5e-1,"ok":true,"tags":["x",{"k":null}],
"spot":{"id":7,"name":"Kelly's Cove 東京"},"n":null,"big":123456789012345678901},
 {"id":-9223372036854775808,"name":"\\/","spot":{"name":"é"},"ok":false,"score":0},
 "text", 3.25e2, [1,[2,{"a":"b"}]], {"id":1,"id":2}],"next":{"cursor":"c\\n1"}}
"""

private let chunkedFields = [
    Field(["id"], as: .integer), Field(["name"], as: .string), Field(["score"], as: .double), Field(["ok"], as: .boolean),
    Field(["tags"], as: .json), Field(["spot", "name"], as: .text), Field(["spot"], as: .json), Field(["n"], as: .text),
    Field(["big"], as: .integer), Field(["big"], as: .text), Field([], as: .json), Field(["name"], as: .integer),
]

@Test func everyChunkBoundaryGivesTheSameResultAsOneChunk() throws {
    let bytes = Array(chunkedPage.utf8)
    let whole = try project(bytes, chunkedFields, recordsPath: ["data"], capturePaths: [["next", "cursor"]])
    #expect(whole.records.count == 6)
    #expect(whole.captures == [["next", "cursor"]: .string("c\n1")])
    for cut in 0...bytes.count {
        let split = try project(bytes, chunkedFields, cuts: [cut], recordsPath: ["data"], capturePaths: [["next", "cursor"]])
        #expect(split == ProjectedPage(records: whole.records, captures: whole.captures, maxBuffered: split.maxBuffered), "cut at \(cut)")
    }
    for chunkSize in [1, 2, 3, 7] {
        let fed = try project(bytes, chunkedFields, chunkSize: chunkSize, recordsPath: ["data"], capturePaths: [["next", "cursor"]])
        #expect(fed.records == whole.records, "chunks of \(chunkSize)")
    }
}

@Test func everyChunkBoundaryOfAnNDJSONPageGivesTheSameResult() throws {
    let text = "{\"id\":1,\"name\":\"a\\u00e9\\\"\",\"score\":1e2}\r\n\n[1]\n{\"id\":22,\"spot\":{\"name\":\"東\"},\"tags\":[true,false]}\n7"
    let bytes = Array(text.utf8)
    let whole = try project(bytes, chunkedFields, format: .ndjson)
    #expect(whole.records.count == 4)
    for cut in 0...bytes.count {
        for second in [cut, min(cut + 1, bytes.count), min(cut + 5, bytes.count)] {
            let split = try project(bytes, chunkedFields, cuts: [cut, second], format: .ndjson)
            #expect(split.records == whole.records, "cut at \(cut) and \(second)")
        }
    }
}

/// Pages whose error is in a value outside the projection (and some in it).
private let invalidPages: [[UInt8]] = [
    #"[{"a":1,"skip":{"x":[1,2,]}}]"#, #"[{"skip":"bad \x escape"}]"#, #"[{"skip":"\ud800"}]"#, #"[{"skip":"\ud800\u0041"}]"#,
    #"[{"skip":"\udc00"}]"#, #"[{"skip":01}]"#, #"[{"skip":1.}]"#, #"[{"skip":1.5e}]"#, #"[{"skip":-}]"#, #"[{"skip":tru}]"#,
    #"[{"skip":nul}]"#, #"[{"skip":[1 2]}]"#, #"[{"skip":{"k" 1}}]"#, #"[{"skip":{1:2}}]"#, #"[{"skip":{"k":1,}}]"#,
    #"[{"skip":"\u12"}]"#, #"[{"skip":"\u12G4"}]"#, "[{\"skip\":\"ctrl\u{01}\"}]", "[{\"skip\":\"tab\t\"}]",
    "[\n {\"a\": 1,\n  \"skip\": [true,\n   false,,]}]", #"[{"a":1} {"b":2}]"#,
    #"[{"a":1},]"#, #"[{"a":1}"#, #"[{"a":"unterminated"#, #"[{"a":1,"skip":"abc"#, #"[{"a":1,"skip":12"#, #"[{"a":tr"#,
    #"[{"a":1}]]"#, #"[{"a":1}] x"#, #"[{"a":"x"}}"#, #"[{"a":[1}]"#, #"[{"a":{]}]"#, #"[{"a":1:2}]"#, #"[{"a"}]"#,
    #"[{"a":1e5.2}]"#, #"[{"a":NaN}]"#, #"[{"a":Infinity}]"#, #"[{"a":'x'}]"#, #"[{"a":"\x"}]"#, "[{\"a\":1}\u{0B}]",
].map { Array($0.utf8) } + [
    [0x5B, 0x7B, 0x22, 0x73, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D, 0x5D],  // invalid UTF-8 in a skipped string
    [0x5B, 0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D, 0x5D],  // an encoded surrogate in a projected one
    [0x5B, 0x7B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x3A, 0x31, 0x7D, 0x5D],  // above U+10FFFF in a key
    [0x5B, 0x7B, 0x22, 0x73, 0x22, 0x3A, 0x22, 0x5C, 0x6E, 0xE9, 0x22, 0x7D, 0x5D],  // a lone continuation byte after an escape
    [0xEF, 0xBB, 0xBF, 0x5B, 0x5D],  // a byte-order mark
]

@Test func errorsAnywhereAreThePageReadersErrorsAtTheSamePosition() throws {
    let fields = [Field(["a"], as: .integer), Field(["b", "c"], as: .json)]
    for page in invalidPages {
        let name = String(decoding: page, as: UTF8.self).debugDescription
        for chunkSize in [1, 3, 1 << 16] {
            let expected = pageReaderError(page, chunkSize: chunkSize)
            #expect(expected != nil, "\(name) is valid")
            #expect(projectError(page, fields, chunkSize: chunkSize) == expected, "\(name) in chunks of \(chunkSize)")
            let ndjson = pageReaderError(page, chunkSize: chunkSize, format: .ndjson)
            #expect(projectError(page, fields, chunkSize: chunkSize, format: .ndjson) == ndjson, "\(name) as NDJSON in chunks of \(chunkSize)")
        }
    }
    let ndjson = Array("{\"a\":1}\n{\"a\":\n2}".utf8)
    #expect(projectError(ndjson, format: .ndjson)?.message == "unexpected end of line inside a record (NDJSON records are one line each)")
    #expect(projectError(ndjson, format: .ndjson) == pageReaderError(ndjson, format: .ndjson))
}

@Test func nestingDeeperThanMaxDepthIsTheSameErrorAsInThePageReader() throws {
    for text in [#"{"data":[{"a":[[[1]]]}]}"#, #"{"data":[{"skip":{"x":{"y":{}}}}]}"#, #"{"data":[[[[]]]]}"#, #"{"data":[{"a":[[1]]}]}"#] {
        let page = Array(text.utf8)
        let expected = pageReaderError(page, recordsPath: ["data"], maxDepth: 4)
        #expect(projectError(page, chunkSize: 2, recordsPath: ["data"], maxDepth: 4) == expected, "\(text)")
    }
    #expect(projectError(Array(#"{"data":[{"skip":{"x":{"y":{}}}}]}"#.utf8), recordsPath: ["data"], maxDepth: 4)?.message == "nesting deeper than 4")
}

@Test func errorsFromTheSinkPropagateAndStopTheReader() throws {
    var reader = JSONProjectionReader(projection: JSONProjection(fields: [Field(["a"], as: .integer)]), format: .ndjson, recordsPath: nil)
    var sink = CollectingSink(stopAt: 1)
    let page = Array("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n".utf8)
    #expect(throws: StopProjecting()) {
        try page.withUnsafeBytes { try reader.feed($0, into: &sink) }
    }
    #expect(sink.records.count == 2)
    #expect(reader.recordCount == 2)
    #expect(throws: JSONError.self) {
        try page.withUnsafeBytes { try reader.feed($0, into: &sink) }
    }
}

@Test func theCarriedBytesStayTheSizeOfATokenOnABigPage() throws {
    let record = #"{"id":123,"location":"Ocean Beach, \"SF\" Ü 東京 😀","rating":null,"spot":{"id":7,"name":"Kelly's Cove"}}"#
    var text = "["
    for index in 0..<20_000 {
        if index > 0 { text += ",\n" }
        text += record
    }
    text += "]"
    let page = try project(Array(text.utf8), [Field(["id"], as: .integer), Field(["spot", "name"], as: .string)], chunkSize: 4096)
    #expect(page.records.count == 20_000)
    #expect(page.records.allSatisfy { $0.fields == [.integer(123), .text("Kelly's Cove")] })
    #expect(page.maxBuffered < 100)
}
