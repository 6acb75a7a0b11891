import Foundation
@testable import SwellPipeline
import SwellContexts
import SwellTestSupport
import Testing
import SwellStore
import SwellPipelineTestSupport

/// What nil means in a pipeline file's `where` (Store guarantees 63): files of versions 1–3
/// keep their rule — a null matches only `== NIL` and `!= NIL` — and version 4 files take
/// NSPredicate's, which library predicates have. The reader does not take `version: 4` yet,
/// so a version-3 file is read and its `version` changed to 4 where the run picks the rule.
@Suite struct PredicateNilRuleTests {
    static func pipeline(root: String) -> String { """
        version: 3
        name: surf
        store: \(root)/.swell/surf.sqlite
        entities:
          Spot:
            key: [name]
            attributes: { name: string }
            relationships: { reports: { to: Report, many: true, inverse: spot } }
          Report:
            key: [id]
            attributes: { id: integer, wind: string? }
            relationships: { spot: { to: Spot, inverse: reports } }
        sources:
          - name: reports
            entity: Report
            url: reports.json
        exports:
          - name: not-offshore
            entity: Report
            path: \(root)/out/not-offshore.csv
            columns: [id]
            where: "wind != 'offshore'"
          - name: not-pacifica
            entity: Report
            path: \(root)/out/not-pacifica.csv
            columns: [id]
            where: "spot.name != 'Pacifica'"
        """
    }

    @Test func versionsOneToThreeKeepTheirRuleAndFourTakesNSPredicates() {
        #expect((1...3).map { PipelineFile.predicateNilMatching(version: $0) } == Array(repeating: .onlyNilTests, count: 3))
        #expect(PipelineFile.predicateNilMatching(version: 4) == .nsPredicate)
        #expect(FetchPredicate(format: "wind != 'offshore'").nilMatching == .nsPredicate, "a library predicate's default")
    }

    /// Report 1 is offshore at Pacifica, 2 onshore at Linda Mar, 3 has no wind and no spot.
    private func makeWorkspace() throws -> (Workspace, PipelineFile) {
        let workspace = try Workspace()
        try workspace.write("surf.yml", Self.pipeline(root: workspace.url.path))
        let file = try PipelineFileLoader(environment: [:]).load(path: workspace.path("surf.yml"))
        try FileManager.default.createDirectory(atPath: workspace.path(".swell"), withIntermediateDirectories: true)
        let container = PersistentContainer(name: "editor", managedObjectModel: file.model,
                                            storeURL: URL(fileURLWithPath: workspace.path(".swell/surf.sqlite")))
        try container.loadPersistentStores()
        defer { try? container.persistentStoreCoordinator.close() }
        // The writer context saves to the store.
        let context = container.writerContext
        try context.performAndWait {
            var spots: [String: ManagedObject] = [:]
            for name in ["Pacifica", "Linda Mar"] {
                let spot = context.insertNewObject(forEntityName: "Spot")
                spot["name"] = name
                spots[name] = spot
            }
            for (id, wind, spot) in [(1, "offshore", "Pacifica"), (2, "onshore", "Linda Mar"), (3, nil, nil)] as [(Int, String?, String?)] {
                let report = context.insertNewObject(forEntityName: "Report")
                report["id"] = id
                report["wind"] = wind
                report["spot"] = spot.flatMap { spots[$0] }
            }
            try context.save()
        }
        return (workspace, file)
    }

    /// The ids each export wrote, by export name.
    private func exported(_ file: PipelineFile, in workspace: Workspace) throws -> [String: [String]] {
        let (_, failure) = PipelineRunner(pipeline: file, logger: CapturedLog().logger).run(sources: false, exports: true)
        if let failure { Issue.record("the export failed: \(failure.message)") }
        var ids: [String: [String]] = [:]
        for name in ["not-offshore", "not-pacifica"] {
            ids[name] = Array(try workspace.read("out/\(name).csv").split(whereSeparator: \.isNewline).dropFirst().map(String.init))
        }
        return ids
    }

    @Test func anExportsWhereMatchesANullOnlyFromVersionFour() throws {
        var (workspace, file) = try makeWorkspace()
        let three = try exported(file, in: workspace)
        #expect(three == ["not-offshore": ["2"], "not-pacifica": ["2"]], "version 3: the null wind and the missing spot match no !=")
        file.version = 4
        let four = try exported(file, in: workspace)
        #expect(four == ["not-offshore": ["2", "3"], "not-pacifica": ["2", "3"]], "version 4: NSPredicate's nil")
    }

    @Test func aForEachWhereFollowsTheFilesVersionToo() throws {
        let (workspace, file) = try makeWorkspace()
        let container = PersistentContainer(name: "reader", managedObjectModel: file.model,
                                            storeURL: URL(fileURLWithPath: workspace.path(".swell/surf.sqlite")))
        try container.loadPersistentStores()
        defer { try? container.persistentStoreCoordinator.close() }
        let forEach = ForEachEntity(entity: "Report", value: "id", predicate: "wind != 'offshore'")
        let three = try forEach.items(in: container, nilMatching: PipelineFile.predicateNilMatching(version: 3))
        let four = try forEach.items(in: container, nilMatching: PipelineFile.predicateNilMatching(version: 4))
        #expect(three == ["2"])
        #expect(four == ["2", "3"])
    }

    @Test func aVersionThreeFileStillRefusesAnOrderingWithNil() throws {
        let workspace = try Workspace()
        try workspace.write("surf.yml", Self.pipeline(root: workspace.url.path).replacingOccurrences(of: "wind != 'offshore'", with: "wind < NIL"))
        let refusal = #expect(throws: (any Error).self) { try PipelineFileLoader(environment: [:]).load(path: workspace.path("surf.yml")) }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("NIL can only be compared with == or !="))
    }
}
