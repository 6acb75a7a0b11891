import Foundation
@testable import SwellPipeline
import Testing
import SwellPipelineTestSupport

/// The one factory that chooses a source's write stage from the shape of its records and its
/// mode (DocC "Threads of a run", the table of write stages).
@Suite struct WriteStageTests {
    private func source(mode: String, nested: Bool) throws -> SourceSpec {
        let file = try PipelineFileLoader(environment: [:]).load(text: """
            version: 3
            name: stages
            store: /tmp/never-opened.sqlite
            entities:
              Book:
                key: [id]
                attributes: { id: integer, title: string }
                relationships: { author: { to: Author } }
              Author: { key: [id], attributes: { id: integer, name: string } }
            sources:
              - name: books
                entity: Book
                url: "https://api.example.com/books"
                mode: \(mode)
            \(nested ? "    fields: { author: { path: author, fields: { id: id, name: name } } }" : "")
            """, path: "/tmp/stages.yml")
        return try #require(file.sources.first)
    }

    /// The stage, and whether the graph shape was asked for.
    private func choose(_ source: SourceSpec, workers: Int = 3) -> (String, Int?, Bool) {
        var asked = false
        let stage = WriteStage.choose(for: source, workers: workers) { asked = true; return nil }
        if case .objects(let workers) = stage { return (stage.name, workers, asked) }
        return (stage.name, nil, asked)
    }

    @Test func flatRecordsMergedByKeyGoToColumnsWithoutAskingForAGraph() throws {
        for mode in ["upsert", "insert", "replace"] {
            let (name, workers, asked) = choose(try source(mode: mode, nested: false))
            #expect(name == "columns" && workers == nil && !asked, "mode \(mode)")
        }
    }

    @Test func appendedFlatRecordsGoToTheWorkersAllOfThem() throws {
        let (name, workers, asked) = choose(try source(mode: "append", nested: false), workers: 3)
        #expect(name == "objects" && workers == 3 && !asked)
    }

    @Test func nestedRecordsAskForAGraphAndWithoutOneGoToOneWorker() throws {
        let (name, workers, asked) = choose(try source(mode: "upsert", nested: true), workers: 3)
        #expect(name == "objects" && workers == 1 && asked)
    }

    @Test func appendedNestedRecordsGoToOneWorkerWithoutAskingForAGraph() throws {
        let (name, workers, asked) = choose(try source(mode: "append", nested: true), workers: 3)
        #expect(name == "objects" && workers == 1 && !asked)
    }
}
