import Foundation
import Testing
import SwellStore
import SwellStoreTestSupport

/// The DocC article "Porting from Core Data" runs as written: its SurfJournal flows (a list in a
/// typed controller, an edit in a child context saved to disk, an export on a private context)
/// and its first rule — a background task's save stops at the view context until `saveToDisk()`.
@Suite(.onEveryStore) struct PortingArticleTests {
    let directory = TemporaryDirectory()

    @Test func theSurfJournalChapterPortedRunsAsTheArticleWritesIt() async throws {
        let storeURL = directory.storeURL("SurfJournal")   // mixed case: a PostgreSQL schema named with capitals
        let container = PersistentContainer(name: "SurfJournal", managedObjectModel: typedModel, storeURL: storeURL)
        try container.loadPersistentStores()
        try await container.performBackgroundTask { context in
            for id in 1...3 { context.insert(JournalEntry(id: id, date: Date(timeIntervalSince1970: Double(id) * 86_400))) }
            try context.save()                 // 1. into the view context
        }
        // The trap the article opens with: nothing is on disk yet.
        #expect(try storedRowCount(storeURL) == 0)
        try await container.saveToDisk()       // 2. view context → writer → disk
        #expect(try storedRowCount(storeURL) == 3)

        // JournalEntryViewController: edit in a child context; Save moves the edit up.
        let id = try await MainActor.run { () throws -> ObjectID in
            let list = FetchedResultsController<JournalEntry>(
                fetchDescriptor: FetchDescriptor(sortBy: [SortDescriptor(\.date, order: .reverse)]),
                context: container.viewContext, sectionNameKeyPath: nil)
            try list.performFetch()
            return list.object(at: IndexPath(item: 0, section: 0)).objectID
        }
        let editor = ManagedObjectContext(concurrencyType: .mainQueue)
        editor.parent = container.viewContext
        try await editor.perform {
            let entry = try editor.existingObject(with: id, as: JournalEntry.self)
            entry.rating = 5
            try editor.save()
        }
        try await container.saveToDisk()

        // exportCSVFile: on a private context.
        let file = directory.file("export.csv")
        try await container.performBackgroundTask { context in
            var all = FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.date)])
            all.fetchBatchSize = 500
            let lines = try context.fetch(all).map { "\($0.id),\($0.height ?? ""),\($0.rating ?? 0)" }
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "1,,0\n2,,0\n3,,5")
    }
}
