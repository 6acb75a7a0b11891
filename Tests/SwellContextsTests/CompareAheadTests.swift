import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// A batch insert of columns compared with the store ahead of its execution
/// (`ManagedObjectContext.compareAhead`, what a pipeline's comparer does while the writer
/// writes the batch before): whatever the coordinator commits in between, the execution
/// does what it would have done without the comparison. On every store (`.onEveryStore`). `BatchDifferentialTests` compares ahead at random too.
@Suite(.onEveryStore) struct CompareAheadTests {
    let directory = TemporaryDirectory()
    let day = Date(timeIntervalSince1970: 1_700_000_000)

    /// A columns batch insert of `(id, rating)` rows, every row dated `day`.
    private func ratings(_ rows: [(Int64, Int64)]) -> BatchInsertRequest {
        var columns = BatchColumns()
        let ids = columns.integers("id"), dates = columns.dates("date"), values = columns.integers("rating")
        for (id, rating) in rows {
            columns.append(id, to: ids)
            columns.append(day, to: dates)
            columns.append(rating, to: values)
        }
        let request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
        request.resultType = .changes
        return request
    }

    private func execute(_ request: BatchInsertRequest, in context: ManagedObjectContext) throws -> BatchResult {
        try context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            return try context.execute(request)
        }
    }

    private func compareAhead(_ request: BatchInsertRequest, in context: ManagedObjectContext) {
        context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            context.compareAhead(request)
        }
    }

    private func storedRatings(_ container: PersistentContainer) throws -> [Int: Int] {
        let reader = try makeRootContext(at: container.storeURL)
        return try reader.performAndWait {
            var ratings: [Int: Int] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "JournalEntry")) {
                ratings[object["id"] as! Int] = object["rating"] as? Int
            }
            return ratings
        }
    }

    private func makeStack() throws -> (PersistentContainer, writer: ManagedObjectContext, comparer: ManagedObjectContext) {
        let container = try makeContainer(directory)
        let writer = container.newBackgroundContext()
        _ = try execute(ratings([(1, 1), (2, 1), (3, 1)]), in: writer)
        return (container, writer, container.newBackgroundContext())
    }

    @Test func theRowsABatchWroteSinceAreComparedAgain() throws {
        let (container, writer, comparer) = try makeStack()
        // Compared while rows 1 and 2 hold 1: both equal, 3 changes.
        let later = ratings([(1, 1), (2, 1), (3, 5)])
        compareAhead(later, in: comparer)
        // The batch before it (in the source's order) is written first, changing row 1.
        let earlier = try execute(ratings([(1, 2), (4, 2)]), in: writer)
        #expect((earlier.inserted, earlier.updated) == (1, 1))
        let result = try execute(later, in: writer)
        // The later record wins: row 1 goes back to 1.
        #expect((result.inserted, result.updated, result.unchanged) == (0, 2, 1))
        #expect(try storedRatings(container) == [1: 1, 2: 1, 3: 5, 4: 2])
    }

    @Test func aRowABatchInsertedSinceIsMetNotInsertedAgain() throws {
        let (container, writer, comparer) = try makeStack()
        let later = ratings([(9, 3)])
        compareAhead(later, in: comparer)  // 9 is not stored then
        _ = try execute(ratings([(9, 7)]), in: writer)
        let result = try execute(later, in: writer)
        #expect((result.inserted, result.updated, result.unchanged) == (0, 1, 0))
        #expect(try storedRatings(container)[9] == 3)
    }

    @Test func afterASaveEveryRowIsComparedAgain() throws {
        let (container, writer, comparer) = try makeStack()
        let later = ratings([(1, 1), (2, 1)])
        compareAhead(later, in: comparer)
        // A save may write any row: the comparison ahead cannot say which are still equal.
        let saver = container.writerContext
        try saver.performAndWait {
            var fetch = FetchRequest(entityName: "JournalEntry")
            fetch.predicate = FetchPredicate(format: "id == %@", 2)
            try saver.fetch(fetch).first!.setValue(8, forKey: "rating")
            try saver.save()
        }
        let result = try execute(later, in: writer)
        #expect((result.updated, result.unchanged) == (1, 1))
        #expect(try storedRatings(container)[2] == 1)
    }

    @Test func aComparisonOlderThanTheCommitsRememberedIsMadeAgain() throws {
        let (container, writer, comparer) = try makeStack()
        let later = ratings([(1, 1)])
        compareAhead(later, in: comparer)
        _ = try execute(ratings([(1, 2)]), in: writer)
        // Enough commits of other rows that the one of row 1 is no longer remembered.
        for id in 0..<Int64(CommitLog.capacity) {
            _ = try execute(ratings([(100 + id, 1)]), in: writer)
        }
        let result = try execute(later, in: writer)
        #expect((result.updated, result.unchanged) == (1, 0))
        #expect(try storedRatings(container)[1] == 1)
    }

    @Test func theExecutingContextsPolicyDecides() throws {
        let (container, writer, comparer) = try makeStack()
        let later = ratings([(1, 6), (2, 1)])
        compareAhead(later, in: comparer)  // under objectTrump: row 1 differs, row 2 is equal
        let result = try writer.performAndWait {
            writer.mergePolicy = .mergeByPropertyStoreTrump
            return try writer.execute(later)
        }
        // Under storeTrump the stored values win: nothing is written, both rows are unchanged.
        #expect((result.inserted, result.updated, result.unchanged) == (0, 0, 2))
        #expect(try storedRatings(container) == [1: 1, 2: 1, 3: 1])
    }

    @Test func aBatchCarryingEveryAttributeUpdatesOnlyTheRowsThatDiffer() throws {
        // Every attribute carried: the store notes which attributes differ, no stored value read.
        let container = try makeContainer(directory)
        let writer = container.newBackgroundContext()
        func everything(_ rows: [(Int64, String?, Int64?)]) -> BatchInsertRequest {
            var columns = BatchColumns()
            let ids = columns.integers("id"), dates = columns.dates("date"), ratings = columns.integers("rating")
            let texts = ["height", "period", "wind", "location"].map { columns.strings($0) }
            for (id, location, rating) in rows {
                columns.append(id, to: ids)
                columns.append(day, to: dates)
                columns.append(rating, to: ratings)
                for (n, text) in texts.enumerated() { columns.append(n == 3 ? location : "h\(n)", to: text) }
            }
            let request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
            request.resultType = .changes
            return request
        }
        _ = try execute(everything([(1, "Reef", 1), (2, "Point", 2), (3, nil, nil)]), in: writer)
        let later = everything([(1, "Reef", 1), (2, "Bay", 2), (3, "Cove", 3)])
        compareAhead(later, in: container.newBackgroundContext())
        let result = try execute(later, in: writer)
        #expect((result.inserted, result.updated, result.unchanged) == (0, 2, 1))
        let updated = result.changes["updated"] ?? []
        #expect(Set(updated.map(\.primaryKey)).count == 2)
        let reader = try makeRootContext(at: container.storeURL)
        let stored = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "JournalEntry")).map { ($0["id"] as! Int, $0["location"] as? String, $0["rating"] as? Int, $0["wind"] as? String) }
        }.sorted { $0.0 < $1.0 }
        #expect(stored.map(\.1) == ["Reef", "Bay", "Cove"])
        #expect(stored.map(\.2) == [1, 2, 3])
        #expect(stored.map(\.3) == ["h2", "h2", "h2"])
    }

    @Test func scatteredKeysAreComparedAsDenseOnesAre() throws {
        // Keys far apart are looked up one by one, keys close together read in one range.
        let container = try makeContainer(directory)
        let writer = container.newBackgroundContext()
        _ = try execute(ratings([(1, 1), (500_000, 1), (9_000_000, 1), (9_000_001, 1)]), in: writer)
        let result = try execute(ratings([(1, 1), (500_000, 2), (9_000_000, 1), (9_000_001, 3), (9_000_002, 4)]), in: writer)
        #expect((result.inserted, result.updated, result.unchanged) == (1, 2, 2))
        #expect(try storedRatings(container) == [1: 1, 500_000: 2, 9_000_000: 1, 9_000_001: 3, 9_000_002: 4])
    }

    @Test func aCommitUnderWayOrFailedLeavesTheWrittenKeysUnknown() throws {
        // Another root context's commit that has begun and not been counted may have written any
        // row; so may one that failed (it may have reached the store). The log says "unknown".
        let container = try makeContainer(directory)
        let coordinator = container.persistentStoreCoordinator
        let generation = coordinator.commitGeneration
        #expect(coordinator.keysWritten(after: generation, entity: "JournalEntry")?.isEmpty == true)
        coordinator.beginCommit()
        #expect(coordinator.keysWritten(after: generation, entity: "JournalEntry") == nil)
        coordinator.noteCommit(touched: .keys(entity: "JournalEntry", [7: 0].keys))
        #expect(coordinator.keysWritten(after: generation, entity: "JournalEntry").map { $0.flatMap { Array($0) } } == [7])
        #expect(coordinator.keysWritten(after: generation, entity: "Note").map { $0.flatMap { Array($0) } } == [])
        coordinator.beginCommit()
        coordinator.noteFailedCommit()
        #expect(coordinator.keysWritten(after: generation, entity: "JournalEntry") == nil)
    }

    @Test func aComparisonMadeOnAnotherCoordinatorIsNotUsed() throws {
        let (container, writer, _) = try makeStack()
        let later = ratings([(1, 1)])
        // Compared on a second coordinator, whose generations run ahead of the writer's (three
        // saves of notes): then row 1 changes through the writer's coordinator.
        let other = try makeRootContext(at: container.storeURL)
        try other.performAndWait {
            for number in 0..<3 {
                let note = ManagedObject(entity: noteEntity, insertInto: other)
                note.setValue("note \(number)", forKey: "text")
                try other.save()
            }
        }
        other.performAndWait {
            other.mergePolicy = .mergeByPropertyObjectTrump
            other.compareAhead(later)
        }
        _ = try execute(ratings([(1, 2)]), in: writer)
        let result = try execute(later, in: writer)
        #expect((result.updated, result.unchanged) == (1, 0))
        #expect(try storedRatings(container)[1] == 1)
    }

    /// A key that is not one integer (text, or two attributes) is compared in place too; the
    /// commits since a comparison ahead name the keys they wrote by hash, and those rows are
    /// compared again — both when the keys are text and when they are pairs.
    @Test(arguments: [false, true])
    func rowsOfOtherKeysABatchWroteSinceAreComparedAgain(pairs: Bool) throws {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Reading", attributes: [
            AttributeDescription(name: "station", type: .string),
            AttributeDescription(name: "day", type: .integer),
            AttributeDescription(name: "value", type: .integer, isOptional: true),
        ], uniquenessConstraint: pairs ? ["station", "day"] : ["station"])])
        let container = try makeContainer(directory, name: "readings-\(pairs)", model: model)
        func readings(_ rows: [(String, Int64)]) -> BatchInsertRequest {
            var columns = BatchColumns()
            let station = columns.strings("station"), day = columns.integers("day"), value = columns.integers("value")
            for (name, reading) in rows {
                columns.append(name, to: station)
                columns.append(7 as Int64, to: day)
                columns.append(reading, to: value)
            }
            let request = BatchInsertRequest(entityName: "Reading", columns: columns)
            request.resultType = .changes
            return request
        }
        let writer = container.newBackgroundContext(), comparer = container.newBackgroundContext()
        _ = try execute(readings([("north-station", 1), ("south-station", 1), ("east-station", 1)]), in: writer)
        // Compared while north and south hold 1: both equal, east changes.
        let later = readings([("north-station", 1), ("south-station", 1), ("east-station", 5)])
        compareAhead(later, in: comparer)
        // The batch before it is written first, changing north (and adding west).
        let earlier = try execute(readings([("north-station", 2), ("west-station", 2)]), in: writer)
        #expect((earlier.inserted, earlier.updated) == (1, 1))
        let result = try execute(later, in: writer)
        // The later record wins: north goes back to 1.
        #expect((result.inserted, result.updated, result.unchanged) == (0, 2, 1))
        let reader = try makeRootContext(at: container.storeURL, model: model)
        let stored = try reader.performAndWait {
            try Dictionary(uniqueKeysWithValues: reader.fetch(FetchRequest(entityName: "Reading")).map {
                ($0["station"] as! String, $0["value"] as! Int)
            })
        }
        #expect(stored == ["north-station": 1, "south-station": 1, "east-station": 5, "west-station": 2])
    }
}
