import Foundation
@testable import SwellPostgres
@testable import SwellContexts
import SwellTestSupport
import Testing
import SwellStore

/// String tests on the PostgreSQL store (issue 20, item 4): `LIKE`, `[c]`, `[d]`,
/// `BEGINSWITH`… are never written as PostgreSQL SQL (which cannot answer them as Swell's
/// other stores do on every server); the store filters them in memory, and answers right
/// with `%`, `_`, `*`, `?` in the data and the patterns.
@Suite struct PostgresStringPredicateTests {
    private static let entity = EntityDescription(name: "Item", attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "title", type: .string, isOptional: true),
    ], uniquenessConstraint: ["id"])

    private static let titles = ["100%", "100 percent", "a_b", "axb", "a*b", "a?b", "Ünder", "under", "ÜNDER_x", "crème", "creme", "x%_y"]

    /// Format → the titles it matches, worked out by hand from NSPredicate's rules.
    private static let cases: [(String, Set<String>)] = [
        ("title LIKE '100%'", ["100%"]),
        ("title LIKE 'a_b'", ["a_b"]),
        ("title LIKE 'a?b'", ["a_b", "axb", "a*b", "a?b"]),
        ("title LIKE '*%'", ["100%"]),
        ("title LIKE '*%_*'", ["x%_y"]),
        ("title LIKE[c] 'UNDER*'", ["under"]),
        ("title LIKE[cd] 'under*'", ["Ünder", "under", "ÜNDER_x"]),
        ("title CONTAINS[cd] 'UNDER'", ["Ünder", "under", "ÜNDER_x"]),
        ("title CONTAINS[c] 'ü'", ["Ünder", "ÜNDER_x"]),
        ("title CONTAINS '%'", ["100%", "x%_y"]),
        ("title CONTAINS '_'", ["a_b", "ÜNDER_x", "x%_y"]),
        ("title BEGINSWITH[c] 'ü'", ["Ünder", "ÜNDER_x"]),
        ("title BEGINSWITH[d] 'Un'", ["Ünder"]),
        ("title ENDSWITH '_x'", ["ÜNDER_x"]),
        ("title CONTAINS[cd] 'CREME'", ["crème", "creme"]),
        ("title ==[c] 'UNDER'", ["under"]),
    ]

    @Test func stringTestsAreNeverWrittenAsPostgreSQLAndTheStoreAnswersThemRight() async throws {
        let server = try PostgresServer.shared.get()
        let schema = "s_\(UUID().uuidString.prefix(8).lowercased())"
        let model = ManagedObjectModel(entities: [Self.entity])
        let container = PersistentContainer(name: "strings", managedObjectModel: model, storeURL: URL(string: server.url() + "?schema=" + schema)!)
        try container.loadPersistentStores()
        let writer = container.writerContext
        try await writer.perform {
            for (id, title) in Self.titles.enumerated() {
                let item = writer.insertNewObject(forEntityName: "Item")
                item["id"] = id
                item["title"] = title
            }
            try writer.save()
        }
        for (format, expected) in Self.cases {
            let predicate = FetchPredicate(format: format)
            #expect(try predicate.bind(to: Self.entity).sql(ifNoStringTests: PostgresDialect()) == nil, "\(format)")
            var request = FetchRequest(entityName: "Item")
            request.predicate = predicate
            let fetching = request
            let view = container.viewContext
            let found = try await view.perform { Set(try view.fetch(fetching).compactMap { $0["title"] as? String }) }
            #expect(found == expected, "\(format)")
        }
        // Predicates without string tests still run as SQL.
        #expect(try FetchPredicate(format: "id >= 3 AND title != nil").bind(to: Self.entity).sql(ifNoStringTests: PostgresDialect()) != nil)
    }
}
