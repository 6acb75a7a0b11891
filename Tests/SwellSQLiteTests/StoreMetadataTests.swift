import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Metadata kept beside the data moves with saves and lands in the same transaction; rows stream in order.
@Suite(.onEveryStore) struct StoreMetadataTests {
    let directory = TemporaryDirectory()

    @Test func metadataMovesWithSavesAndLandsWithTheData() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try await worker.perform {
            insertEntry(worker, id: 1)
            worker.setStoreMetadata("2024-05-01T00:00:00Z", forKey: "cursor.journal")
            try worker.save()
        }
        let observer = try makeRootContext(at: container.storeURL)
        let inView = try await container.viewContext.perform { try container.viewContext.storeMetadata(forKey: "cursor.journal") }
        #expect(inView == "2024-05-01T00:00:00Z")
        #expect(try observer.performAndWait { try observer.storeMetadata(forKey: "cursor.journal") } == nil)
        try await container.saveToDisk()
        #expect(try observer.performAndWait { try observer.storeMetadata(forKey: "cursor.journal") } == "2024-05-01T00:00:00Z")
        #expect(try count(observer) == 1)
        try await container.writerContext.perform {
            container.writerContext.setStoreMetadata(nil, forKey: "cursor.journal")
            try container.writerContext.save()
        }
        #expect(try observer.performAndWait { try observer.storeMetadata(forKey: "cursor.journal") } == nil)
    }

    @Test func metadataOfAFailedSaveIsNotWritten() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        let failed = await writer.perform { () -> Bool in
            let entry = writer.insertNewObject(forEntityName: "JournalEntry")
            entry["id"] = 1  // no date: the save fails
            writer.setStoreMetadata("x", forKey: "k")
            do { try writer.save(); return false } catch { return true }
        }
        #expect(failed)
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try observer.performAndWait { try observer.storeMetadata(forKey: "k") } == nil)
    }

    @Test func rowsStreamInFetchOrderWithUnsavedChanges() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            for id in 1...5 { insertEntry(writer, id: id, rating: id) }
            try writer.save()
        }
        var byRating = FetchRequest(entityName: "JournalEntry")
        byRating.sortDescriptors = [FetchSortDescriptor(key: "rating", ascending: false)]
        let request = byRating
        let reader = container.newBackgroundContext()
        let streamed = try await reader.perform { () throws -> [Int64] in
            var ratings: [Int64] = []
            try reader.enumerateRows(request) { _, values in
                if case .integer(let rating) = values[6] { ratings.append(rating) }
            }
            return ratings
        }
        #expect(streamed == [5, 4, 3, 2, 1])
        let withChanges = try await reader.perform { () throws -> [Int64] in
            insertEntry(reader, id: 9, rating: 9)
            var ratings: [Int64] = []
            try reader.enumerateRows(request) { _, values in
                if case .integer(let rating) = values[6] { ratings.append(rating) }
            }
            return ratings
        }
        #expect(withChanges == [9, 5, 4, 3, 2, 1])
    }

    @Test func rowCursorsReadTheSameValuesAsRowsWithAndWithoutUnsavedChanges() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            for id in 1...5 { insertEntry(writer, id: id, location: id % 2 == 0 ? "Pacifica, \"CA\"" : nil, rating: id) }
            try writer.save()
        }
        let request = FetchRequest(entityName: "JournalEntry")
        let reader = container.newBackgroundContext()
        for unsaved in [false, true] {
            let (rows, cursors) = try await reader.perform { () throws -> ([[StoreValue]], [[StoreValue]]) in
                if unsaved { insertEntry(reader, id: 9, location: "Linda Mar", rating: 9) }
                var rows: [[StoreValue]] = []
                try reader.enumerateRows(request) { primaryKey, values in rows.append([.integer(primaryKey)] + values) }
                var cursors: [[StoreValue]] = []
                try reader.enumerateRowCursors(request) { cursor in
                    cursors.append([.integer(cursor.primaryKey)] + (0..<journalEntity.attributes.count).map { index -> StoreValue in
                        cursor.withField(index) { field in
                            switch field {
                            case .null: .null
                            case .integer(let int): .integer(int)
                            case .real(let double): .real(double)
                            case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
                            }
                        }
                    })
                }
                return (rows, cursors)
            }
            #expect(rows.count == (unsaved ? 6 : 5))
            #expect(cursors == rows)
        }
    }

    /// Key-path columns come from saved data: over unsaved changes of the entity they are
    /// refused with an error that says so (not as a sort key that is "not an attribute").
    @Test func keyPathColumnsOverUnsavedChangesAskForASave() async throws {
        let container = try makeContainer(directory)
        let reader = container.newBackgroundContext()
        let error = await reader.perform { () -> (any Error)? in
            insertEntry(reader, id: 1, location: "Pacifica")
            do {
                try reader.enumerateRowCursors(FetchRequest(entityName: "JournalEntry"),
                                               keyPaths: [KeyPathColumn(path: ["location"], separator: nil)]) { _ in }
                return nil
            } catch {
                return error
            }
        }
        guard let error = error as? StoreError, error.kind == .keyPathNeedsSavedData,
              let entity = error.entity, let keyPath = error.attribute else {
            Issue.record("expected keyPathNeedsSavedData, got \(String(describing: error))")
            return
        }
        #expect(entity == "JournalEntry")
        #expect(keyPath == "location")
    }
}
