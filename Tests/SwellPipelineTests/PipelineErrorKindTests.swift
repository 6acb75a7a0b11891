import Foundation
import Logging
import SwellCSV
import SwellHTTP
import SwellJSON
import SwellPipeline
import SwellContexts
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Errors callers can switch on (issue 13, item 2): a run's failure keeps its kind (which
/// `swell` turns into the exit code) and the error underneath, each asserted by kind.
@Suite struct PipelineErrorKindTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("swell-kinds-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func run(url: String, export: String? = nil, store: String? = nil, sources: Bool = true) throws -> PipelineError? {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let exports = export.map { "exports:\n  - { name: out, entity: Item, path: \"\($0)\", columns: [id, title] }\n" } ?? ""
        let pipeline = try PipelineFileLoader(environment: [:]).load(text: """
            version: 1
            name: kinds
            store: \(store ?? directory + "/kinds.sqlite")
            entities:
              Item: { key: [id], attributes: { id: integer, title: string? } }
            sources:
              - { name: items, entity: Item, url: "\(url)", retries: 0 }
            \(exports)
            """, path: directory + "/kinds.yml")
        let runner = PipelineRunner(pipeline: pipeline, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        return runner.run(sources: sources, exports: export != nil).1
    }

    private func page(_ text: String) throws -> String {
        let path = directory + "/page.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func aPageThatIsNotJSONIsDataWithTheJSONErrorUnderneath() throws {
        let failure = try run(url: page(#"[{"id": 1,]"#))
        #expect(failure?.kind == .data)
        #expect(failure?.underlying is JSONError)
    }

    @Test func anUnreachableSourceIsUnavailableWithTheHTTPErrorsKind() throws {
        let port = try LoopbackHTTPServer.closedPort()
        let failure = try run(url: "http://127.0.0.1:\(port)/items.json")
        #expect(failure?.kind == .unavailable)
        #expect((failure?.underlying as? HTTPError)?.kind == .connection)
    }

    @Test func anExportThatCannotBeWrittenIsCannotCreateWithTheCSVErrorsKind() throws {
        let blocker = directory + "/plain-file"
        try "x".write(toFile: blocker, atomically: false, encoding: .utf8)
        let failure = try run(url: page(#"[{"id": 1, "title": "a"}]"#), export: blocker + "/out.csv")
        #expect(failure?.kind == .cannotCreate)
        #expect((failure?.underlying as? CSVError)?.kind == .noSuchDirectory)
    }

    @Test func aStoreThatIsNotAStoreIsIOWithTheStoreErrorUnderneath() throws {
        let store = directory + "/not-a-store.sqlite"
        try String(repeating: "not a database\n", count: 400).write(toFile: store, atomically: false, encoding: .utf8)
        let failure = try run(url: page(#"[{"id": 1}]"#), store: store)
        #expect(failure?.kind == .io)
        guard let error = failure?.underlying as? StoreError, error.kind == .notAStore, let path = error.path else {
            Issue.record("expected notAStore, got \(String(describing: failure?.underlying))")
            return
        }
        #expect(path == store)
    }
}
