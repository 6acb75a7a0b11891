import Foundation
import SwellPostgres
import SwellTestSupport
import Testing

/// The bundled pipelines against a PostgreSQL store give the same exports, byte for
/// byte, as against SQLite (postgres-store.md 12), on a server the suite starts.
@Suite struct PostgresPipelineTests {
    private func postgresStore() throws -> String {
        let server = try PostgresServer.shared.get()
        return server.url() + "?schema=e2e_\(UUID().uuidString.prefix(8).lowercased())"
    }

    @Test(arguments: [
        ("pipelines/surf-journal.yml", ["out/surf-journal.csv.gz", "out/surf-journal-good-days.csv"]),
        ("pipelines/orders.yml", ["out/order-lines.csv", "out/orders.csv"]),
        ("pipelines/users-snapshot.yml", ["out/users.csv"]),
    ])
    func theBundledPipelinesExportTheSameBytesFromBothStores(pipeline: String, exports: [String]) throws {
        let sqlite = try Workspace()
        let postgres = try Workspace()
        let store = try postgresStore()
        let onSQLite = try sqlite.run("run", pipeline, "--report", "out/report.json")
        #expect(onSQLite.status == 0, "\(onSQLite.stderr)")
        let onPostgres = try postgres.run("run", pipeline, "--store", store, "--report", "out/report.json")
        #expect(onPostgres.status == 0, "\(onPostgres.stderr)")
        for export in exports {
            let expected = try Data(contentsOf: sqlite.url.appendingPathComponent(export))
            let actual = try Data(contentsOf: postgres.url.appendingPathComponent(export))
            #expect(!expected.isEmpty)
            #expect(actual == expected, "\(pipeline): \(export) differs")
        }
        // A second run over the same data changes nothing and exports the same again.
        let again = try postgres.run("run", pipeline, "--store", store, "--report", "out/again.json")
        #expect(again.status == 0, "\(again.stderr)")
        for export in exports {
            #expect(try Data(contentsOf: postgres.url.appendingPathComponent(export)) == Data(contentsOf: sqlite.url.appendingPathComponent(export)))
        }
        let status = try postgres.run("status", pipeline, "--store", store)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("succeeded"), "\(status.stdout)")
    }
}

/// One writing run per source, not per store (postgres-store.md 7, 13): a held source
/// exits 75 naming its holder's host and pid, `--wait` queues, other sources run.
@Suite struct PostgresSourceHoldTests {
    static let pipeline = """
        version: 1
        name: holds
        entities:
          Item:
            key: [id]
            attributes: { id: integer, title: string? }
        sources:
          - { name: first, entity: Item, url: data/first.json, records: data }
          - { name: second, entity: Item, url: data/second.json, records: data }
        exports:
          - { name: items, entity: Item, path: out/items.csv, columns: [id, title] }
        """

    /// A session holding `source` as another runner on host `otherhost`, pid 4242 would.
    private func holdAsAnotherRunner(_ server: PostgresServer, schema: String, source: String) throws -> PostgresConnection {
        let connection = try PostgresConnection(server.url() + "?application_name=swell%20otherhost%204242")
        try connection.query("SELECT pg_advisory_lock(hashtext('swell:\(schema)'), hashtext('\(source)'))")
        return connection
    }

    @Test func aHeldSourceExits75NamingItsHolderWaitQueuesAndOtherSourcesRun() throws {
        let server = try PostgresServer.shared.get()
        let schema = "holds_\(UUID().uuidString.prefix(8).lowercased())"
        let store = server.url() + "?schema=" + schema
        let workspace = try Workspace()
        try workspace.write("holds.yml", Self.pipeline)
        try workspace.write("data/first.json", #"{"data": [{"id": 1, "title": "one"}]}"#)
        try workspace.write("data/second.json", #"{"data": [{"id": 2, "title": "two"}]}"#)
        #expect(try workspace.run("import", "holds.yml", "--store", store).status == 0)

        let holder = try holdAsAnotherRunner(server, schema: schema, source: "first")
        let refused = try workspace.run("import", "holds.yml", "--store", store)
        #expect(refused.status == 75, "\(refused.stderr)")
        #expect(refused.stderr.contains("source first is being run by another runner (host otherhost, pid 4242"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--wait"))
        let other = try workspace.run("import", "holds.yml", "--store", store, "--only", "second")
        #expect(other.status == 0, "\(other.stderr)")
        let status = try workspace.run("status", "holds.yml", "--store", store)
        #expect(status.stdout.contains("running first: host otherhost, pid 4242, since "), "\(status.stdout)")

        let waiting = try RunningSwell(["import", "holds.yml", "--store", store, "--wait"], in: workspace.url)
        #expect(waiting.waitForStderr("waiting for the runner that holds the source"))
        holder.close()
        waiting.finish()
        #expect(waiting.process.terminationStatus == 0, "\(waiting.stderr)")
        let after = try workspace.run("status", "holds.yml", "--store", store)
        #expect(!after.stdout.contains("running first"), "\(after.stdout)")
    }
}
