import Foundation
import SwellPostgres
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// The bundled pipelines against a PostgreSQL store give the same exports, byte for
/// byte, as against SQLite (PostgreSQL store guarantees 12), on a server the suite starts.
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

/// One writing run per source, not per store (PostgreSQL store guarantees 7, 13): a held source
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

    /// A session holding `source` as another runner on host `otherhost`, pid 4242 would:
    /// an advisory lock, or with the lock-table fallback a row lock on `swell_holds`.
    private func holdAsAnotherRunner(_ server: PostgresServer, schema: String, source: String, table: Bool) throws -> PostgresConnection {
        let connection = try PostgresConnection(server.url() + "?application_name=swell%20otherhost%204242")
        if table {
            try connection.query("BEGIN")
            try connection.query("SELECT 1 FROM \(schema).swell_holds WHERE source = '\(source)' FOR UPDATE")
            let writer = try PostgresConnection(server.url())
            defer { writer.close() }
            try writer.query("""
                INSERT INTO \(schema).swell_hold_holders VALUES ('\(source)', 'otherhost', '4242', '2026-11-24T00:00:00Z')
                ON CONFLICT (source) DO UPDATE SET host = excluded.host, pid = excluded.pid, since = excluded.since
                """)
        } else {
            try connection.query("SELECT pg_advisory_lock(hashtext('swell:\(schema)'), hashtext('\(source)'))")
        }
        return connection
    }

    /// Advisory locks (PostgreSQL), and the lock-table fallback forced with `locks=table`.
    @Test(arguments: [false, true])
    func aHeldSourceExits75NamingItsHolderWaitQueuesAndOtherSourcesRun(table: Bool) throws {
        let server = try PostgresServer.shared.get()
        let schema = "holds_\(UUID().uuidString.prefix(8).lowercased())"
        let store = server.url() + "?schema=" + schema + (table ? "&locks=table" : "")
        let workspace = try Workspace()
        try workspace.write("holds.yml", Self.pipeline)
        try workspace.write("data/first.json", #"{"data": [{"id": 1, "title": "one"}]}"#)
        try workspace.write("data/second.json", #"{"data": [{"id": 2, "title": "two"}]}"#)
        #expect(try workspace.run("import", "holds.yml", "--store", store).status == 0)

        let holder = try holdAsAnotherRunner(server, schema: schema, source: "first", table: table)
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

/// The server stopped mid-run (PostgreSQL store guarantees, exit codes): 74 naming host, port and
/// database, no password anywhere; a rerun after the restart completes.
@Suite struct PostgresServerLossTests {
    @Test func aServerStoppedMidRunExits74AndARerunAfterRestartCompletes() throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let secret = "pw-\(UUID().uuidString.prefix(8))"
        let pageTwoAsked = DispatchSemaphore(value: 0)
        let serverDown = DispatchSemaphore(value: 0)
        let http = try LoopbackHTTPServer { request in
            if request.path.hasPrefix("/p2") {
                pageTwoAsked.signal()
                serverDown.wait()
                return .json(#"{"data": [{"id": 3, "title": "three"}], "next": null}"#)
            }
            return .json(#"{"data": [{"id": 1, "title": "one"}, {"id": 2, "title": "two"}], "next": "/p2"}"#)
        }
        defer { http.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "\(http.baseURL)/p1", sourceExtra: "    paginate: { next: next }\n"))
        let store = "postgresql://\(server.user):${PGPASS_VAR}@127.0.0.1:\(server.port)/postgres?schema=loss"
        let environment = ["PGPASS_VAR": secret]
        let running = try RunningSwell(["import", "items.yml", "--store", store, "--batch-size", "1", "--report", "out/report.json",
                                        "--log-level", "trace"], in: workspace.url, environment: environment)
        #expect(pageTwoAsked.wait(timeout: .now() + 60) == .success)
        try server.crash()
        serverDown.signal()
        running.finish()
        #expect(running.process.terminationStatus == 74, "\(running.stderr)")
        #expect(running.stderr.contains("127.0.0.1:\(server.port)/postgres"), "\(running.stderr)")
        let report = try workspace.read("out/report.json")
        #expect(!(running.stderr + report).contains(secret))

        try server.start()
        serverDown.signal()   // the rerun's page 2 need not wait
        let rerun = try workspace.run("import", "items.yml", "--store", store, environment: environment)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let connection = try PostgresConnection(server.url())
        defer { connection.close() }
        #expect(try connection.query("SELECT id FROM loss.\"Item\" ORDER BY id") == [[.integer(1)], [.integer(2)], [.integer(3)]])
    }
}
