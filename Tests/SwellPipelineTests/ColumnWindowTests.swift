import Foundation
import Testing
@testable import SwellPipeline
@testable import SwellContexts
import SwellPipelineTestSupport

/// A flat source keeps only the page's bytes a record may still be read again from: a
/// record the projection does not take as it is (here a numeric string for an integer,
/// or a bad value) is parsed again from its own text, also when it spans the pieces a
/// file is read in, after megabytes of other members before the records, and between
/// such members after them.
@Suite struct ColumnWindowTests {
    @Test func recordsReadAgainFromTheirTextSpanPiecesAfterALargeMemberBeforeTheRecords() throws {
        // About 3 MiB of another member first: the file is read in 1 MiB pieces.
        let filler = String(repeating: "x", count: 1000)
        let included = "[" + (0..<3000).map { "{\"n\":\($0),\"f\":\"\(filler)\"}" }.joined(separator: ",") + "]"
        // Records of about 300 KiB each, so pieces cut them; every third carries its id as a
        // string (read again) and every seventh a bad rating (rejected).
        let big = String(repeating: "é", count: 150_000)
        var records: [String] = []
        var expected: [Int: String] = [:]
        var rejected: [Int] = []
        for id in 1...20 {
            let idText = id % 3 == 0 ? "\"\(id)\"" : "\(id)"
            let rating = id % 7 == 0 ? "\"five\"" : "\(id % 5)"
            records.append("{\"id\":\(idText),\"rating\":\(rating),\"note\":\"\(id)-\(big)\"}")
            if id % 7 == 0 { rejected.append(id - 1) } else { expected[id] = "\(id)-\(big)" }
        }
        let page = "{\"included\":\(included),\"data\":[\n" + records.joined(separator: ",\n") + "\n],\"after\":\(included)}"
        let pipeline = try InProcessPipeline(yaml: """
            version: 1
            name: window
            entities:
              Item:
                key: [id]
                attributes:
                  id: integer
                  rating: integer?
                  note: string?
            sources:
              - name: items
                entity: Item
                url: {dir}/page.json
                records: data
                on_error: skip
                rejects: {dir}/rejects.ndjson
            """, store: .sqlite)
        try pipeline.write("page.json", page)
        let report = try #require(try pipeline.run(options: RunOptions(workers: 1)).first)
        #expect(report.records == 20 && report.rejected == rejected.count && report.inserted == expected.count)
        let container = try pipeline.openContainer()
        let stored = try container.viewContext.performAndWait { () throws -> [Int: String] in
            var rows: [Int: String] = [:]
            for object in try container.viewContext.fetch(FetchRequest(entityName: "Item")) {
                rows[object["id"] as! Int] = object["note"] as? String
            }
            return rows
        }
        #expect(stored == expected)
        let source = try #require(pipeline.pipeline.sources.first)
        let lines = try String(contentsOfFile: source.rejects, encoding: .utf8).split(separator: "\n")
        let indices = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["index"] as? Int
        }
        #expect(indices == rejected)
    }
}
