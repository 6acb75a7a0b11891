@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Append mode's look-up of a chunk's keys: only those keys are read, as the worker's context sees them.
@Suite struct KeyLookupTests {
    static let reading = PipelineEntity(name: "Reading", key: ["station", "day"], attributes: [
        AttributeDescription(name: "station", type: .string),
        AttributeDescription(name: "day", type: .integer),
        AttributeDescription(name: "value", type: .double, isOptional: true),
    ])

    @Test func aCompoundKeyLookUpReadsOnlyTheChunksKeys() async throws {
        let workspace = try Workspace()
        let container = try makeContainer(workspace, entity: Self.reading)
        let stored = ["a", "b", "c"].flatMap { station in (1...200).map { [StoreValue.text(station), .integer(Int64($0)), .real(1.5)] } }
        try await insert(stored, of: Self.reading, in: container)
        // Saved by another worker into the view context, not on disk yet.
        try await insert([[.text("d"), .integer(1), .null]], of: Self.reading, in: container, toDisk: false)
        let chunk: [[StoreValue]] = [[.text("a"), .integer(5)], [.text("b"), .integer(200)], [.text("c"), .integer(201)],
                                     [.text("d"), .integer(1)], [.text("x"), .integer(1)], [.text("b"), .integer(5)]]
        let lookup = KeyLookup(entity: Self.reading.description)
        let worker = container.newBackgroundContext()
        let (found, selected) = try await worker.perform { () throws -> (Set<[StoreValue]>, Int) in
            (try lookup.existing(chunk, in: worker), try worker.count(for: lookup.request(for: chunk)))
        }
        #expect(found == [[.text("a"), .integer(5)], [.text("b"), .integer(200)], [.text("d"), .integer(1)], [.text("b"), .integer(5)]])
        // The fetch selects the chunk's keys, not the table's 601 rows.
        #expect(selected == 4)
    }

    @Test func aOneAttributeKeyLooksUpWithAnInList() async throws {
        let workspace = try Workspace()
        let container = try makeContainer(workspace, entity: itemEntity)
        try await insert((1...50).map { [StoreValue.integer(Int64($0)), .null] }, of: itemEntity, in: container)
        let lookup = KeyLookup(entity: itemEntity.description)
        let worker = container.newBackgroundContext()
        let found = try await worker.perform { try lookup.existing([[.integer(7)], [.integer(51)], [.integer(50)]], in: worker) }
        #expect(found == [[.integer(7)], [.integer(50)]])
        #expect(try await worker.perform { try lookup.existing([], in: worker) }.isEmpty)
    }

    @Test func appendWithACompoundKeyRejectsTheKeysStoredOrSeenBefore() throws {
        let workspace = try Workspace()
        try workspace.write("readings.yml", """
            version: 1
            name: readings
            entities:
              Reading:
                key: [station, day]
                attributes: { station: string, day: integer, value: double? }
            sources:
              - { name: readings, entity: Reading, url: data/readings.json, mode: append, on_error: skip, rejects: out/rejects.ndjson }
            """)
        try workspace.write("data/readings.json", #"[{"station": "a", "day": 1}, {"station": "a", "day": 2}, {"station": "b", "day": 1}]"#)
        #expect(try workspace.run("import", "readings.yml").status == 0)
        try workspace.write("data/readings.json", #"[{"station": "b", "day": 1}, {"station": "b", "day": 2}, {"station": "b", "day": 2}]"#)
        let outcome = try workspace.run("import", "readings.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["inserted"] as? Int == 1)
        #expect(source?["rejected"] as? Int == 2)
        let rejects = try workspace.read("out/rejects.ndjson")
        #expect(rejects.contains("station=\\\"b\\\", day=1 exists already"), "\(rejects)")
    }
}
