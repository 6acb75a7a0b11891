import Foundation
@testable import SwellPipeline
import SwellPostgres
import SwellContexts
import SwellTestSupport
import Testing
import SwellStore
import SwellPipelineTestSupport

/// Delta exports (`changes: since_last`, pipeline files version 3, README "Delta exports"):
/// the first run exports every row as an insert; later runs only what was inserted, updated
/// or deleted since the export last succeeded (a deleted row by its key); a failed export
/// sends the same changes next time; `status` shows the position; `changes` needs `history`.
@Suite struct DeltaExportTests {
    static func pipeline(history: String = "history: true", exportPath: String = "out/changes.csv") -> String {
        """
        version: 3
        name: shop
        store: .swell/shop.sqlite
        \(history)
        entities:
          Item:
            key: [id]
            attributes: { id: integer, title: string, price: double? }
        sources:
          - name: items
            entity: Item
            url: items.json
            mode: replace
        exports:
          - name: changes
            entity: Item
            path: \(exportPath)
            columns: [id, title, price]
            changes: since_last
          - name: all
            entity: Item
            path: out/all.csv
            columns: [id, title]
        """
    }

    enum Store: String, CaseIterable, Sendable { case sqlite, postgres }

    /// The `--store` arguments for `store` (a fresh schema of the suite's PostgreSQL server).
    static func storeArguments(_ store: Store) throws -> [String] {
        guard store == .postgres else { return [] }
        let server = try PostgresServer.shared.get()
        return ["--store", server.url() + "?schema=delta_\(UUID().uuidString.prefix(8).lowercased())"]
    }

    @Test(arguments: Store.allCases)
    func eachRunExportsWhatChangedSinceTheLastExport(store: Store) throws {
        let workspace = try Workspace()
        let storeArguments = try Self.storeArguments(store)
        func swell(_ arguments: String...) throws -> SwellProcess.Outcome { try workspace.run(arguments + storeArguments) }
        try workspace.write("shop.yml", Self.pipeline())
        try workspace.write("items.json", #"[{"id": 1, "title": "board", "price": 300}, {"id": 2, "title": "fins", "price": 40.5}, {"id": 3, "title": "wax"}]"#)
        var run = try swell("run", "shop.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\ninsert,1,board,300\ninsert,2,fins,40.5\ninsert,3,wax,\n")
        // Board renamed, fins gone, leash new, wax as it was.
        try workspace.write("items.json", #"[{"id": 1, "title": "longboard", "price": 300}, {"id": 3, "title": "wax"}, {"id": 4, "title": "leash", "price": 25}]"#)
        run = try swell("run", "shop.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\ndelete,2,,\nupdate,1,longboard,300\ninsert,4,leash,25\n")
        #expect(try workspace.read("out/all.csv") == "id,title\n1,longboard\n3,wax\n4,leash\n")
        // Nothing new: only the header.
        run = try swell("run", "shop.yml")
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\n")
        let status = try swell("status", "shop.yml")
        #expect(status.stdout.contains("history: on") && status.stdout.contains("export changes: changes since history transaction"), "\(status.stdout)")
    }

    /// A key deleted and stored again between two exports: `delete` comes before the row
    /// again, so a consumer applying the file in order keeps it.
    @Test func aKeyGoneAndBackIsNeverLostByAConsumerApplyingTheFileInOrder() throws {
        let workspace = try Workspace()
        // Keyed by title: a title stored again is another object (another primary key).
        try workspace.write("shop.yml", Self.pipeline().replacingOccurrences(of: "key: [id]", with: "key: [title]"))
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "fins"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}]"#)
        #expect(try workspace.run("import", "shop.yml").status == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 7, "title": "fins"}]"#)
        #expect(try workspace.run("import", "shop.yml").status == 0)
        #expect(try workspace.run("export", "shop.yml").status == 0)
        let lines = try workspace.read("out/changes.csv").split(separator: "\n").dropFirst()
        // Applied in order to the consumer's copy (title → id), the file leaves fins with id 7.
        var copy = ["board": "1", "fins": "2"]
        for line in lines {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if cells[0] == "delete" { copy[cells[2]] = nil } else { copy[cells[2]] = cells[1] }
        }
        #expect(copy == ["board": "1", "fins": "7"], "\(lines)")
    }

    @Test func aFailedExportSendsTheSameChangesNextTime() throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.pipeline())
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "fins"}]"#)
        // The export's target is a directory this time: the file cannot be put in place.
        try workspace.write("blocked.yml", Self.pipeline(exportPath: "out/blocked"))
        try FileManager.default.createDirectory(atPath: workspace.path("out/blocked/x"), withIntermediateDirectories: true)
        let failed = try workspace.run("run", "blocked.yml")
        #expect(failed.status != 0, "\(failed.stderr)")
        let again = try workspace.run("export", "shop.yml")
        #expect(again.status == 0, "\(again.stderr)")
        // blocked.yml's export shares the name and the position, which did not move.
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\ninsert,2,fins,\n")
    }

    /// With `keep_days: 0`, what every delta export has read is purged after the exports;
    /// the next delta still holds exactly what changed since.
    @Test func historyEveryDeltaExportReadIsPurged() throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.pipeline(history: "history: { keep_days: 0 }"))
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "fins"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "blue fins"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        let file = try PipelineFileLoader(environment: [:]).load(path: workspace.path("shop.yml"))
        func kept() throws -> Int {
            let container = PersistentContainer(name: "check", managedObjectModel: file.model,
                                                storeURL: URL(fileURLWithPath: workspace.path(".swell/shop.sqlite")))
            try container.loadPersistentStores()
            defer { try? container.persistentStoreCoordinator.close() }
            return try container.writerContext.performAndWait { try container.writerContext.fetchHistory(after: nil).count }
        }
        #expect(try kept() == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 3, "title": "wax"}]"#)
        #expect(try workspace.run("import", "shop.yml").status == 0)
        #expect(try kept() > 0)
        #expect(try workspace.run("export", "shop.yml").status == 0)
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\ndelete,2,,\ninsert,3,wax,\n")
        #expect(try kept() == 0)
    }

    /// An export whose position is older than what was purged (here another file, without
    /// it, purged the store's history) cannot list its changes: it fails, saying so, rather
    /// than leave out what it can no longer read.
    @Test func aPositionOlderThanThePurgedHistoryIsRefused() throws {
        let workspace = try Workspace()
        let other = "  - name: other\n    entity: Item\n    path: out/other.csv\n    columns: [id, title]\n    changes: since_last\n"
        let both = Self.pipeline().replacingOccurrences(of: "  - name: all\n", with: other + "  - name: all\n")
        try workspace.write("both.yml", both)
        try workspace.write("one.yml", Self.pipeline(history: "history: { keep_days: 0 }"))
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}]"#)
        #expect(try workspace.run("run", "both.yml").status == 0)
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "fins"}]"#)
        #expect(try workspace.run("run", "one.yml").status == 0)
        let refused = try workspace.run("export", "both.yml")
        #expect(refused.status == 73 && refused.stderr.contains("export other: its position (history token")
                && refused.stderr.contains("Give the export a new name"), "\(refused.stderr)")
        // `changes` (before it in the file) kept up and was written.
        #expect(try workspace.read("out/changes.csv") == "_change,id,title,price\n")
        // Renamed, the export starts again from every row, and goes on from there, although
        // the history it would have read first is purged.
        try workspace.write("renamed.yml", both.replacingOccurrences(of: "name: other", with: "name: other-again"))
        #expect(try workspace.run("export", "renamed.yml").status == 0)
        #expect(try workspace.read("out/other.csv") == "_change,id,title\ninsert,1,board\ninsert,2,fins\n")
        let next = try workspace.run("export", "renamed.yml")
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try workspace.read("out/other.csv") == "_change,id,title\n")
    }

    @Test func changesNeedTheStoresHistory() throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.pipeline(history: ""))
        let outcome = try workspace.run("validate", "shop.yml")
        #expect(outcome.status == 64 && outcome.stderr.contains("changes of export changes needs the store's history: add history: true"), "\(outcome.stderr)")
        try workspace.write("v2.yml", Self.pipeline().replacingOccurrences(of: "version: 3", with: "version: 2").replacingOccurrences(of: "    mode: replace\n", with: ""))
        #expect(try workspace.run("validate", "v2.yml").stderr.contains("history needs version: 3"))
        try workspace.write("nokey.yml", Self.pipeline().replacingOccurrences(of: "columns: [id, title, price]", with: "columns: [title, price]"))
        #expect(try workspace.run("validate", "nokey.yml").stderr.contains("needs the key column id among its columns"))
    }

    /// Store guarantees 48 across processes: an app's view context, with a fetched results
    /// controller, merges what a `swell run` in another process wrote, read from the history.
    @Test func anotherProcessMergesWhatASwellRunWrote() throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.pipeline())
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "fins"}, {"id": 3, "title": "wax"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        let file = try PipelineFileLoader(environment: [:]).load(path: workspace.path("shop.yml"))
        let app = PersistentContainer(name: "app", managedObjectModel: file.model, storeURL: URL(fileURLWithPath: workspace.path(".swell/shop.sqlite")),
                                      options: PersistentStoreOptions(history: true))
        try app.loadPersistentStores()
        let view = app.viewContext
        var request = FetchRequest(entityName: "Item")
        request.sortDescriptors = [FetchSortDescriptor(key: "id")]
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        let seen = try view.performAndWait { () throws -> HistoryToken? in
            try controller.performFetch()
            return try view.lastHistoryToken()
        }
        // The sync job, in another process: fins renamed, wax gone, leash new.
        try workspace.write("items.json", #"[{"id": 1, "title": "board"}, {"id": 2, "title": "blue fins"}, {"id": 4, "title": "leash"}]"#)
        #expect(try workspace.run("run", "shop.yml").status == 0)
        let transactions = try view.performAndWait { try view.fetchHistory(after: seen) }
        #expect(!transactions.isEmpty)
        for transaction in transactions {
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.changeNotice, into: [view])
        }
        let titles = view.performAndWait { controller.fetchedObjects?.map { $0["title"] as? String ?? "" } }
        #expect(titles == ["board", "blue fins", "leash"])
        #expect(recorder.changes.sorted() == ["delete 3", "insert 4", "update 2"], "\(recorder.changes)")
    }
}

/// What a fetched results controller reported: "update 2", by the object's `id`.
/// `@unchecked Sendable`: the controller calls it on its context's queue only, where the test reads it.
final class ChangeRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
    var changes: [String] = []

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        changes.append("\(type) \(object["id"] as? Int ?? -1)")
    }
}
