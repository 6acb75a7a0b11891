import Foundation
@testable import SwellPipeline
import SwellContexts
import SwellTestSupport
import Testing
import SwellStore
import SwellPipelineTestSupport

/// Delta exports against the truth: random edits through SwellStore between exports —
/// inserts (some onto stored keys), attribute changes that move rows in and out of the
/// export's `where`, key changes (some onto another row's key, which merges the two),
/// deletes, renamed, reassigned or deleted makers read through a `maker.name` column, and
/// parents (items of the same entity) read through `parent.title`. A second export's `where`
/// reads through the relationship (`maker.name CONTAINS '5'`), so a renamed maker moves rows
/// in and out. After each export, a consumer that keeps rows by key applies each delta file
/// in order (insert and update store the row, delete drops the key); its copy must equal the
/// plain export of the same columns and `where`, written in the same run.
///
/// CI runs fixed seeds; `SWELL_DIFF_SEEDS=200` runs more, `SWELL_DIFF_SEED=n` replays one.
@Suite struct DeltaExportDifferentialTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["SWELL_DIFF_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["SWELL_DIFF_SEEDS"].flatMap(UInt64.init) ?? 10
        return Array(1...max(1, count))
    }

    /// The file, its store and exports under `root` (the runner reads paths from the working directory).
    static func pipeline(root: String) -> String { """
        version: 3
        name: shop
        store: \(root)/.swell/shop.sqlite
        history: true
        entities:
          Maker:
            key: [code]
            attributes: { code: string, name: string }
            relationships: { items: { to: Item, many: true, inverse: maker } }
          Item:
            key: [sku]
            attributes: { sku: string, title: string, price: integer }
            relationships:
              maker: { to: Maker, inverse: items }
              parent: { to: Item, inverse: children }
              children: { to: Item, many: true, inverse: parent }
        sources:
          - name: items
            entity: Item
            url: items.json
        exports:
          - name: delta
            entity: Item
            path: \(root)/out/delta.csv
            columns: [sku, title, price, maker.name, parent.title]
            where: "price >= 10"
            changes: since_last
          - name: full
            entity: Item
            path: \(root)/out/full.csv
            columns: [sku, title, price, maker.name, parent.title]
            where: "price >= 10"
          - name: by-maker-delta
            entity: Item
            path: \(root)/out/by-maker-delta.csv
            columns: [sku, title]
            where: "maker.name CONTAINS '5'"
            changes: since_last
          - name: by-maker-full
            entity: Item
            path: \(root)/out/by-maker-full.csv
            columns: [sku, title]
            where: "maker.name CONTAINS '5'"
        """
    }

    @Test(arguments: seeds) func aConsumerApplyingEveryDeltaHoldsWhatTheFullExportHolds(seed: UInt64) throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.pipeline(root: workspace.url.path))
        let file = try PipelineFileLoader(environment: [:]).load(path: workspace.path("shop.yml"))
        try FileManager.default.createDirectory(atPath: workspace.path(".swell"), withIntermediateDirectories: true)
        let container = PersistentContainer(name: "editor", managedObjectModel: file.model,
                                            storeURL: URL(fileURLWithPath: workspace.path(".swell/shop.sqlite")),
                                            options: PersistentStoreOptions(history: true))
        try container.loadPersistentStores()
        defer { try? container.persistentStoreCoordinator.close() }
        let editor = EditorRun(seed: seed, context: container.writerContext)
        try editor.makeMakers()
        var consumers: [String: [String: [String]]] = [:]
        for round in 1...12 {
            try editor.edit()
            let (_, failure) = PipelineRunner(pipeline: file, logger: CapturedLog().logger).run(sources: false, exports: true)
            if let failure { Issue.record("seed \(seed), round \(round): the export failed: \(failure.message)"); return }
            for name in ["", "by-maker-"] {
                let delta = try Self.rows(workspace.read("out/\(name)delta.csv"))
                var consumer = consumers[name, default: [:]]
                for cells in delta {
                    if cells[0] == "delete" { consumer[cells[1]] = nil } else { consumer[cells[1]] = Array(cells.dropFirst()) }
                }
                consumers[name] = consumer
                let full = Dictionary(uniqueKeysWithValues: try Self.rows(workspace.read("out/\(name)full.csv")).map { ($0[0], $0) })
                if consumer != full {
                    Issue.record("""
                        seed \(seed), round \(round), export \(name)delta: the consumer's copy differs from the full export
                        consumer: \(consumer.sorted { $0.key < $1.key }.map(\.value))
                        full:     \(full.sorted { $0.key < $1.key }.map(\.value))
                        last delta: \(delta)
                        replay: SWELL_DIFF_SEED=\(seed) swift test --filter DeltaExportDifferentialTests
                        edits:
                        \(editor.log.joined(separator: "\n"))
                        """)
                    return
                }
            }
        }
    }

    /// The CSV's rows after the header, split on commas (the test's values hold none).
    static func rows(_ text: String) -> [[String]] {
        text.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }
}

/// Random edits on the writer context, each logged for the replay.
final class EditorRun {
    var random: SeededGenerator
    let context: ManagedObjectContext
    var log: [String] = []
    let skus = (0..<8).map { "s\($0)" }
    let codes = ["m0", "m1", "m2"]

    init(seed: UInt64, context: ManagedObjectContext) {
        random = SeededGenerator(state: seed)
        self.context = context
    }

    func makeMakers() throws {
        try context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            for code in codes {
                let maker = context.insertNewObject(forEntityName: "Maker")
                maker["code"] = code
                maker["name"] = "maker \(code)"
            }
            try context.save()
        }
    }

    /// One round: a few edits in one or two saves.
    func edit() throws {
        try context.performAndWait {
            var items = try context.fetch(FetchRequest(entityName: "Item"))
            var makers = try context.fetch(FetchRequest(entityName: "Maker"))
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let roll = Int.random(in: 0..<100, using: &random)
                let sku = skus.randomElement(using: &random)!
                if roll < 30 || items.isEmpty {
                    let item = context.insertNewObject(forEntityName: "Item")
                    item["sku"] = sku
                    item["title"] = "t\(Int.random(in: 0..<100, using: &random))"
                    item["price"] = Int.random(in: 0..<20, using: &random)
                    item["maker"] = makers.randomElement(using: &random)
                    items.append(item)
                    log.append("insert \(sku) \(item["title"]!) \(item["price"]!)")
                    continue
                }
                let item = items.randomElement(using: &random)!
                let name = item["sku"] as? String ?? "?"
                switch roll {
                case ..<45:
                    item["price"] = Int.random(in: 0..<20, using: &random)
                    log.append("price \(name) → \(item["price"]!)")
                case ..<55:
                    item["title"] = "t\(Int.random(in: 0..<100, using: &random))"
                    log.append("title \(name) → \(item["title"]!)")
                case ..<65:
                    item["sku"] = sku
                    log.append("key \(name) → \(sku)")
                case ..<73:
                    context.delete(item)
                    items.removeAll { $0 === item }
                    log.append("delete \(name)")
                case ..<80:
                    guard let maker = makers.randomElement(using: &random) else { continue }
                    maker["name"] = "maker \(maker["code"]!) \(Int.random(in: 0..<100, using: &random))"
                    log.append("rename \(maker["code"]!) → \(maker["name"]!)")
                case ..<84:
                    guard let maker = makers.randomElement(using: &random) else { continue }
                    item["maker"] = maker
                    log.append("maker of \(name) → \(maker["code"]!)")
                case ..<97:
                    let parent = items.randomElement(using: &random)!
                    item["parent"] = parent === item ? nil : parent
                    log.append("parent of \(name) → \(parent === item ? "none" : parent["sku"] as? String ?? "?")")
                default:
                    guard makers.count > 1, let maker = makers.randomElement(using: &random) else { continue }
                    context.delete(maker)
                    makers.removeAll { $0 === maker }
                    log.append("delete maker \(maker["code"]!)")
                }
                if Int.random(in: 0..<4, using: &random) == 0 {
                    try context.save()
                    items = try context.fetch(FetchRequest(entityName: "Item"))
                    log.append("save")
                }
            }
            try context.save()
            log.append("save; export")
        }
    }
}
