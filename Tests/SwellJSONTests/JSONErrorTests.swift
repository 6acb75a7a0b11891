import Testing
@testable import SwellJSON

@Test func aMissingCommaIsReportedAtItsLineAndColumn() throws {
    let error = try #require(feedError("{\"data\": [\n  {\"a\": 1}\n  {\"a\": 2}\n]}", chunkSize: 5, recordsPath: ["data"]))
    #expect(error.message == "expected ',' or ']' after an array element")
    #expect(error.byteOffset == 24)
    #expect(error.line == 3)
    #expect(error.column == 3)
    #expect(error.description == "expected ',' or ']' after an array element at line 3, column 3 (byte 24)")
    let member = try #require(parseError(Array(#"{"a": 1 "b": 2}"#.utf8)))
    #expect(member.message == "expected ',' or '}' after an object member")
    #expect(member.byteOffset == 8)
}

@Test func anUnterminatedStringAtTheEndIsReportedByFinish() throws {
    var reader = JSONPageReader(format: .json, recordsPath: nil)
    try Array("[\"ab".utf8).withUnsafeBytes { try reader.feed($0) { _, _ in } }
    #expect(reader.bufferedByteCount == 3)
    #expect(throws: JSONError("unterminated string", byteOffset: 1, line: 1, column: 2)) {
        _ = try reader.finish { _, _ in }
    }
    #expect(feedError("[1, 2")?.message == "unexpected end of the page")
    #expect(feedError("[1, 2")?.byteOffset == 5)
}

@Test func invalidUTF8IsReportedAtTheBadByte() throws {
    let bytes: [UInt8] = Array("[\"ok\",\n \"ab".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
    for chunkSize in [1, 64] {
        var caught: JSONError?
        do {
            _ = try feed(bytes, chunkSize: chunkSize)
        } catch let error as JSONError {
            caught = error
        }
        #expect(caught == JSONError("invalid UTF-8", byteOffset: 11, line: 2, column: 5))
    }
    #expect(parseError([0x22, 0xED, 0xA0, 0x80, 0x22])?.message == "invalid UTF-8")
}

@Test func aByteOrderMarkIsRejected() throws {
    let error = parseError([0xEF, 0xBB, 0xBF] + Array("[1]".utf8))
    #expect(error == JSONError("byte-order mark at the start of the page", byteOffset: 0, line: 1, column: 1))
    #expect(feedError("\u{FEFF}[1]", chunkSize: 1)?.message == "byte-order mark at the start of the page")
}

@Test func nestingTenThousandDeepIsAnErrorNotACrash() throws {
    let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    #expect(parseError(Array(deep.utf8)) == JSONError("nesting deeper than 512", byteOffset: 512, line: 1, column: 513))
    #expect(feedError(#"{"data":"# + deep + "}", chunkSize: 4096, recordsPath: ["data"])?.message == "nesting deeper than 512")
    let limit = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect(parseError(Array(limit.utf8)) == nil)
    #expect(parseError(Array(limit.utf8), maxDepth: 511)?.message == "nesting deeper than 511")
}

@Test func trailingGarbageIsRejected() throws {
    #expect(parseError(Array("[1] x".utf8)) == JSONError("unexpected data after the value", byteOffset: 4, line: 1, column: 5))
    #expect(feedError("{\"data\":[]}\n{}", recordsPath: ["data"])
        == JSONError("unexpected data after the end of the page", byteOffset: 12, line: 2, column: 1))
}

@Test func strictGrammarErrorsAreNamed() throws {
    #expect(parseError(Array("[1,]".utf8))?.message == "expected a value after ','")
    #expect(parseError(Array(#"{"a":1,}"#.utf8))?.message == "expected a string key after ','")
    #expect(parseError(Array("[01]".utf8))?.message == "leading zero in a number")
    #expect(parseError(Array("[NaN]".utf8))?.message == "expected a value or ']'")
    #expect(parseError(Array(#"["\ud800"]"#.utf8))?.message == "lone surrogate in a \\u escape")
    #expect(parseError(Array("[\"a\tb\"]".utf8))?.message == "unescaped control character in a string")
    #expect(parseError(Array("".utf8))?.message == "expected a value")
}

@Test func ndjsonErrorsNameTheLine() throws {
    let error = try #require(feedError("{\"a\":1}\n{\"a\":2}\n{\"a\" 3}\n", chunkSize: 3, format: .ndjson))
    #expect(error.line == 3)
    #expect(error.column == 6)
    #expect(error.message == "expected ':' after an object key")
    #expect(feedError("{\"a\":1} {\"a\":2}\n", format: .ndjson)?.message == "expected the end of the line after a record")
    #expect(feedError("{\"a\":\n1}\n", format: .ndjson)?.line == 1)
}

@Test func theReaderRefusesToGoOnAfterAnError() throws {
    var reader = JSONPageReader(format: .json, recordsPath: nil)
    #expect(throws: JSONError.self) {
        try Array("[1,,".utf8).withUnsafeBytes { try reader.feed($0) { _, _ in } }
    }
    #expect(throws: JSONError.self) {
        try Array("2]".utf8).withUnsafeBytes { try reader.feed($0) { _, _ in } }
    }
}
