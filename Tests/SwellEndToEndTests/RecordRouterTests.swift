import Foundation
import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Each record's key is converted once, at the router: it picks the worker and travels with the record.
@Suite struct RecordRouterTests {
    static func mapper() -> RecordMapper {
        RecordMapper(source: SourceSpec(name: "items", entity: "Item", url: "x", isNDJSON: false, records: nil, headers: [], pagination: nil,
                                        fields: [:], dates: .iso8601, mode: .upsert, onError: .fail, rejects: "r", timeout: 1,
                                        retries: 0, maxBytes: nil, incremental: nil),
                     entity: itemEntity)
    }

    private func json(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Array(text.utf8))
    }

    @Test func recordsWithOneKeyGoToOneWorkerInTheOrderTheyCame() throws {
        let queues = (0..<8).map { _ in BatchQueue<WorkerInput>(capacity: 1000) }
        var router = RecordRouter(queues: queues, chunk: 3, mapper: Self.mapper())
        // Forty keys, each spelled three ways: one key after conversion.
        let spellings = ["%d", "\"%d\"", "%d.0"]
        for index in 0..<120 {
            let id = String(format: spellings[index / 40], index % 40)
            router.add(page: "p", index: index, record: try json("{\"id\": \(id), \"title\": \"t\(index)\"}"))
        }
        router.flush()
        router.close()
        var workerOfKey: [Int64: Int] = [:]
        var lastIndexOfKey: [Int64: Int] = [:]
        for (worker, queue) in queues.enumerated() {
            while let input = queue.take() {
                for item in input.records ?? [] {
                    guard case .success(.integer(let id))? = item.key.values.first else {
                        Issue.record("record \(item.index) has no converted key")
                        continue
                    }
                    #expect(id == Int64(item.index % 40))
                    #expect(workerOfKey[id, default: worker] == worker, "key \(id) went to two workers")
                    workerOfKey[id] = worker
                    #expect(lastIndexOfKey[id, default: -1] < item.index, "key \(id) out of order")
                    lastIndexOfKey[id] = item.index
                }
            }
        }
        #expect(lastIndexOfKey.count == 40)
    }

    @Test func theWorkerTakesTheRoutersKeyOn() throws {
        let mapper = Self.mapper()
        let patterns = DatePatterns()
        let key = mapper.mapKey(try json("{\"id\": \"7\"}"), using: patterns)
        let values = try mapper.map(try json("{\"id\": 7, \"title\": \"a\"}"), key: key, using: patterns).get()
        #expect(values == [.integer(7), .text("a")])
        // The worker converts only the other attributes: the key it is given is the key it uses.
        let carried = try mapper.map(try json("{\"id\": 8, \"title\": \"b\"}"), key: key, using: patterns).get()
        #expect(carried == [.integer(7), .text("b")])
        let bad = mapper.mapKey(try json("{\"id\": \"seven\"}"), using: patterns)
        if case .failure(let failure) = mapper.map(try json("{\"id\": \"seven\"}"), key: bad, using: patterns) {
            #expect(failure.attribute == "id")
            #expect(failure.message == "id: expected integer, got \"seven\"")
        } else {
            Issue.record("a key that does not convert must make the record bad")
        }
    }

    @Test func aKeyThatArrivesTwiceKeepsTheLaterRecordWhateverTheWorkers() throws {
        let workspace = try Workspace()
        let records = (0..<3).flatMap { round in
            (1...60).map { id in "{\"id\": \([String(id), "\"\(id)\"", "\(id).0"][round]), \"title\": \"round \(round)\"}" }
        }
        try workspace.write("data/items.json", "{\"data\": [\(records.joined(separator: ","))]}")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json"))
        let outcome = try workspace.run("run", "items.yml", "--workers", "4", "--batch-size", "7")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = try workspace.read("out/items.csv").split(separator: "\n").dropFirst()
        #expect(lines.count == 60)
        #expect(lines.allSatisfy { $0.contains(",round 2,") })
    }
}
