import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Core Data's format placeholders (issue 20, item 4): `%d %i %ld %f %K %@` take their
/// arguments, on every store; an unknown placeholder is refused when the predicate is made.
@Suite(.onEveryStore) struct PredicatePlaceholderTests {
    let directory = TemporaryDirectory()

    /// The keys (`id`) of the entries a fetch with `predicate` returns, on a store holding
    /// ratings 1…5 at ids 1…5; the same from a context holding them unsaved.
    private func matches(_ predicate: FetchPredicate) async throws -> (stored: [Int], unsaved: [Int]) {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            for id in 1...5 { insertEntry(writer, id: id, location: "spot \(id)", rating: id) }
            try writer.save()
        }
        var building = FetchRequest(entityName: "JournalEntry")
        building.predicate = predicate
        building.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: true)]
        let request = building
        let view = container.viewContext
        let stored = try await view.perform { try view.fetch(request).compactMap { $0["id"] as? Int } }
        let scratch = container.newBackgroundContext()
        let unsaved = try await scratch.perform { () throws -> [Int] in
            for id in 11...15 { insertEntry(scratch, id: id, location: "spot \(id - 10)", rating: id - 10) }
            return try scratch.fetch(request).compactMap { $0["id"] as? Int }.filter { $0 > 10 }.map { $0 - 10 }
        }
        return (stored, unsaved)
    }

    @Test(arguments: [
        (FetchPredicate(format: "rating > %d", 3), [4, 5]),
        (FetchPredicate(format: "rating == %i", Int32(2)), [2]),
        (FetchPredicate(format: "rating >= %ld", Int64(4)), [4, 5]),
        (FetchPredicate(format: "rating <= %lld AND rating != %u", 3, UInt(2)), [1, 3]),
        (FetchPredicate(format: "rating < %f", 2.5), [1, 2]),
        (FetchPredicate(format: "rating BETWEEN {%d, %lf}", 2, 3.0), [2, 3]),
        (FetchPredicate(format: "%K == %d", "rating", 5), [5]),
        (FetchPredicate(format: "%K == %@", "location", "spot 1"), [1]),
        (FetchPredicate(format: "rating IN {%d, %i, %@}", 1, 3, 5), [1, 3, 5]),
    ])
    func everyCoreDataPlaceholderTakesItsArgument(predicate: FetchPredicate, expected: [Int]) async throws {
        #expect(predicate.formatError == nil)
        let found = try await matches(predicate)
        #expect(found.stored == expected, "\(predicate)")
        #expect(found.unsaved == expected, "\(predicate) (unsaved)")
    }

    /// The issue's example: a to-many's `@count` against `%d`.
    @Test func aCountOfAToManyComparesWithPercentD() async throws {
        let container = PersistentContainer(name: "spots", managedObjectModel: relationshipModel, storeURL: directory.storeURL("spots"))
        try container.loadPersistentStores()
        let writer = container.writerContext
        try await writer.perform {
            for (name, entries) in [("few", 1), ("many", 4)] {
                let spot = writer.insertNewObject(forEntityName: "Spot")
                spot["name"] = name
                for n in 0..<entries {
                    let entry = writer.insertNewObject(forEntityName: "Entry")
                    entry["id"] = name.count * 100 + n
                    entry.setValue(spot, forKey: "spot")
                }
            }
            try writer.save()
        }
        var building = FetchRequest(entityName: "Spot")
        building.predicate = FetchPredicate(format: "entries.@count > %d", 3)
        let request = building
        let view = container.viewContext
        let names = try await view.perform { try view.fetch(request).compactMap { $0["name"] as? String } }
        #expect(names == ["many"])
    }

    /// Refused when made, not when a fetch runs: the error names the placeholder and where it is.
    @Test(arguments: [("rating == %x", 10), ("rating == %s", 10), ("rating > %lx", 9), ("rating == %", 10)])
    func anUnknownPlaceholderIsRefusedWhenThePredicateIsMade(format: String, offset: Int) {
        let error = #expect(throws: FetchPredicateError.self) { try FetchPredicate.parse(format: format, arguments: [1]) }
        #expect(error?.offset == offset, "\(String(describing: error))")
        #expect(error?.message.contains("unsupported placeholder") == true, "\(String(describing: error))")
        #expect(FetchPredicate(format: format, 1).formatError == error)
    }

    @Test func aPlaceholderWithAnArgumentOfTheWrongKindIsRefusedWhenMade() {
        for (format, argument) in [("rating == %d", 2.5 as Any?), ("rating == %d", "two"), ("rating < %f", "two"), ("%K == 1", 3)] {
            #expect(FetchPredicate(format: format, argument).formatError != nil, "\(format)")
        }
        #expect(FetchPredicate(format: "rating < %f", 2).formatError == nil)
    }
}
