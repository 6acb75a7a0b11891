import Foundation
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellTestSupport
import SwellStoreTestSupport

/// Batch requests over typed entities (store guarantee 53): columns found by key path, rows
/// the same as a described entity's, read back as typed objects.
@Suite(.onEveryStore) struct TypedBatchTests {
    @Test func typedColumnsInsertWhatDescribedColumnsDo() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var typed = BatchColumns()
            let id = typed.column(\JournalEntry.id), date = typed.column(\JournalEntry.date)
            let height = typed.column(\JournalEntry.height), rating = typed.column(\JournalEntry.rating)
            let favourite = typed.column(\JournalEntry.isFavourite), conditions = typed.column(\JournalEntry.conditions)
            #expect(typed.attributeNames == ["id", "date", "height", "rating", "isFavourite", "conditions"])
            for row in 0..<100 {
                typed.append(row, to: id)
                typed.append(Date(timeIntervalSince1970: Double(row)), to: date)
                typed.append(row % 3 == 0 ? nil : "\(row) ft", to: height)
                typed.append(row % 4 == 0 ? nil : row % 6, to: rating)
                typed.append(row % 2 == 0, to: favourite)
                typed.append(row % 5 == 0 ? #"{"wind":\#(row)}"# : nil, to: conditions)
            }
            let request = BatchInsertRequest(entity: JournalEntry.self, columns: typed)
            request.resultType = .count
            #expect(try context.execute(request).count == 100)
            let entries = try context.fetch(FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.id)]))
            #expect(entries.count == 100)
            for (row, entry) in entries.enumerated() {
                #expect(entry.id == row && entry.date == Date(timeIntervalSince1970: Double(row)))
                #expect(entry.height == (row % 3 == 0 ? nil : "\(row) ft"))
                #expect(entry.rating == (row % 4 == 0 ? nil : row % 6) && entry.isFavourite == (row % 2 == 0))
                #expect(entry.conditions == (row % 5 == 0 ? JSONText(#"{"wind":\#(row)}"#) : nil))
            }
            let update = BatchUpdateRequest(entity: JournalEntry.self)
            update.predicate = try FetchPredicate(#Predicate<JournalEntry> { $0.id < 10 })
            update.propertiesToUpdate = ["rating": 9]
            update.resultType = .count
            #expect(try context.execute(update).count == 10)
            let delete = try BatchDeleteRequest(FetchDescriptor<JournalEntry>(predicate: #Predicate { $0.rating == 9 }))
            delete.resultType = .count
            #expect(try context.execute(delete).count == 10)
            #expect(try context.fetchCount(FetchDescriptor<JournalEntry>()) == 90)
        }
    }
}
