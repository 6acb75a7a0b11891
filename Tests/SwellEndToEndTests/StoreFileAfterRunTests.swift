import Foundation
import SwellPipeline
import SwellContexts
import Testing
import SwellStore
import SwellPipelineTestSupport

/// When `swell` returns, a SQLite store is whole in its one file: the run closed the store,
/// so its last connection copied the WAL into the file and removed it. A copy of the file
/// alone (a backup, a CI artifact) then holds every row. The run is large enough for the
/// WAL to pass 1,000 pages, where the checkpointer opens a connection of its own (the case
/// that used to leave the `-wal` file, and a copy of the file without the last commits).
@Suite struct StoreFileAfterRunTests {
    @Test func aRunLeavesEveryCommitInTheStoreFileAndNoWAL() throws {
        let workspace = try Workspace()
        let count = 40_000
        let filler = String(repeating: "swell ", count: 30)
        let records = (1...count).map { "{\"id\": \($0), \"title\": \"\(filler)\($0)\", \"score\": \(Double($0) / 4)}" }
        try workspace.write("data/page.json", "{\"data\": [\(records.joined(separator: ","))], \"next\": null}")
        let yaml = EndToEndTests.pipeline(url: "data/page.json")
        try workspace.write("items.yml", yaml)
        let outcome = try workspace.run("import", "items.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")

        let store = workspace.path(".swell/items.sqlite")
        let manager = FileManager.default
        #expect(!manager.fileExists(atPath: store + "-wal"), "the run left its WAL beside the store")
        // The file alone, copied where no -wal or -shm file is.
        let copy = workspace.path("copy/items.sqlite")
        try manager.createDirectory(atPath: workspace.path("copy"), withIntermediateDirectories: true)
        try manager.copyItem(atPath: store, toPath: copy)
        let pipeline = try PipelineFileLoader(environment: [:]).load(text: yaml, path: workspace.path("items.yml"))
        let container = PersistentContainer(name: "copy", managedObjectModel: pipeline.model, storeURL: URL(fileURLWithPath: copy))
        try container.loadPersistentStores()
        let stored = try container.viewContext.performAndWait { try container.viewContext.count(for: FetchRequest(entityName: "Item")) }
        #expect(stored == count)
        try container.close()
    }
}
