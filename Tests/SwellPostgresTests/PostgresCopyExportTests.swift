import Foundation
@testable import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// Exports read a PostgreSQL store through `COPY (SELECT …) TO STDOUT (FORMAT binary)`
/// (issue 11, item 2): the stream's decoder, and the rows it gives against the rows the
/// cursor reads (`fetch`), values and order, with predicates whose values are inlined.
@Suite struct PostgresCopyExportTests {
    // MARK: The decoder

    /// A binary COPY stream: header, then rows of (int8, text, float8, int4, bool), then the end marker.
    private static func stream(_ rows: [(Int64, String?, Double?, Int32?, Bool?)]) -> [UInt8] {
        var bytes = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        append(Int32(0))        // flags
        append(Int32(4))        // a header extension of 4 bytes, skipped
        append(Int32(-7))
        for (id, text, double, int, bool) in rows {
            append(Int16(5))
            append(Int32(8)); append(id)
            if let text { append(Int32(text.utf8.count)); bytes += text.utf8 } else { append(Int32(-1)) }
            if let double { append(Int32(8)); append(double.bitPattern) } else { append(Int32(-1)) }
            if let int { append(Int32(4)); append(int) } else { append(Int32(-1)) }
            if let bool { append(Int32(1)); bytes.append(bool ? 1 : 0) } else { append(Int32(-1)) }
        }
        append(Int16(-1))
        return bytes
    }

    private static let kinds: [PostgresBinaryCopyDecoder.ColumnKind] = [.int8, .text, .float8, .int4, .bool]

    /// Decodes `bytes` cut into the given pieces; each row's values as `StoreValue`s.
    private static func decode(_ bytes: [UInt8], cuts: [Int]) throws -> [[StoreValue]] {
        var decoder = PostgresBinaryCopyDecoder(kinds: kinds)
        var rows: [[StoreValue]] = []
        var start = 0
        for end in cuts + [bytes.count] where end >= start {
            try bytes[start..<end].withUnsafeBytes { chunk in
                try decoder.feed(chunk) { fields in
                    let cursor = StoreRowCursor(primaryKey: 0, fields: fields)
                    rows.append((0..<fields.count).map { cursor.value($0) })
                }
            }
            start = end
        }
        try decoder.finish()
        return rows
    }

    @Test func aStreamCutAnywhereDecodesToTheSameRows() throws {
        let bytes = Self.stream([(1, "it's \\ \"x\",\n\té", 0.1, -5, true), (2, nil, nil, nil, nil), (3, "", -1e-7, Int32.max, false)])
        let expected: [[StoreValue]] = [
            [.integer(1), .text("it's \\ \"x\",\n\té"), .real(0.1), .integer(-5), .integer(1)],
            [.integer(2), .null, .null, .null, .null],
            [.integer(3), .text(""), .real(-1e-7), .integer(Int64(Int32.max)), .integer(0)],
        ]
        #expect(try Self.decode(bytes, cuts: []) == expected)
        for cut in 0...bytes.count {
            #expect(try Self.decode(bytes, cuts: [cut]) == expected, "cut at \(cut)")
        }
        #expect(try Self.decode(bytes, cuts: Array(0...bytes.count)) == expected, "a byte at a time")
    }

    @Test func aMalformedStreamIsRefusedSayingWhatWasWrong() throws {
        let good = Self.stream([(1, "a", 1, 1, true)])
        let failures: [(bytes: [UInt8], says: String)] = [
            (Array("PGCOPX\n".utf8) + good.dropFirst(7), "no binary COPY signature"),
            (Array(good.dropLast(2)), "the data ended before its end marker"),
            (Array(good.dropLast(7)), "the data ended before its end marker"),
            (good + [0, 5], "data after the end marker"),
        ]
        for (bytes, says) in failures {
            #expect {
                _ = try Self.decode(bytes, cuts: [])
            } throws: { error in
                "\(error)".contains(says)
            }
        }
        var wrongCount = Self.stream([(1, "a", 1, 1, true)])
        wrongCount[24] = 4      // the row's field count: after 19 header bytes and 4 of extension
        #expect(throws: PostgresError.self) { _ = try Self.decode(wrongCount, cuts: []) }
    }

    // MARK: Through the store

    private static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "title", type: .string, isOptional: true),
            AttributeDescription(name: "score", type: .double, isOptional: true),
            AttributeDescription(name: "good", type: .boolean, isOptional: true),
            AttributeDescription(name: "when", type: .date, isOptional: true),
            AttributeDescription(name: "extra", type: .json, isOptional: true),
        ], uniquenessConstraint: ["id"]),
    ])

    private static let titles = ["it's", #"back\slash"#, "comma, \"quoted\"", "line\nbreak\ttab", "é 🌊", "", "=1+1"]

    @Test func exportsReadThroughCopyTheValuesAndOrderTheCursorReads() async throws {
        let server = try PostgresServer.shared.get()
        let schema = "copy_\(UUID().uuidString.prefix(8).lowercased())"
        let url = URL(string: server.url() + "?schema=" + schema)!
        let container = PersistentContainer(name: "copy", managedObjectModel: Self.model, storeURL: url)
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for id in 1...40 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = id % 9 == 0 ? nil : Self.titles[id % Self.titles.count]
                entry["score"] = id % 5 == 0 ? nil : Double(id) / 7 * (id % 2 == 0 ? 1e-9 : 1e12)
                entry["good"] = id % 4 == 0 ? nil : id % 3 == 0
                // Dates near now, and before 1685 or after 2255 (microseconds beyond a double's exact integers).
                let far = [-9_000_000_000.654321, 9_000_000_000.000001, -62_135_596_800.5, 253_402_300_799.999999, 0.000001]
                entry["when"] = id % 6 == 0 ? nil : Date(timeIntervalSince1970: id % 4 == 1 ? far[id % far.count] + Double(id) / 7
                                                                                             : 1_700_000_000.123456 + Double(id) * 86_400.5)
                entry["extra"] = id % 2 == 0 ? nil : #"{"n": \#(id), "s": "a'b\\c"}"#
            }
            try context.save()
        }
        try await container.saveToDisk()

        var requests: [FetchRequest] = []
        var all = FetchRequest(entityName: "Entry")
        all.sortDescriptors = [FetchSortDescriptor(key: "title", ascending: false), FetchSortDescriptor(key: "id")]
        requests.append(all)
        for title in ["it's", #"back\slash"#] {
            var filtered = FetchRequest(entityName: "Entry")
            filtered.predicate = FetchPredicate(format: "title != %@ AND score > %@", title, -1.5)
            filtered.sortDescriptors = [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "id")]
            filtered.fetchLimit = 30
            requests.append(filtered)
        }
        // Dates as the cursor path reads them (`extract(epoch …)::float8`): a `Date` is no exact
        // witness (it counts from 2001, which rounds seconds near 1970).
        let connection = try PostgresConnection(server.url())
        defer { connection.close() }
        var epochs: [Int64: StoreValue] = [:]
        for row in try connection.query("SELECT id, extract(epoch from \"when\")::float8 FROM \"\(schema)\".\"Entry\"") {
            if case .integer(let id) = row[0] { epochs[id] = row[1] }
        }
        let names = Self.model.entitiesByName["Entry"]!.attributes.map(\.name)
        for request in requests {
            let (copied, fetched) = try context.performAndWait { () throws -> ([[StoreValue]], [[StoreValue]]) in
                var copied: [[StoreValue]] = []
                try context.enumerateRowCursors(request) { row in copied.append((0..<names.count).map { row.value($0) }) }
                let fetched = try context.fetch(request).map { object in
                    names.map { name in name == "when" ? epochs[Int64(object["id"] as! Int)]! : StoreValue(any: object[name]) }
                }
                return (copied, fetched)
            }
            #expect(copied.count == fetched.count && !copied.isEmpty)
            let differing = zip(copied, fetched).filter { $0 != $1 }.map { "\($0.0) ≠ \($0.1)" }
            #expect(differing.isEmpty, "\(request.predicate.map { "\($0)" } ?? "all"): \(differing.prefix(3))")
        }
    }
}

private extension StoreValue {
    /// A managed object's value as the store keeps it (booleans 0/1, dates Unix seconds).
    init(any value: Any?) {
        switch value {
        case nil: self = .null
        case let bool as Bool: self = .integer(bool ? 1 : 0)
        case let int as Int: self = .integer(Int64(int))
        case let int as Int64: self = .integer(int)
        case let double as Double: self = .real(double)
        case let text as String: self = .text(text)
        default: self = .text("\(value!)")
        }
    }
}
