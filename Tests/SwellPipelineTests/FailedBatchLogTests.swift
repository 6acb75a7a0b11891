import Foundation
import SwellPipeline
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A worker whose batch of nested records fails still saves the batch's valid records; when
/// that save fails too, the run reports its first failure and the second goes to the run's
/// log — it used to be dropped (issue 20, item 4). (Flat sources, and nested mappings of
/// the shapes `GraphShape` admits, write each batch as batch inserts: there is no second
/// save to fail. The `cascade` to-one here keeps the records on the object-by-object path.)
@Suite struct FailedBatchLogTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swell-failed-batch-\(UUID().uuidString)").path

    private func pipeline(page: String) throws -> PipelineFile {
        try PipelineFileLoader(environment: [:]).load(text: """
            version: 2
            name: failed-batch
            store: \(directory)/store.sqlite
            entities:
              Item:
                key: [code]
                attributes: { code: string, title: string? }
                relationships:
                  owner: { to: Owner, delete: cascade }
              Owner: { key: [name], attributes: { name: string } }
            sources:
              - name: items
                entity: Item
                url: "\(page)"
                retries: 0
                fields:
                  owner: { path: owner, fields: { name: name } }
            """, path: directory + "/failed-batch.yml")
    }

    private func page(_ name: String, codes: [String]) throws -> String {
        let path = "\(directory)/\(name).json"
        let records = codes.map { #"{"code": "\#($0)", "title": "t-\#($0)", "owner": {"name": "o-\#($0)"}}"# }
        try "[\(records.joined(separator: ","))]".write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func aSecondSaveFailureOfAFailedBatchIsLogged() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try pipeline(page: page("first", codes: ["a", "b"]))
        let (_, firstFailure) = PipelineRunner(pipeline: first, logger: CapturedLog().logger).run(sources: true, exports: false)
        #expect(firstFailure == nil)

        // Another writer of the file refuses every ID reservation: a worker's new rows then
        // have no IDs, so saving the batch fails, and saving its valid records fails as well.
        let other = try SQLiteConnection(path: directory + "/store.sqlite")
        try other.execute("CREATE TRIGGER frozen BEFORE INSERT ON swell_ids BEGIN SELECT RAISE(ABORT, 'ids frozen by the test'); END")

        let log = CapturedLog()
        let second = try pipeline(page: page("second", codes: ["c", "d", "e"]))
        let (_, failure) = PipelineRunner(pipeline: second, logger: log.logger).run(sources: true, exports: false)
        let reported = try #require(failure)
        #expect(reported.kind == .io)
        #expect(reported.message.contains("ids frozen by the test"))
        let logged = log.entries.withLock { $0 }.filter { $0.message.contains("failed batch failed too") }
        // One entry per worker whose batch failed (how the records spread over workers varies).
        #expect(!logged.isEmpty, "log: \(log.entries.withLock { $0.map(\.message) })")
        for entry in logged {
            #expect(entry.level == .error)
            #expect(entry.metadata["source"] == "items")
            #expect(entry.metadata["error"]?.contains("ids frozen by the test") == true)
            #expect(entry.metadata["after"]?.contains("ids frozen by the test") == true)
        }
    }
}
