import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Dictionary and ID fetches (Store guarantees 44–45): their shapes, the choices the contract
/// leaves open (nil values left out, sums over no rows), and the requests they refuse.
@Suite(.onEveryStore) struct ResultTypeTests {
    func seeded() throws -> (TemporaryDirectory, PersistentContainer) {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "results", model: ResultTypeDifferentialTests.model)
        let context = container.writerContext
        try context.performAndWait {
            let north = context.insertNewObject(forEntityName: "Spot")
            north.setValue("n", forKey: "code")
            north.setValue("north", forKey: "region")
            for (id, rating, location) in [(1, 5, "Pacifica"), (2, 3, "Pacifica"), (3, nil, "Mavericks"), (4, 4, nil)] as [(Int, Int?, String?)] {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry.setValue(id, forKey: "id")
                entry.setValue(rating, forKey: "rating")
                entry.setValue(location, forKey: "location")
                entry.setValue(id <= 2 ? north : nil, forKey: "spot")
            }
            try context.save()
        }
        return (directory, container)
    }

    @Test func groupsWithExpressionsComeAsDictionariesWithoutMakingObjects() throws {
        let (directory, container) = try seeded()
        defer { withExtendedLifetime(directory) {} }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.resultType = .dictionary
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            request.propertiesToFetch = ["location", ExpressionDescription(name: "total", function: .sum, keyPath: "rating"),
                                         ExpressionDescription(name: "rated", function: .count, keyPath: "rating"),
                                         ExpressionDescription(name: "best", function: .max, keyPath: "rating")]
            request.propertiesToGroupBy = ["location"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 3)
            #expect(rows[0]["location"] as? String == "Pacifica" && rows[0]["total"] as? Int == 8 && rows[0]["best"] as? Int == 5)
            // Over no values: a count of 0, a sum of 0, and no max (the key is left out, as nil is).
            #expect(rows[1]["location"] as? String == "Mavericks" && rows[1]["rated"] as? Int == 0 && rows[1]["total"] as? Int == 0)
            #expect(rows[1]["best"] == nil)
            #expect(rows[2]["location"] == nil && rows[2]["total"] as? Int == 4)
            request.havingPredicate = FetchPredicate(format: "total > 4")
            #expect(try context.fetchDictionaries(request).map { $0["location"] as? String } == ["Pacifica"])
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test func keyPathsRelationshipsAndIDs() throws {
        let (directory, container) = try seeded()
        defer { withExtendedLifetime(directory) {} }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            request.propertiesToFetch = ["id", "spot", "spot.region"]
            let rows = try context.fetchDictionaries(request)
            let spot = try context.fetch(FetchRequest(entityName: "Spot"))[0].objectID
            #expect(rows[0]["spot"] as? ObjectID == spot && rows[0]["spot.region"] as? String == "north")
            #expect(rows[3]["spot"] == nil && rows[3]["spot.region"] == nil && rows[3]["id"] as? Int == 4)
            request.predicate = FetchPredicate(format: "rating >= 4")
            #expect(try context.fetchObjectIDs(request) == context.fetch(request).map(\.objectID))
        }
    }

    @Test(arguments: [
        (["rating", ExpressionDescription(name: "n", function: .count, keyPath: "id")], [], "'rating' is fetched beside expressions"),
        ([ExpressionDescription(name: "s", function: .sum, keyPath: "location")], [], "sum of 'location' needs a number"),
        (["nope"], [], "'nope' is not an attribute"),
        (["id", "id"], [], "two fetched properties are named 'id'"),
        (["location"], ["location", "spot.entries"], "'spot.entries' is not an attribute"),
    ] as [([any FetchProperty], [String], String)])
    func requestsThatDoNotFitAreRefused(properties: [any FetchProperty], groupBy: [String], message: String) throws {
        let (directory, container) = try seeded()
        defer { withExtendedLifetime(directory) {} }
        let context = container.newBackgroundContext()
        var request = FetchRequest(entityName: "Entry")
        request.propertiesToFetch = properties
        request.propertiesToGroupBy = groupBy
        let error = context.performAndWait { () -> StoreError? in
            do { _ = try context.fetchDictionaries(request); return nil } catch { return error as? StoreError }
        }
        guard let error, error.kind == .invalidFetch, let entity = error.entity else { Issue.record("expected invalidFetch, got \(String(describing: error))"); return }
        #expect(entity == "Entry" && "\(error)".contains(message), "\(error)")
    }
}
