import Testing
@testable import SwellJSON

/// A page that is one object is that one record when the reader is told so (pipeline
/// files version 3, without `records`), in every chunking, through both readers; arrays
/// of records read as before; without the option it stays an error.
@Suite struct ObjectPageTests {
    static let page = Array(#"{"id": 7, "name": "one", "tags": [{"x": 1}], "meta": {"a": [1, 2]}}"#.utf8)

    @Test(arguments: [1, 3, 4096])
    func theTreeReaderGivesTheObjectAsItsOneRecord(chunkSize: Int) throws {
        let fed = try feed(Self.page, chunkSize: chunkSize, objectPageIsRecord: true)
        #expect(fed.records == [try JSONValue.parse(Self.page)])
        #expect(fed.indices == [0])
        let array = try feed(Array("[{\"id\": 1}, {\"id\": 2}]".utf8), chunkSize: chunkSize, objectPageIsRecord: true)
        #expect(array.records.count == 2)
    }

    @Test(arguments: [1, 5, 4096])
    func theProjectionReaderGivesTheObjectAsItsOneRecord(chunkSize: Int) throws {
        let fields = [JSONProjection.Field(["id"], as: .integer), JSONProjection.Field(["name"], as: .string)]
        let projected = try project(Self.page, fields, chunkSize: chunkSize, objectPageIsRecord: true)
        #expect(projected.records.map(\.fields) == [[.integer(7), .text("one")]])
        #expect(projected.records.first?.end == Self.page.count)
    }

    @Test func withoutTheOptionAnObjectPageIsStillAnError() {
        #expect(feedError(String(decoding: Self.page, as: UTF8.self))?.message.contains("not an array of records") == true)
        #expect(projectError(Self.page)?.message.contains("not an array of records") == true)
    }

    @Test func aScalarPageOrARecordsPathIsNotAffected() throws {
        for text in ["7", "\"x\"", "true"] {
            var reader = JSONPageReader(format: .json, recordsPath: nil, objectPageIsRecord: true)
            #expect(throws: JSONError.self) {
                try reader.feed(UnsafeRawBufferPointer(start: nil, count: 0)) { _, _ in }
                try Array(text.utf8).withUnsafeBytes { try reader.feed($0) { _, _ in } }
                _ = try reader.finish { _, _ in }
            }
        }
        let nested = try feed(Array(#"{"data": [{"id": 1}]}"#.utf8), chunkSize: 4, recordsPath: ["data"], objectPageIsRecord: true)
        #expect(nested.records == [try JSONValue.parse(Array(#"{"id": 1}"#.utf8))])
    }
}
