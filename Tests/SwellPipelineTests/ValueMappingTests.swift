import Foundation
import SwellCSV
import SwellCalendar
import SwellJSON
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// The Values table: what each attribute type accepts from JSON (MagicalRecord's coercion table among the cases).
@Suite struct ValueMappingTests {
    private func convert(_ json: String, _ type: AttributeType, _ dates: DateFormat = .iso8601) throws -> StoreValue? {
        let value = try JSONValue.parse(Array(json.utf8))
        if case .success(let converted) = ValueConverter.convert(value, to: type, dates: dates, patterns: DatePatterns()) { return converted }
        return nil
    }

    @Test func magicalRecordsCoercionTableConverts() throws {
        let url = Workspace.repositoryRoot.appendingPathComponent("fixtures/third-party/magicalrecord-single-entity.json")
        let record = try JSONValue.parse(Array(try Data(contentsOf: url)))
        func field(_ name: String, _ type: AttributeType, _ dates: DateFormat = .iso8601) -> StoreValue? {
            guard case .success(let value) = ValueConverter.convert(record.value(at: [name]) ?? .null, to: type, dates: dates, patterns: DatePatterns()) else { return nil }
            return value
        }
        #expect(field("int64TestAttribute", .integer) == .integer(10_158_365_420_975_381))
        #expect(field("int16AsStringTestAttribute", .integer) == .integer(256))
        #expect(field("int64AsStringTestAttribute", .integer) == .integer(42))
        #expect(field("doubleTestAttribute", .double) == .real(124.3))
        #expect(field("doubleAsStringTestAttribute", .double) == .real(124.3))
        #expect(field("floatTestAttribute", .integer) == .integer(10_000_000_000))
        #expect(field("booleanTestAttribute", .boolean) == .integer(0))
        #expect(field("booleanAsStringTestAttribute", .boolean) == .integer(1))
        #expect(field("numberAsStringTestAttribute", .string) == .text("10248909829"))
        #expect(field("dateTestAttribute", .date) == .real(1_311_460_240))
        #expect(field("dateWithCustomFormat", .date, .pattern("M/d/yyyy H-mm-ss")) == .real(1_312_509_364))
        #expect(field("unixTimeTestAttribute", .date, .unix) == .real(1_388_349_428))
        #expect(field("unixTime13TestAttribute", .date, .unixMilliseconds) == .real(1_388_349_427.543))
        #expect(field("nullTestAttribute", .string) == .null)
        #expect(field("colorTestAttribute", .integer) == nil)
    }

    @Test func valueEdgesFollowTheContract() throws {
        #expect(try convert("1e2", .integer) == .integer(100))
        #expect(try convert("10.0", .integer) == .integer(10))
        #expect(try convert("1.5", .integer) == nil)
        #expect(try convert("\"-42\"", .integer) == .integer(-42))
        #expect(try convert("\"+42\"", .integer) == nil)
        #expect(try convert("\"4 2\"", .integer) == nil)
        #expect(try convert("92233720368547758070", .integer) == nil)
        #expect(try convert("\"yes\"", .boolean) == nil)
        #expect(try convert("2", .boolean) == nil)
        #expect(try convert("1", .boolean) == .integer(1))
        #expect(try convert("\"false\"", .boolean) == .integer(0))
        #expect(try convert("true", .string) == .text("true"))
        #expect(try convert("12.50", .string) == .text("12.50"))
        #expect(try convert("{\"a\": 1}", .string) == nil)
        #expect(try convert("[1]", .string) == nil)
        #expect(try convert("\"NaN\"", .double) == nil)
        #expect(try convert("\"Infinity\"", .double) == nil)
        #expect(try convert("\"0x10\"", .double) == nil)
        #expect(try convert("\"2024-05-01T06:30:00+02:00\"", .date) == .real(1_714_537_800))
        #expect(try convert("\"not a date\"", .date) == nil)
    }

    @Test func badRecordsNameTheAttribute() throws {
        let entity = PipelineEntity(name: "Item", key: ["id"], attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "when", type: .date),
            AttributeDescription(name: "rating", type: .integer, isOptional: true),
        ])
        let source = SourceSpec(name: "s", entity: "Item", url: "x", isNDJSON: false, records: nil, headers: [], pagination: nil,
                                fields: ["when": FieldSpec(path: ["meta", "at"], dateFormat: .unix)], dates: .iso8601, mode: .upsert,
                                onError: .fail, rejects: "r", timeout: 1, retries: 0, maxBytes: nil, incremental: nil)
        let mapper = RecordMapper(source: source, entity: entity)
        func failure(_ json: String) throws -> BadRecord? {
            let record = try JSONValue.parse(Array(json.utf8))
            let patterns = DatePatterns()
            if case .failure(let bad) = mapper.map(record, key: mapper.mapKey(record, using: patterns), using: patterns) { return bad }
            return nil
        }
        #expect(try failure("{\"id\": 1, \"meta\": {\"at\": 5}}") == nil)
        #expect(try failure("{\"id\": 1, \"meta\": {\"at\": 5}, \"rating\": \"five\"}")?.message == "rating: expected integer, got \"five\"")
        #expect(try failure("{\"id\": 1}")?.attribute == "when")
        #expect(try failure("{\"meta\": {\"at\": 5}}")?.attribute == "id")
        #expect(try failure("[1, 2]")?.message.contains("JSON object") == true)
    }
}
