import Foundation
import SwellContexts
import SwellPostgres

/// What `swell status` prints: entities with row counts, incremental state, stopped sources'
/// positions, the history and each delta export's position, and the last runs, read from the
/// last committed state (no lock).
public struct StatusReader {
    /// The pipeline whose store is read.
    public var pipeline: PipelineFile
    /// The store to read: a SQLite path or a `postgres://` URL (never print it; see `StoreLocation`).
    public var storePath: String

    /// A reader of `pipeline`'s store at `storePath`.
    public init(pipeline: PipelineFile, storePath: String) {
        self.pipeline = pipeline
        self.storePath = storePath
    }

    /// The lines to print.
    public func lines() throws(PipelineError) -> [String] {
        let runner = PipelineRunner(pipeline: pipeline, storePath: storePath, logger: .init(label: "swell.status"))
        let container = try runner.openStore(creating: false)
        let context = container.newBackgroundContext()
        do {
            return try context.performAndWait { () throws -> [String] in
                var lines = ["store \(runner.store)"]
                for entity in pipeline.entities {
                    let count = try context.count(for: FetchRequest(entityName: entity.name))
                    lines.append("entity \(entity.name): \(count) rows")
                }
                for source in pipeline.sources where source.incremental != nil {
                    let value = try context.storeMetadata(forKey: IncrementalCursor.metadataKey(source: source.name)) ?? "(none yet)"
                    lines.append("source \(source.name): incremental \(source.incremental!.cursor) = \(value)")
                }
                lines += try positionLines(in: context, container: container)
                if pipeline.history {
                    let last = try context.lastHistoryToken().map { "\($0.value)" } ?? "none yet"
                    lines.append("history: on, last transaction \(last)")
                }
                for export in pipeline.exports where export.changesSinceLast {
                    let position = try context.storeMetadata(forKey: ExportRun.positionKey(export.name))
                    lines.append("export \(export.name): changes since history transaction \(position ?? "(none yet: the next run exports every row)")")
                }
                if let holding = container.persistentStoreCoordinator.persistentStore as? PostgresStore {
                    for (source, holder) in try holding.holders(of: pipeline.sources.map(\.name)) {
                        lines.append("running \(source): \(holder)")
                    }
                }
                let runs = try context.storeMetadata(forKey: RunHistory.key).map(RunHistory.decode) ?? []
                if runs.isEmpty { lines.append("no runs yet") }
                for run in runs.suffix(5) {
                    lines.append("run \(run.startedAt) \(run.status): \(run.records) records, \(run.durationS) s\(run.error.map { " — \($0)" } ?? "")")
                }
                return lines
            }
        } catch {
            throw PipelineError(.io, runner.redactor("cannot read the store \(runner.store): \(error)"), underlying: error)
        }
    }
}

extension StatusReader {
    /// A line per source that stopped with a kept position (README, "Resuming a stopped
    /// source"): the pages it saved and the request it resumes at, secrets hidden; a line per
    /// `for_each` item done while its `for_each` is not.
    func positionLines(in context: ManagedObjectContext, container: PersistentContainer) throws -> [String] {
        let redactor = Redactor(secrets: pipeline.secrets)
        var sources: [SourceSpec] = []
        for source in pipeline.sources {
            guard let forEach = source.forEachEntity else {
                sources.append(source)
                continue
            }
            // The items the store holds now (a for_each from an entity expands when it runs). `status` is
            // a report: an entity it cannot read lists no items here, and the run reports that error.
            let items = (try? forEach.items(in: container, nilMatching: pipeline.predicateNilMatching)) ?? []
            sources += items.enumerated().map { source.expanded(item: $0.element, index: $0.offset, pipeline: pipeline.name) }
        }
        var lines: [String] = []
        for source in sources {
            guard let text = try context.storeMetadata(forKey: SourcePosition.metadataKey(source: source.name)),
                  let position = SourcePosition.decode(text) else { continue }
            if position.done {
                lines.append("source \(source.name): done (\(position.pagesSaved) pages) while its for_each stopped at a later item")
            } else {
                let next = position.next.map { "resumes at \(redactor($0.shown))" } ?? "every page saved, resumes at its last save"
                lines.append("source \(source.name): stopped with \(position.pagesSaved) pages saved; \(next)")
            }
        }
        return lines
    }
}

/// The last runs, kept in the store beside the data.
enum RunHistory {
    static let key = "runs"

    struct Entry: Codable {
        var startedAt: String
        var status: String
        var records: Int
        var durationS: Double
        var error: String?
    }

    /// The runs in a stored history; a history that does not decode (written by a foreign
    /// hand) reads as none, and the next run starts it again: it is a convenience for
    /// `swell status`, never the data itself.
    static func decode(_ text: String) -> [Entry] {
        (try? JSONDecoder().decode([Entry].self, from: Data(text.utf8))) ?? []
    }

    static func appending(_ report: RunReport, to text: String?) -> String {
        var runs = text.map(decode) ?? []
        runs.append(Entry(startedAt: report.startedAt, status: report.status, records: report.sources.reduce(0) { $0 + $1.records },
                          durationS: report.durationS, error: report.error))
        // Strings, integers and doubles always encode.
        let data = (try? JSONEncoder().encode(Array(runs.suffix(20)))) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
