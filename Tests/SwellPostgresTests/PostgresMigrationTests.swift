import Foundation
import SwellPostgres
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// Statement 57 on PostgreSQL: what only a server shows — the migration under its lock when
/// runners open at once, and the catalog it leaves (columns, types, constraints, indexes).
@Suite struct PostgresMigrationTests {
    private static func model(renamed: Bool) -> ManagedObjectModel {
        let spot = renamed ? "Place" : "Spot", toOne = renamed ? "place" : "spot"
        return ManagedObjectModel(entities: [
            EntityDescription(name: spot, attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: toOne)],
                              uniquenessConstraint: ["name"], renamingIdentifier: renamed ? "Spot" : nil),
            EntityDescription(name: "Entry", attributes: [
                AttributeDescription(name: "id", type: .integer),
                AttributeDescription(name: renamed ? "headline" : "title", type: .string, isOptional: true,
                                     renamingIdentifier: renamed ? "title" : nil),
                AttributeDescription(name: "score", type: renamed ? .string : .double, isOptional: true),
                AttributeDescription(name: "good", type: renamed ? .string : .boolean, isOptional: true),
            ], relationships: [
                RelationshipDescription(name: toOne, destination: spot, inverse: "entries", renamingIdentifier: renamed ? "spot" : nil),
            ], uniquenessConstraint: ["id"]),
        ])
    }

    @Test func runnersOpeningAtOnceApplyARenameAndAWideningOnce() async throws {
        let server = try PostgresServer.shared.get()
        let schema = "m_\(UUID().uuidString.prefix(8).lowercased())"
        let url = URL(string: server.url() + "?schema=" + schema)!
        let first = PersistentContainer(name: "pg", managedObjectModel: Self.model(renamed: false), storeURL: url)
        try first.loadPersistentStores()
        try first.writerContext.performAndWait {
            let spot = first.writerContext.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Linda Mar"
            for (id, score, good) in [(1, 1.0, true), (2, 0.1, false), (3, 1e-7, true)] {
                let entry = first.writerContext.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = "entry \(id)"
                entry["score"] = score
                entry["good"] = good
                entry["spot"] = spot
            }
            try first.writerContext.save()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let container = PersistentContainer(name: "pg", managedObjectModel: Self.model(renamed: true), storeURL: url)
                    try container.loadPersistentStores()
                }
            }
            try await group.waitForAll()
        }
        let connection = try PostgresConnection(server.url())
        defer { connection.close() }
        #expect(try connection.query("""
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = '\(schema)' AND table_name = 'Entry' ORDER BY column_name
            """) == [[.text("_pk"), .text("bigint")], [.text("good"), .text("text")], [.text("headline"), .text("text")],
                     [.text("id"), .text("bigint")], [.text("place"), .text("bigint")], [.text("score"), .text("text")]])
        #expect(try connection.query("""
            SELECT e.id, e.headline, e.score, e.good, p.name FROM "\(schema)"."Entry" e JOIN "\(schema)"."Place" p ON p._pk = e.place ORDER BY e.id
            """) == [[.integer(1), .text("entry 1"), .text("1"), .text("true"), .text("Linda Mar")],
                     [.integer(2), .text("entry 2"), .text("0.1"), .text("false"), .text("Linda Mar")],
                     [.integer(3), .text("entry 3"), .text("1e-07"), .text("true"), .text("Linda Mar")]])
        // One foreign key from the to-one, under its new name; its index renamed; the old table gone.
        #expect(try connection.query("""
            SELECT conname::text FROM pg_constraint WHERE contype = 'f' AND conrelid = '"\(schema)"."Entry"'::regclass
            """) == [[.text("swell_fk_Entry_place")]])
        #expect(try connection.query("SELECT indexname::text FROM pg_indexes WHERE schemaname = '\(schema)' AND indexname LIKE 'swell_Entry_%'")
            == [[.text("swell_Entry_place")]])
        #expect(try connection.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = '\(schema)' AND table_name = 'Spot'")
            == [[.integer(0)]])
        // And the store reads as the new model says.
        let reader = PersistentContainer(name: "pg", managedObjectModel: Self.model(renamed: true), storeURL: url)
        try reader.loadPersistentStores()
        let context = reader.viewContext
        var request = FetchRequest(entityName: "Entry")
        request.predicate = FetchPredicate(format: "place.name == 'Linda Mar' AND score == '0.1'")
        let headlines = try context.performAndWait { try context.fetch(request).map { $0["headline"] as? String } }
        #expect(headlines == ["entry 2"])
    }
}
