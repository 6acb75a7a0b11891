import Foundation
import Testing
@testable import SwellCSV

@Test func fieldWithCommaIsQuoted() throws {
    #expect(String(decoding: try csvBytes(rows: [[.text("a,b"), .text("c")]]), as: UTF8.self) == "\"a,b\",c\n")
}

@Test func quoteInsideFieldIsDoubledAndQuoted() throws {
    #expect(String(decoding: try csvBytes(rows: [[.text("say \"hi\"")]]), as: UTF8.self) == "\"say \"\"hi\"\"\"\n")
    #expect(String(decoding: try csvBytes(rows: [[.text("\"")]]), as: UTF8.self) == "\"\"\"\"\n")
}

@Test func carriageReturnLineFeedAndCRLFAreQuoted() throws {
    let text = String(decoding: try csvBytes(rows: [[.text("a\rb"), .text("c\nd"), .text("e\r\nf")]]), as: UTF8.self)
    #expect(text == "\"a\rb\",\"c\nd\",\"e\r\nf\"\n")
}

@Test func tabsAndSpacesAloneAreNotQuoted() throws {
    let text = String(decoding: try csvBytes(rows: [[.text("a\tb"), .text(" lead"), .text("trail "), .text(" "), .text("\t")]]), as: UTF8.self)
    #expect(text == "a\tb, lead,trail , ,\t\n")
}

@Test func emptyStringAndNullAreBothEmptyFields() throws {
    let text = String(decoding: try csvBytes(rows: [[.null, .text(""), .value(""), .text("x"), .null]]), as: UTF8.self)
    #expect(text == ",,,x,\n")
}

@Test func valuesFollowTheQuotingRuleToo() throws {
    #expect(String(decoding: try csvBytes(rows: [[.value("1,5"), .value("2")]]), as: UTF8.self) == "\"1,5\",2\n")
}

@Test func headerNamesAreQuotedLikeFieldsAndNotCountedAsRows() throws {
    let output = MemoryOutput()
    let writer = CSVWriter(output: output, escapeFormulas: true)
    try writer.writeHeader(["id", "name, full", "say \"x\"", "=formula", "tab\there"])
    try writer.writeRow([.value("1"), .text("a"), .null, .null, .null])
    try writer.finish()
    #expect(output.text == "id,\"name, full\",\"say \"\"x\"\"\",=formula,tab\there\n1,a,,,\n")
    #expect(writer.rowsWritten == 1)
    #expect(output.finished)
}

@Test func unicodeIsWrittenAsUTF8WithoutBOM() throws {
    let bytes = try csvBytes(header: ["名前"], rows: [[.text("日本語テキスト")], [.text("emoji 👩‍👩‍👧‍👦 🇺🇦")], [.text("한국어, 中文")]])
    #expect(Array(bytes.prefix(3)) != [0xEF, 0xBB, 0xBF])
    #expect(Array(bytes.prefix(6)) == Array("名前".utf8))
    #expect(String(decoding: bytes, as: UTF8.self) == "名前\n日本語テキスト\nemoji 👩‍👩‍👧‍👦 🇺🇦\n\"한국어, 中文\"\n")
}

@Test func everyLineEndsWithLineFeedIncludingTheLast() throws {
    let bytes = try csvBytes(header: ["a", "b"], rows: [[.text("1"), .text("2")], [.text("3"), .null]])
    #expect(bytes.last == UInt8(ascii: "\n"))
    #expect(!bytes.contains(UInt8(ascii: "\r")))
    #expect(String(decoding: bytes, as: UTF8.self) == "a,b\n1,2\n3,\n")
}

@Test func formulaEscapingPrefixesTextCellsOnly() throws {
    let formulas = ["=SUM(A1)", "+1", "-1", "@x"]
    let escaped = try csvBytes(rows: [formulas.map(CSVCell.text), formulas.map(CSVCell.value)], escapeFormulas: true)
    #expect(String(decoding: escaped, as: UTF8.self) == "'=SUM(A1),'+1,'-1,'@x\n=SUM(A1),+1,-1,@x\n")
}

@Test func formulaEscapingIsOffByDefault() throws {
    let bytes = try csvBytes(rows: [[.text("=SUM(A1)"), .text("+1"), .text("-1"), .text("@x")]])
    #expect(String(decoding: bytes, as: UTF8.self) == "=SUM(A1),+1,-1,@x\n")
}

@Test func formulaPrefixGoesInsideTheQuotes() throws {
    let bytes = try csvBytes(rows: [[.text("=HYPERLINK(\"http://x\",\"y\")"), .text("safe=1")]], escapeFormulas: true)
    #expect(String(decoding: bytes, as: UTF8.self) == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",safe=1\n")
}

@Test func rowsAreBufferedIntoFewLargeWrites() throws {
    let output = MemoryOutput()
    let writer = CSVWriter(output: output, bufferSize: 4096)
    for index in 0..<2000 {
        try writer.writeRow([.value(String(index)), .text("row number \(index), with a comma")])
    }
    let writesBeforeFinish = output.writeSizes
    #expect(writesBeforeFinish.count > 10)
    #expect(writesBeforeFinish.allSatisfy { $0 > 4096 - 64 && $0 <= 4096 })
    try writer.finish()
    #expect(output.writeSizes.count == writesBeforeFinish.count + 1)
    #expect(writer.rowsWritten == 2000)
    #expect(try parseCSV(output.bytes).count == 2000)
}

@Test func fieldLargerThanTheBufferIsWrittenWhole() throws {
    let output = MemoryOutput()
    let writer = CSVWriter(output: output, bufferSize: 64)
    let big = String(repeating: "ab\"c,", count: 100)
    try writer.writeRow([.text("x"), .text(big), .text("y")])
    try writer.finish()
    #expect(try parseCSV(output.bytes) == [["x", big, "y"]])
}

@Test func dltWeirdRowsRoundTripThroughAnRFC4180Reader() throws {
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/fixtures/dlt/tests/common/cases/weird_rows.json").standardized
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture))
    let objects = try #require(json as? [[String: Any]])
    var rows: [[String]] = []
    for object in objects {
        let strings = object.keys.sorted().compactMap { object[$0] as? String }
        rows.append(strings)
    }
    #expect(rows.count == 5)
    #expect(rows.flatMap { $0 }.contains { $0.contains("\n") && $0.contains("\"") && $0.contains(",") })
    let columnCount = rows.map(\.count).max() ?? 0
    let header = (0..<columnCount).map { "field \($0), \"quoted\"" }

    let bytes = try csvBytes(header: header, rows: rows.map { $0.map(CSVCell.text) })
    let parsed = try parseCSV(bytes)
    #expect(parsed.first == header)
    #expect(Array(parsed.dropFirst()) == rows)
}
