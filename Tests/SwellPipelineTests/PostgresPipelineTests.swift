import Foundation
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
