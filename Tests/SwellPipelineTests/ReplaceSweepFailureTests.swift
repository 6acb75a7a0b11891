import Foundation
import Testing
@testable import SwellPipeline
@testable import SwellContexts
import SwellPipelineTestSupport

/// `mode: replace` deletes the rows no page brought only after every page arrived; when
/// that sweep is refused (here a `deny` rule: the stale ticket still has notes), the run
/// fails, deletes nothing, and every record it upserted is on disk when it returns (the
/// last batches' saves are waited for, as after any other failure).
@Suite struct ReplaceSweepFailureTests {
    static let tickets = """
        version: 2
        name: tickets
        entities:
          Ticket:
            key: [id]
            attributes: { id: integer, title: string }
            relationships:
              notes: { to: Note, many: true, delete: deny }
          Note:
            key: [id]
            attributes: { id: integer, text: string }
        sources:
          - name: tickets
            entity: Ticket
            url: "{dir}/tickets.json"
            mode: replace
            fields:
              notes: { path: notes, fields: { id: id, text: text } }
        """

    @Test func aSweepRefusedByADenyRuleFailsTheRunAndKeepsEveryUpsertedRecord() throws {
        let pipeline = try InProcessPipeline(yaml: Self.tickets, store: .sqlite)
        try pipeline.write("tickets.json", #"[{"id":1,"title":"a","notes":[{"id":10,"text":"n10"}]}]"#)
        _ = try pipeline.run()
        // Ticket 1 is not brought again: the sweep would delete it, but it has a note (deny).
        let records = (2...700).map { #"{"id":\#($0),"title":"t\#($0)","notes":[]}"# }.joined(separator: ",")
        try pipeline.write("tickets.json", "[" + records + "]")
        let error = #expect(throws: PipelineError.self) { try pipeline.run(options: RunOptions(workers: 1, batchSize: 100)) }
        #expect(error.map { "\($0)".contains("deny") || "\($0)".lowercased().contains("denied") } == true, "\(String(describing: error))")
        let graph = try pipeline.graph()
        #expect(graph.objects["Ticket"]?.count == 700, "ticket 1 kept (the sweep deleted nothing) and tickets 2...700 on disk")
        #expect(graph.objects["Ticket"]?["700"]?["title"] == "'t700'")
        #expect(graph.objects["Note"]?["10"] != nil)
    }
}
