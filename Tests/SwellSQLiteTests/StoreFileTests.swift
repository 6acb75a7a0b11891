import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 27: an ordinary SQLite file in WAL mode, one table per entity, a column per attribute.
@Suite(.onEveryStore) struct StoreFileTests {
    let directory = TemporaryDirectory()

    @Test(.sqliteStoreOnly) func theStoreIsAPlainSQLiteFileInWALModeWithATablePerEntity() async throws {
        let container = try makeContainer(directory)
        try await container.writerContext.perform {
            insertEntry(container.writerContext, id: 1, location: "Ocean Beach", rating: 4, date: Date(timeIntervalSince1970: 1_714_545_000))
            let note = container.writerContext.insertNewObject(forEntityName: "Note")
            note["text"] = "hello"
            note["pinned"] = true
            note["score"] = 2.5
            try container.writerContext.save()
        }
        let connection = try SQLiteConnection(path: container.storeURL.path, mode: .readOnly)
        #expect(try connection.query("PRAGMA journal_mode").first?.first == .text("wal"))
        let tables = try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { $0[0] }
        #expect(tables.contains(.text("JournalEntry")))
        #expect(tables.contains(.text("Note")))
        for table in tables {
            guard case .text(let name) = table, name != "JournalEntry", name != "Note" else { continue }
            #expect(name.hasPrefix("swell_") || name.hasPrefix("_"), "\(name) is not Swell's own")
        }
        let columns = try connection.query("SELECT name, type FROM pragma_table_info('JournalEntry')")
        let names = columns.map { $0[0] }
        // The key `id` is the rowid (issue 9); `_pk`, Swell's own, holds only IDs that differ from the key.
        #expect(names == [.text("id"), .text("date"), .text("height"), .text("period"), .text("wind"), .text("location"), .text("rating"), .text("_pk")])
        #expect(try connection.query("SELECT name FROM pragma_table_info('Note')").first == [.text("_pk")])
        let row = try connection.query("SELECT id, date, location, rating FROM JournalEntry")
        #expect(row.first == [.integer(1), .real(1_714_545_000), .text("Ocean Beach"), .integer(4)])
        let note = try connection.query("SELECT text, score, pinned FROM Note")
        #expect(note.first == [.text("hello"), .real(2.5), .integer(1)])
    }
}
