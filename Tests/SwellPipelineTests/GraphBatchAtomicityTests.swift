import Foundation
import SwellPipeline
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A batch of nested records (the shapes written as batch inserts) is one transaction: when
/// the records cannot be written, the nested objects they brought are not left behind either.
@Suite struct GraphBatchAtomicityTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swell-graph-atomic-\(UUID().uuidString)").path

    private func pipeline(page: String) throws -> PipelineFile {
        try PipelineFileLoader(environment: [:]).load(text: """
            version: 2
            name: graph-atomic
            store: \(directory)/store.sqlite
            entities:
              Book:
                key: [id]
                attributes: { id: integer, title: string }
                relationships:
                  author: { to: Author }
                  tags: { to: Tag, many: true }
              Author: { key: [id], attributes: { id: integer, name: string } }
              Tag: { key: [name], attributes: { name: string } }
            sources:
              - name: books
                entity: Book
                url: "\(page)"
                retries: 0
                fields:
                  author: { path: author, fields: { id: id, name: name } }
                  tags: { path: tags, fields: { name: name } }
            """, path: directory + "/graph-atomic.yml")
    }

    private func page(_ name: String, _ json: String) throws -> String {
        let path = "\(directory)/\(name).json"
        try json.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    private func count(_ table: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: directory + "/store.sqlite")
        guard case .integer(let count)? = try connection.query("SELECT count(*) FROM \"\(table)\"").first?.first else { return -1 }
        return count
    }

    @Test func aBatchWhoseRecordsAreRefusedLeavesNoNestedObjectBehind() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try pipeline(page: page("first", #"[{"id": 1, "title": "A", "author": {"id": 1, "name": "Ann"}, "tags": [{"name": "x"}]}]"#))
        let (_, firstFailure) = PipelineRunner(pipeline: first, logger: CapturedLog().logger).run(sources: true, exports: false)
        #expect(firstFailure == nil)
        #expect(try (count("Book"), count("Author"), count("Tag"), count("Book_tags")) == (1, 1, 1, 1))

        // Another writer of the file refuses every new book: the batch's new author and tag go with it.
        let other = try SQLiteConnection(path: directory + "/store.sqlite")
        try other.execute("CREATE TRIGGER refused BEFORE INSERT ON Book BEGIN SELECT RAISE(ABORT, 'books refused by the test'); END")
        let second = try pipeline(page: page("second", #"[{"id": 2, "title": "B", "author": {"id": 2, "name": "Bo"}, "tags": [{"name": "y"}, {"name": "x"}]}]"#))
        let (_, failure) = PipelineRunner(pipeline: second, logger: CapturedLog().logger).run(sources: true, exports: false)
        let reported = try #require(failure)
        #expect(reported.message.contains("books refused by the test"))
        #expect(try (count("Book"), count("Author"), count("Tag"), count("Book_tags")) == (1, 1, 1, 1))
    }
}

/// Shapes the batch path leaves to the object-by-object writer, because only it says what
/// is wrong with them: found by a review of the batch path, each failed there.
@Suite struct GraphShapeFallbackTests {
    static let books = """
        version: 2
        name: books
        entities:
          Author: { key: [name], attributes: { name: string } }
          Book:
            key: [id]
            attributes: { id: integer, title: string }
            relationships: { author: { to: Author, required: true } }
        sources:
          - name: books
            entity: Book
            url: "{dir}/books.json"
            fields:
              author: { path: author, fields: { name: name } }
        """

    @Test func aRequiredToOneLeftEmptyFailsTheRunInsteadOfStoringNoLink() throws {
        let pipeline = try InProcessPipeline(yaml: Self.books, store: .sqlite)
        try pipeline.write("books.json", #"[{"id": 10, "title": "T", "author": null}]"#)
        let error = #expect(throws: PipelineError.self) { try pipeline.run() }
        #expect(error?.message.contains("author") == true, "\(error?.message ?? "")")
        #expect(try pipeline.graph().objects["Book"]?["10"] == nil, "no book without its required author")
    }

    @Test func aToOneMappedFromTheElementItselfRefusesAString() throws {
        let yaml = Self.books.replacingOccurrences(of: "author: { to: Author, required: true }", with: "author: { to: Author }")
            .replacingOccurrences(of: "fields: { name: name }", with: #"fields: { name: "." }"#)
        let pipeline = try InProcessPipeline(yaml: yaml, store: .sqlite)
        try pipeline.write("books.json", #"[{"id": 10, "title": "T", "author": "alice"}]"#)
        let error = #expect(throws: PipelineError.self) { try pipeline.run() }
        #expect(error?.message.contains("expected an object") == true, "\(error?.message ?? "")")
        #expect(try pipeline.graph().objects["Author"]?["'alice'"] == nil, "no author made from a string")
    }
}

/// A batch with a new nested object its mapping leaves without a required attribute: the run
/// fails naming it, and the batch's other records are saved (as the object-by-object writer does).
@Suite struct GraphBatchRefusedObjectTests {
    @Test(arguments: PipelineStore.allCases)
    func theRecordsOfARefusedObjectAreLeftOutAndTheOthersSaved(store: PipelineStore) throws {
        let yaml = NestedResyncTests.books.replacingOccurrences(of: "fields: { id: id, name: name }", with: "fields: { id: id }")
        let pipeline = try InProcessPipeline(yaml: yaml, store: store)
        try pipeline.write("authors.json", #"[{"id": 1, "name": "Ann"}]"#)
        try pipeline.write("books.json", "[]")
        try pipeline.write("titles.json", "[]")
        _ = try pipeline.run()
        try pipeline.write("books.json", """
            [{"id": 11, "title": "A", "author": {"id": 1}}, {"id": 12, "title": "B", "author": {"id": 2}},
             {"id": 13, "title": "C", "author": {"id": 1}}, {"id": 14, "title": "D", "author": {"id": 3}}]
            """)
        let error = #expect(throws: PipelineError.self) { try pipeline.run() }
        #expect(error?.message.contains("a new Author (id=2) needs name") == true, "\(error?.message ?? "")")
        let graph = try pipeline.graph()
        #expect(graph.objects["Book"]?.keys.sorted() == ["11", "13"], "the valid records of the batch are saved")
        #expect(graph.objects["Book"]?["13"]?["author"] == "[1]")
        #expect(graph.objects["Author"]?.keys.sorted() == ["1"])
    }
}
