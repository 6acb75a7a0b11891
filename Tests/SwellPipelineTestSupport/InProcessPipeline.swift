import Foundation
import Logging
@testable import SwellPipeline
import SwellPostgres
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// The stores a pipeline test runs against in-process: a SQLite file, the in-memory
/// store (which `swell` cannot open), and a schema of the suite's PostgreSQL server.
package enum PipelineStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, memory, postgres

    package var testDescription: String { rawValue }
}

/// A pipeline run in this process the way `swell run` runs its sources (one
/// `SourceRun` per source, in file order, each on a freshly opened container), on one
/// store that lives as long as this value: its SQLite file and folder are removed, its
/// in-memory store let go, when it goes.
///
/// Reads come from a container opened afresh after the runs, so they show what the
/// store holds, not what some context kept.
package final class InProcessPipeline {
    package let pipeline: PipelineFile
    package let store: PipelineStore
    package let storeURL: URL
    private let directory: URL
    /// Keeps the in-memory store alive between runs (the store lives while a coordinator holds it).
    private var holder: PersistentContainer?

    /// `yaml` may say `{dir}` for this pipeline's own folder (where `write` puts pages).
    package init(yaml: String, store: PipelineStore) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("swell-inprocess-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let text = yaml.replacingOccurrences(of: "{dir}", with: directory.path)
        pipeline = try PipelineFileLoader(environment: [:]).load(text: text, path: directory.appendingPathComponent("pipeline.yml").path)
        self.store = store
        let name = directory.lastPathComponent.suffix(12).lowercased().replacingOccurrences(of: "-", with: "_")
        switch store {
        case .sqlite:
            storeURL = directory.appendingPathComponent("store.sqlite")
        case .memory:
            storeURL = URL(string: "memory://pipeline/\(name)")!
        case .postgres:
            let server = try PostgresServer.shared.get()
            storeURL = URL(string: server.url() + "?schema=p\(name)")!
        }
        if store == .memory {
            let container = PersistentContainer(name: pipeline.name, managedObjectModel: pipeline.model, storeURL: storeURL)
            try container.loadPersistentStores()
            holder = container
        }
    }

    deinit {
        holder = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to the file `name` of the pipeline's folder.
    package func write(_ name: String, _ text: String) throws {
        try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Opens the store with the pipeline's model.
    package func openContainer() throws -> PersistentContainer {
        let container = PersistentContainer(name: pipeline.name, managedObjectModel: pipeline.model, storeURL: storeURL)
        try container.loadPersistentStores()
        return container
    }

    /// Runs every source once; returns each source's report entry, or the first failure.
    package func run(options: RunOptions = RunOptions(workers: 2, batchSize: 5000)) throws -> [RunReport.Source] {
        let container = try openContainer()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        var entries: [RunReport.Source] = []
        for source in pipeline.sources {
            guard let entity = pipeline.entity(named: source.entity) else { continue }
            let environment = RunEnvironment(options: options, logger: logger, redactor: pipeline.redactor, progress: ProgressCounter())
            let run = SourceRun(source: source, entity: entity, pipelineEntities: pipeline.entities, container: container,
                                environment: environment)
            let (entry, error) = run.run()
            if let error { throw error }
            entries.append(entry)
        }
        return entries
    }

    /// Every object of the store as `StoredGraph` describes it.
    package func graph() throws -> StoredGraph {
        let container = try openContainer()
        let context = container.newBackgroundContext()
        return try context.performAndWait { try StoredGraph(reading: pipeline.model, in: context) }
    }
}

extension PipelineFile {
    /// Hides the file's secrets (as the runner does).
    package var redactor: Redactor { Redactor(secrets: secrets) }
}

/// A store's objects by entity and key: attribute values and, for every relationship
/// (both sides), the keys of its members — ordered to-manys in order, the others
/// sorted — read from the store's rows (to-one columns, join tables, order columns),
/// so the pipeline's way of writing them is not trusted to read them back.
package struct StoredGraph: Equatable, CustomStringConvertible {
    /// entity → key (its values' description) → property → value.
    package var objects: [String: [String: [String: String]]] = [:]

    package init() {}

    package init(reading model: ManagedObjectModel, in context: ManagedObjectContext) throws {
        var rows: [String: [(primaryKey: Int64, values: [StoreValue])]] = [:]
        var keyOf: [String: [Int64: String]] = [:]
        var storage: [String: EntityDescription] = [:]
        for entity in model.entities {
            let stored = try context.entityDescription(named: entity.name)
            storage[entity.name] = stored
            var list: [(primaryKey: Int64, values: [StoreValue])] = []
            try context.enumerateRows(FetchRequest(entityName: entity.name)) { list.append(($0, $1)) }
            rows[entity.name] = list
            keyOf[entity.name] = Dictionary(uniqueKeysWithValues: list.map { row in
                (row.primaryKey, StoredGraph.key(entity.keyIndices.map { row.values[$0] }))
            })
        }
        for entity in model.entities {
            let stored = storage[entity.name]!
            for (primaryKey, values) in rows[entity.name]! {
                var properties: [String: String] = [:]
                for attribute in entity.attributes {
                    properties[attribute.name] = StoredGraph.describe(values[stored.attributes.firstIndex { $0.name == attribute.name }!])
                }
                for relationship in entity.relationships {
                    let members = Self.members(of: primaryKey, relationship, entity: stored, rows: rows, storage: storage, model: model)
                    let keys = members.map { keyOf[relationship.destination]?[$0] ?? "dangling \($0)" }
                    properties[relationship.name] = StoredGraph.list(relationship.isOrdered ? keys : keys.sorted())
                }
                objects[entity.name, default: [:]][keyOf[entity.name]![primaryKey]!] = properties
            }
        }
    }

    /// The primary keys a relationship of the row `primaryKey` holds, from where the store keeps it.
    private static func members(of primaryKey: Int64, _ relationship: RelationshipDescription, entity: EntityDescription,
                                rows: [String: [(primaryKey: Int64, values: [StoreValue])]], storage: [String: EntityDescription],
                                model: ManagedObjectModel) -> [Int64] {
        let own = rows[entity.name]!.first { $0.primaryKey == primaryKey }!.values
        if let index = entity.attributes.firstIndex(where: { $0.name == relationship.name }) {
            if entity.attributes[index].join != nil { return JoinTable.decode(own[index]) }
            if case .integer(let member) = own[index] { return [member] }
            return []
        }
        guard let inverse = relationship.inverse, let destination = storage[relationship.destination],
              let column = destination.attributes.firstIndex(where: { $0.name == inverse }) else { return [] }
        let others = rows[relationship.destination]!
        if destination.attributes[column].join != nil {
            return others.filter { JoinTable.decode($0.values[column]).contains(primaryKey) }.map(\.primaryKey)
        }
        let linked = others.filter { $0.values[column] == .integer(primaryKey) }
        guard let order = destination.attributes.firstIndex(where: { $0.orderOf == inverse }) else { return linked.map(\.primaryKey) }
        return linked.sorted { position($0.values[order]) < position($1.values[order]) }.map(\.primaryKey)
    }

    private static func position(_ value: StoreValue) -> Int64 {
        if case .integer(let position) = value { return position }
        return .max
    }

    /// A key's text: its values' descriptions joined by `|`.
    package static func key(_ values: [StoreValue]) -> String {
        values.map(describe).joined(separator: "|")
    }

    /// A value as the graphs compare it.
    package static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let number): "\(number)"
        case .real(let number): "\(number)"
        case .text(let text): "'\(text)'"
        }
    }

    /// A relationship's member keys as one text.
    package static func list(_ keys: [String]) -> String {
        "[" + keys.joined(separator: ", ") + "]"
    }

    package var description: String {
        objects.keys.sorted().map { entity in
            objects[entity]!.keys.sorted().map { key in
                let properties = objects[entity]![key]!
                return "\(entity) \(key): " + properties.keys.sorted().map { "\($0)=\(properties[$0]!)" }.joined(separator: " ")
            }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The lines where `self` and `other` differ (objects missing on either side, or differing properties).
    package func differences(from expected: StoredGraph) -> [String] {
        var lines: [String] = []
        for entity in Set(objects.keys).union(expected.objects.keys).sorted() {
            let mine = objects[entity] ?? [:], theirs = expected.objects[entity] ?? [:]
            for key in Set(mine.keys).union(theirs.keys).sorted() {
                switch (mine[key], theirs[key]) {
                case (nil, let wanted?): lines.append("\(entity) \(key): missing; expected \(wanted.sorted { $0.key < $1.key })")
                case (let found?, nil): lines.append("\(entity) \(key): stored but not expected: \(found.sorted { $0.key < $1.key })")
                case (let found?, let wanted?):
                    for property in Set(found.keys).union(wanted.keys).sorted() where found[property] != wanted[property] {
                        lines.append("\(entity) \(key).\(property): stored \(found[property] ?? "-"), expected \(wanted[property] ?? "-")")
                    }
                default: break
                }
            }
        }
        return lines
    }
}

extension PersistentStoreCoordinator {
    /// The coordinator's store when it is a SQLite store, for tests that observe its commits.
    package var sqliteStore: SQLiteStore? { (try? store) as? SQLiteStore }
}
