import Foundation
import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// The PostgreSQL store against a real server the suite starts (PostgreSQL store guarantees
/// 1–6). The store suite (`SwellStoreTests`) also runs whole against it
/// (`.onEveryStore`); these are what only a server shows.
@Suite struct PostgresStoreTests {
    private static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Spot", attributes: [AttributeDescription(name: "name", type: .string)],
                          relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "spot")],
                          uniquenessConstraint: ["name"]),
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "title", type: .string, isOptional: true),
            AttributeDescription(name: "score", type: .double, isOptional: true),
            AttributeDescription(name: "good", type: .boolean, isOptional: true),
            AttributeDescription(name: "when", type: .date, isOptional: true),
            AttributeDescription(name: "extra", type: .json, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "entries"),
        ], uniquenessConstraint: ["id"]),
        EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
                          relationships: [RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "tags")],
                          uniquenessConstraint: ["label"]),
    ])

    /// A fresh schema on the suite's server.
    private func storeURL() throws -> (url: URL, schema: String, server: PostgresServer) {
        let server = try PostgresServer.shared.get()
        let schema = "s_\(UUID().uuidString.prefix(8).lowercased())"
        return (URL(string: server.url() + "?schema=" + schema)!, schema, server)
    }

    private func container(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "pg", managedObjectModel: Self.model, storeURL: url)
        try container.loadPersistentStores()
        return container
    }

    /// Saves what `body` makes through the whole stack: worker → view context → writer → database.
    private func save(_ container: PersistentContainer, _ body: @escaping (ManagedObjectContext) throws -> Void) async throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try body(context)
            try context.save()
        }
        try await container.saveToDisk()
    }

    private func psql(_ server: PostgresServer, _ sql: String) throws -> [[StoreValue]] {
        let connection = try PostgresConnection(server.url())
        defer { connection.close() }
        return try connection.query(sql)
    }

    @Test func tablesAreNamedAfterEntitiesWithTypedColumnsKeysAndForeignKeys() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        try await save(stack) { context in
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = "Mavericks"
            let tag = context.insertNewObject(forEntityName: "Tag")
            tag["label"] = "big"
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry["title"] = "huge"
            entry["score"] = 9.5
            entry["good"] = true
            entry["when"] = Date(timeIntervalSince1970: 1_700_000_000)
            entry["extra"] = #"{"swell":[1,2]}"#
            entry.setValue(spot, forKey: "spot")
            entry.setValue(Set([tag]), forKey: "tags")
        }
        let columns = try psql(server, """
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = '\(schema)' AND table_name = 'Entry' ORDER BY ordinal_position
            """)
        #expect(columns == [
            [.text("_pk"), .text("bigint")], [.text("id"), .text("bigint")], [.text("title"), .text("text")],
            [.text("score"), .text("double precision")], [.text("good"), .text("boolean")],
            [.text("when"), .text("timestamp with time zone")], [.text("extra"), .text("json")], [.text("spot"), .text("bigint")],
        ])
        // Readable as what they are, by any client.
        let row = try psql(server, """
            SELECT e.id, e.good, to_char(e."when" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), e.extra::text, s.name, t.label
            FROM "\(schema)"."Entry" e JOIN "\(schema)"."Spot" s ON e.spot = s._pk
            JOIN "\(schema)"."Entry_tags" j ON j."Entry" = e._pk JOIN "\(schema)"."Tag" t ON t._pk = j.tags
            """)
        #expect(row == [[.integer(1), .integer(1), .text("2023-11-14 22:13"), .text(#"{"swell":[1,2]}"#), .text("Mavericks"), .text("big")]])
        let constraints = try psql(server, """
            SELECT contype::text FROM pg_constraint WHERE conrelid = '"\(schema)"."Entry"'::regclass ORDER BY contype
            """)
        #expect(constraints == [[.text("f")], [.text("p")], [.text("u")]])
        // A fresh stack reads every type back as it was saved.
        let again = try container(url).newBackgroundContext()
        try again.performAndWait {
            let entry = try again.fetch(FetchRequest(entityName: "Entry")).first!
            #expect(entry["score"] as? Double == 9.5)
            #expect(entry["good"] as? Bool == true)
            #expect(entry["when"] as? Date == Date(timeIntervalSince1970: 1_700_000_000))
            #expect(entry["extra"] as? String == #"{"swell":[1,2]}"#)
            #expect((entry.value(forKey: "spot") as? ManagedObject)?["name"] as? String == "Mavericks")
        }
    }

    @Test func aRowThatArrivesUnchangedIsNotRewritten() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        stack.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        stack.writerContext.mergePolicy = .mergeByPropertyObjectTrump
        func upsert(_ title: String) async throws {
            try await save(stack) { context in
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = 7
                entry["title"] = title
            }
        }
        func version() throws -> [[StoreValue]] { try psql(server, "SELECT xmin::text FROM \"\(schema)\".\"Entry\" WHERE id = 7") }
        try await upsert("same")
        let first = try version()
        #expect(first.count == 1)
        try await upsert("same")
        #expect(try version() == first)   // no new row version
        try await upsert("changed")
        #expect(try version() != first)
        #expect(try psql(server, "SELECT title FROM \"\(schema)\".\"Entry\"") == [[.text("changed")]])
    }

    @Test func idsStayUniqueAcrossRunnersWritingAtOnce() async throws {
        let (url, schema, server) = try storeURL()
        _ = try container(url)   // the schema exists before the runners start
        try await withThrowingTaskGroup(of: Void.self) { group in
            for runner in 0..<3 {
                group.addTask {
                    let stack = try container(url)
                    try await save(stack) { context in
                        for n in 0..<200 {
                            let entry = context.insertNewObject(forEntityName: "Entry")
                            entry["id"] = runner * 1000 + n
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try psql(server, "SELECT count(*), count(DISTINCT _pk) FROM \"\(schema)\".\"Entry\"") == [[.integer(600), .integer(600)]])
    }

    /// An INSERT that neither wrote its row nor met a row holding its key (here a trigger
    /// skips the row) fails the save: the row is never dropped without a word.
    @Test func aNewRowTheDatabaseNeitherWroteNorMatchedFailsTheSave() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        _ = try psql(server, #"CREATE FUNCTION "\#(schema)".skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$"#)
        _ = try psql(server, #"CREATE TRIGGER skip BEFORE INSERT ON "\#(schema)"."Entry" FOR EACH ROW EXECUTE FUNCTION "\#(schema)".skip_row()"#)
        for policy in [MergePolicy.error, .mergeByPropertyObjectTrump] {
            stack.viewContext.mergePolicy = policy
            stack.writerContext.mergePolicy = policy
            let error = await #expect(throws: StoreError.self, "\(policy)") {
                try await save(stack) { context in
                    let entry = context.insertNewObject(forEntityName: "Entry")
                    entry["id"] = 7
                    entry["title"] = "skipped"
                }
            }
            guard let error, error.kind == .unexpectedAnswer else {
                Issue.record("expected unexpectedAnswer, got \(String(describing: error))")
                continue
            }
            let reason = error.description
            #expect(reason.contains("Entry") && reason.contains("id=7"), "\(reason)")
            await stack.writerContext.perform { stack.writerContext.rollback() }
        }
        #expect(try psql(server, "SELECT count(*) FROM \"\(schema)\".\"Entry\"") == [[.integer(0)]])
    }

    @Test func twoRunnersMigratingAtOnceBothOpenTheStore() async throws {
        let (url, schema, server) = try storeURL()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = try container(url) } }
            try await group.waitForAll()
        }
        #expect(try psql(server, "SELECT count(*) FROM information_schema.tables WHERE table_schema = '\(schema)' AND table_name IN ('Entry', 'Spot', 'Tag', 'Entry_tags')")
            == [[.integer(4)]])
    }

    @Test func aTextWithANulCharacterIsRefusedNotCutShortAndNothingIsSaved() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        let error = await #expect(throws: StoreError.self) {
            try await save(stack) { context in
                let first = context.insertNewObject(forEntityName: "Entry")
                first["id"] = 1
                let tag = context.insertNewObject(forEntityName: "Tag")
                tag["label"] = "nul\u{0}here"
            }
        }
        guard let error, error.kind == .statementRefused, error.sqlState == "22021" else {
            Issue.record("expected a refused statement (22021), got \(String(describing: error))")
            return
        }
        #expect(try psql(server, "SELECT count(*) FROM \"\(schema)\".\"Entry\"") == [[.integer(0)]])
    }

    @Test func anUnreachableServerNamesHostPortDatabaseAndUserButNotThePassword() throws {
        let port = try LoopbackHTTPServer.closedPort()
        let container = PersistentContainer(name: "pg", managedObjectModel: Self.model,
                                            storeURL: URL(string: "postgresql://app:hunter2-secret@127.0.0.1:\(port)/warehouse")!)
        do {
            try container.loadPersistentStores()
            Issue.record("connected to a closed port")
        } catch {
            if case StoreError.Kind.serverUnreachable = error {} else { Issue.record("expected unreachable, got \(error)") }
            let text = "\(error)"
            #expect(text.contains("app@127.0.0.1:\(port)/warehouse"), "\(text)")
            #expect(!text.contains("hunter2"), "\(text)")
        }
    }

    @Test func aBatchOfNewObjectsGoesInOneCopyWithEveryValueIntactAndMeetingKeysMerged() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        stack.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        stack.writerContext.mergePolicy = .mergeByPropertyObjectTrump
        try await save(stack) { context in
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 250
            entry["title"] = "stored first"
            entry["score"] = 1.0
        }
        let awkward = ["tab\there", "line\nbreak", "back\\slash", "cr\rhere", "\\N", "Ünïcødé 東京 😀", ""]
        try await save(stack) { context in
            for n in 0..<500 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = n
                entry["title"] = n == 250 ? "merged" : awkward[n % awkward.count]
                entry["good"] = n % 2 == 0
                entry["when"] = Date(timeIntervalSince1970: 1_700_000_000 + Double(n) / 4)
                if n % 3 == 0 { entry["extra"] = #"{"n":\#(n)}"# }
            }
        }
        #expect(try psql(server, "SELECT count(*), count(DISTINCT _pk) FROM \"\(schema)\".\"Entry\"") == [[.integer(500), .integer(500)]])
        // The stored row met the batch's key 250: merged by the policy (title from the batch, score kept).
        #expect(try psql(server, "SELECT title, score FROM \"\(schema)\".\"Entry\" WHERE id = 250") == [[.text("merged"), .real(1.0)]])
        let reader = try container(url).newBackgroundContext()
        try reader.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id", ascending: true)]
            let entries = try reader.fetch(request)
            for entry in entries where entry["id"] as? Int != 250 {
                let n = entry["id"] as! Int
                #expect(entry["title"] as? String == awkward[n % awkward.count], "\(n)")
                #expect(entry["good"] as? Bool == (n % 2 == 0))
                #expect(entry["when"] as? Date == Date(timeIntervalSince1970: 1_700_000_000 + Double(n) / 4))
                #expect(entry["extra"] as? String == (n % 3 == 0 ? #"{"n":\#(n)}"# : nil))
            }
        }
    }

    /// New objects whose keys meet nothing go straight into the table in COPY's binary form:
    /// each value is the one the text path's casts make (`to_timestamp` for dates, rounded as
    /// PostgreSQL rounds), compared on the server.
    @Test func newObjectsGoStraightIntoTheTableWithTheValuesTheCastsWouldMake() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        let dates = [1_700_000_000.123456789, -1_500_000_000.0000005, 0.0000005, 0.0000015, 100_000_000_000.25,
                     -62_135_596_800, 253_402_300_799.999999, 1_234.5678915]
        let scores = [0.1, -0.0, 1e-300, 1.7976931348623157e308, -42, 1.0 / 3.0]
        let count = 400
        try await save(stack) { context in
            for n in 0..<count {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = n
                entry["title"] = n % 11 == 0 ? nil : "t\\'\"\t\(n)"
                entry["score"] = n % 7 == 0 ? nil : scores[n % scores.count]
                entry["good"] = n % 5 == 0 ? nil : n % 2 == 0
                entry["when"] = Date(timeIntervalSince1970: dates[n % dates.count] + Double(n % 3) / 7)
                entry["extra"] = n % 3 == 0 ? #"{"n": [\#(n), "x"]}"# : nil
            }
        }
        let expected = (0..<count).map { n -> String in
            let title = n % 11 == 0 ? "NULL" : "E't\\\\''\"\\t\(n)'"
            let score = n % 7 == 0 ? "NULL" : "'\(scores[n % scores.count])'::float8"
            let good = n % 5 == 0 ? "NULL" : (n % 2 == 0 ? "TRUE" : "FALSE")
            let extra = n % 3 == 0 ? "'{\"n\": [\(n), \"x\"]}'" : "NULL"
            return "(\(n), \(title), \(score), \(good), to_timestamp('\(dates[n % dates.count] + Double(n % 3) / 7)'::float8), \(extra))"
        }
        let differing = try psql(server, """
            SELECT e.id FROM "\(schema)"."Entry" e JOIN (VALUES \(expected.joined(separator: ", "))) AS v(id, title, score, good, "when", extra)
            ON e.id = v.id
            WHERE (e.title, e.score, e.good, e."when", e.extra::text) IS DISTINCT FROM (v.title, v.score, v.good, v."when", v.extra)
            """)
        #expect(differing == [])
        #expect(try psql(server, "SELECT count(*) FROM \"\(schema)\".\"Entry\"") == [[.integer(Int64(count))]])
    }

    @Test func aBatchOfUpdatesSetsEachRowsOwnAttributesAndLeavesUnchangedRowsAlone() async throws {
        let (url, schema, server) = try storeURL()
        let stack = try container(url)
        try await save(stack) { context in
            for n in 0..<200 {
                let entry = context.insertNewObject(forEntityName: "Entry")
                entry["id"] = n
                entry["title"] = "t\(n)"
                entry["score"] = Double(n)
                entry["good"] = false
            }
        }
        let before = try psql(server, "SELECT id, xmin::text FROM \"\(schema)\".\"Entry\" ORDER BY id")
        try await save(stack) { context in
            for entry in try context.fetch(FetchRequest(entityName: "Entry")) {
                let n = entry["id"] as! Int
                switch n % 4 {
                case 0: entry["title"] = "new\tt\(n)"                      // one attribute
                case 1: entry["score"] = nil; entry["good"] = true            // two others, one to nil
                case 2: entry["when"] = Date(timeIntervalSince1970: Double(n))
                default: entry["title"] = "t\(n)"                            // set to the value it has
                }
            }
        }
        let rows = try psql(server, "SELECT id, title, score, good, extract(epoch from \"when\")::float8, xmin::text FROM \"\(schema)\".\"Entry\" ORDER BY id")
        #expect(rows.count == 200)
        for (row, old) in zip(rows, before) {
            guard case .integer(let id) = row[0] else { Issue.record("\(row)"); continue }
            let n = Int(id)
            switch n % 4 {
            case 0: #expect(Array(row[1...4]) == [.text("new\tt\(n)"), .real(Double(n)), .integer(0), .null])
            case 1: #expect(Array(row[1...4]) == [.text("t\(n)"), .null, .integer(1), .null])
            case 2: #expect(Array(row[1...4]) == [.text("t\(n)"), .real(Double(n)), .integer(0), .real(Double(n))])
            default:
                #expect(Array(row[1...4]) == [.text("t\(n)"), .real(Double(n)), .integer(0), .null])
                #expect(row[5] == old[1], "row \(n) was rewritten")
            }
        }
    }

    @Test func withoutASchemaParameterTheConnectionsSearchPathPicksTheSchema() async throws {
        let server = try PostgresServer.shared.get()
        let schema = "opt_\(UUID().uuidString.prefix(8).lowercased())"
        _ = try psql(server, "CREATE SCHEMA \(schema)")
        let url = URL(string: server.url() + "?options=-csearch_path%3D\(schema)")!
        let stack = try container(url)
        try await save(stack) { context in
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
        }
        #expect(try psql(server, "SELECT count(*) FROM \(schema).\"Entry\"") == [[.integer(1)]])
    }
}
