import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A batch insert's `storeMetadata` is committed in the rows' own transaction: both are on
/// disk, or neither is (the pipeline keeps where a source stands this way).
@Suite(.onEveryStore) struct BatchMetadataTests {
    let directory = TemporaryDirectory()

    private func entries(_ ids: ClosedRange<Int>, date: Date = Date(timeIntervalSince1970: 1_700_000_000)) -> [[String: Any]] {
        ids.map { ["id": $0, "date": date, "rating": $0] }
    }

    private func metadata(_ key: String, in context: ManagedObjectContext) throws -> String? {
        try context.performAndWait { try context.storeMetadata(forKey: key) }
    }

    @Test func metadataLandsWithTheRowsOfItsBatch() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let observer = try makeRootContext(at: container.storeURL)
        let request = BatchInsertRequest(entityName: "JournalEntry", objects: entries(1...3))
        request.storeMetadata = ["position.journal": "page 2", "keys.journal.0": "1-3"]
        try worker.performAndWait { _ = try worker.execute(request) }
        #expect(try count(observer) == 3)
        #expect(try metadata("position.journal", in: observer) == "page 2")
        #expect(try metadata("keys.journal.0", in: observer) == "1-3")

        // Columns, the pipeline's form; a nil value removes its key.
        var columns = BatchColumns()
        let id = columns.integers("id"), date = columns.dates("date")
        for n in 4...5 {
            columns.append(Int64(n), to: id)
            columns.append(secondsSince1970: 1_700_000_000, to: date)
        }
        let next = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
        next.storeMetadata = ["position.journal": "page 3", "keys.journal.0": nil]
        try worker.performAndWait {
            worker.mergePolicy = .mergeByPropertyObjectTrump
            _ = try worker.execute(next)
        }
        #expect(try count(observer) == 5)
        #expect(try metadata("position.journal", in: observer) == "page 3")
        #expect(try metadata("keys.journal.0", in: observer) == nil)
    }

    @Test func aRefusedBatchWritesNeitherItsRowsNorItsMetadata() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let first = BatchInsertRequest(entityName: "JournalEntry", objects: entries(1...2))
        first.storeMetadata = ["position.journal": "page 1"]
        try worker.performAndWait { _ = try worker.execute(first) }
        // The second row has no date, which the entity requires: nothing of the request is written.
        let refused = BatchInsertRequest(entityName: "JournalEntry", objects: [["id": 3, "date": Date()], ["id": 4]])
        refused.storeMetadata = ["position.journal": "page 2"]
        #expect(throws: StoreError.self) { try worker.performAndWait { _ = try worker.execute(refused) } }
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try count(observer) == 2)
        #expect(try metadata("position.journal", in: observer) == "page 1")
    }

    @Test func metadataIsWrittenWhenEveryRowArrivesAsStored() throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try worker.performAndWait {
            worker.mergePolicy = .mergeByPropertyObjectTrump
            _ = try worker.execute(BatchInsertRequest(entityName: "JournalEntry", objects: entries(1...3)))
        }
        let again = BatchInsertRequest(entityName: "JournalEntry", objects: entries(1...3))
        again.resultType = .changes
        again.storeMetadata = ["position.journal": "done with page 1"]
        let result = try worker.performAndWait { try worker.execute(again) }
        #expect(result.unchanged == 3 && result.inserted == 0 && result.updated == 0)
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try metadata("position.journal", in: observer) == "done with page 1")
    }
}
