import Testing
@testable import SwellJSON

private let surfRecord = #"{"id":123,"date":"2019-03-04T05:06:07Z","height":"4-6 ft","period":"12","wind":"NW 10-15 kt","#
    + #""location":"Ocean Beach, \"SF\" Ü 東京 😀","rating":null,"spot":{"id":7,"name":"Kelly's Cove"}}"#

/// A page of `count` surf records, each with its own id, under "data", with "next" after them.
private func surfPage(count: Int) -> [UInt8] {
    var text = #"{"meta":{"page":1,"skip":[1,{"data":[]}]},"data":["#
    for index in 0..<count {
        if index > 0 { text += ",\n  " }
        text += surfRecord.replacingOccurrences(of: #""id":123"#, with: #""id":\#(index)"#)
    }
    text += #"],"next":"x","tail":{"next":false}}"#
    return Array(text.utf8)
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

@Test(arguments: [1, 7, 4096])
func recordsAndCapturesAreTheSameForEveryChunkSize(chunkSize: Int) throws {
    let page = surfPage(count: 50)
    let fed = try feed(page, chunkSize: chunkSize, recordsPath: ["data"], capturePaths: [["next"], ["meta", "page"], ["absent"]])
    let whole = try JSONValue.parse(page)
    guard case .array(let expected) = whole.value(at: ["data"]) else {
        Issue.record("the page has no data array")
        return
    }
    #expect(fed.records == expected)
    #expect(fed.indices == Array(0..<50))
    #expect(fed.captures == [["next"]: .string("x"), ["meta", "page"]: .number(JSONNumber(text: "1"))])
    #expect(fed.records[3].value(at: ["spot", "name"]) == .string("Kelly's Cove"))
    #expect(fed.records[3].value(at: ["location"]) == .string("Ocean Beach, \"SF\" Ü 東京 😀"))
    #expect(fed.records[3].value(at: ["id"]) == .number(JSONNumber(text: "3")))
}

@Test func recordCountFollowsTheRecordsDelivered() throws {
    var reader = JSONPageReader(format: .json, recordsPath: ["data"])
    var seen = 0
    let page = Array(#"{"data":[1,2,3"#.utf8)
    try page.withUnsafeBytes { try reader.feed($0) { _, _ in seen += 1 } }
    #expect(reader.recordCount == 2)
    try Array("]}".utf8).withUnsafeBytes { try reader.feed($0) { _, _ in seen += 1 } }
    _ = try reader.finish { _, _ in seen += 1 }
    #expect(reader.recordCount == 3)
    #expect(seen == 3)
}

@Test func bufferedBytesStayBoundedOnATwentyMegabytePage() throws {
    var text = "["
    text.reserveCapacity(21_000_000)
    var index = 0
    while text.utf8.count < 20_000_000 {
        if index > 0 { text += "," }
        text += surfRecord
        index += 1
    }
    text += "]"
    let fed = try feed(Array(text.utf8), chunkSize: 1 << 16)
    #expect(fed.records.count == index)
    #expect(fed.maxBuffered > 0)
    #expect(fed.maxBuffered < 4096)
}

@Test func aTopLevelArrayIsThePageWhenThereIsNoRecordsPath() throws {
    let fed = try feed(Array(#" [1, "two", {"three": 3}, [4], null] "#.utf8), chunkSize: 2)
    #expect(fed.records.count == 5)
    #expect(fed.records[1] == .string("two"))
    #expect(fed.records[4] == .null)
}

@Test func nullAtTheRecordsPathMeansNoRecords() throws {
    let fed = try feed(Array(#"{"data":null,"next":null}"#.utf8), chunkSize: 5, recordsPath: ["data"], capturePaths: [["next"]])
    #expect(fed.records.isEmpty)
    #expect(fed.captures == [["next"]: .null])
}

@Test func aMissingRecordsPathIsAnError() throws {
    let error = feedError(#"{"items":[1]}"#, recordsPath: ["data"])
    #expect(error?.message == "no array at 'data'")
    #expect(error?.byteOffset == 13)
}

@Test func aRecordsPathThatIsNotAnArrayIsAnError() throws {
    let error = feedError(#"{"meta":{"items":{"a":1}}}"#, recordsPath: ["meta", "items"])
    #expect(error?.message == "'meta.items' is an object, not an array of records")
    #expect(error?.byteOffset == 17)
    #expect(feedError(#"{"data":"x"}"#, recordsPath: ["data"])?.message == "'data' is a string, not an array of records")
    #expect(feedError(#"{"data":1}"#)?.message == "the page is an object, not an array of records")
}

@Test func nestedRecordsPathAndCapturesAreFoundAroundOtherValues() throws {
    let page = #"{"meta":{"next_cursor":"c2","total":3},"x":{"items":[9]},"meta2":1,"body":{"items":[{"a":[1,{"b":2}]},true]}}"#
    let fed = try feed(Array(page.utf8), chunkSize: 3, recordsPath: ["body", "items"], capturePaths: [["meta", "next_cursor"], ["meta"]])
    #expect(fed.records == [try JSONValue.parse(Array(#"{"a":[1,{"b":2}]}"#.utf8)), .bool(true)])
    #expect(fed.captures[["meta", "next_cursor"]] == .string("c2"))
    #expect(fed.captures[["meta"]]?.value(at: ["total"]) == .number(JSONNumber(text: "3")))
}

@Test func ndjsonGivesOneRecordPerLineAndSkipsBlankLines() throws {
    let text = "{\"a\":1}\r\n\n  \n[2]\n\"three\"\r\n{\"b\":{\"c\":null}}"
    for chunkSize in [1, 4, 100] {
        let fed = try feed(Array(text.utf8), chunkSize: chunkSize, format: .ndjson)
        #expect(fed.records.count == 4)
        #expect(fed.records[1] == .array([.number(JSONNumber(text: "2"))]))
        #expect(fed.records[3].value(at: ["b", "c"]) == .null)
        #expect(fed.indices == [0, 1, 2, 3])
    }
    #expect(try feed([], chunkSize: 1, format: .ndjson).records.isEmpty)
}

private struct Stop: Error, Equatable {}

@Test func errorsFromOnRecordPropagateUnchanged() throws {
    var reader = JSONPageReader(format: .json, recordsPath: nil)
    #expect(throws: Stop()) {
        try Array("[1,2,3]".utf8).withUnsafeBytes { buffer in
            try reader.feed(buffer) { index, _ in
                if index == 1 { throw Stop() }
            }
        }
    }
    #expect(reader.recordCount == 2)
}
