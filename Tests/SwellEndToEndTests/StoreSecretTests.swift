import Foundation
@testable import SwellPipeline
import Testing
import SwellPipelineTestSupport

/// A store location built from the environment is a secret wherever it is shown:
/// the report's `store`, `swell status`, `seed`, errors and logs at trace level
/// (issue 11, item 6). Also the password of a PostgreSQL URL, wherever it came from.
@Suite struct StoreSecretTests {
    static let secretDirectory = "team-7c1e9b2a"

    static func pipeline(store: String) -> String {
        """
        version: 1
        name: items
        store: \(store)
        entities:
          Item:
            key: [id]
            attributes:
              id: integer
              title: string?
        sources:
          - name: items
            entity: Item
            url: fixtures/items.json
            records: data
        exports:
          - name: items-csv
            entity: Item
            path: out/items.csv
            columns: [id, title]
        """
    }

    private func workspace(store: String = ".swell/${SECRET_DIR}.sqlite") throws -> Workspace {
        let workspace = try Workspace()
        try workspace.write("items.yml", Self.pipeline(store: store))
        try workspace.write("fixtures/items.json", #"{"data": [{"id": 1, "title": "one"}, {"id": 2, "title": "two"}]}"#)
        return workspace
    }

    private let environment = ["SECRET_DIR": secretDirectory]

    @Test func theReportStatusAndTraceLogsShowTheStoreWithItsSecretHidden() throws {
        let workspace = try workspace()
        let run = try workspace.run("run", "items.yml", "--report", "out/report.json", "--log-level", "trace", environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: workspace.path(".swell/\(Self.secretDirectory).sqlite")))
        let report = try workspace.read("out/report.json")
        #expect(try workspace.report()["store"] as? String == ".swell/***.sqlite", "\(report)")
        let status = try workspace.run("status", "items.yml", environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("store .swell/***.sqlite"), "\(status.stdout)")
        for text in [run.stdout, run.stderr, report, status.stdout, status.stderr] {
            #expect(!text.contains(Self.secretDirectory), "\(text)")
        }
    }

    @Test func errorsAboutTheStoreHideItsSecret() throws {
        // An export with no store yet, a store that cannot be opened, a held lock, a seed.
        let workspace = try workspace()
        let noStore = try workspace.run("export", "items.yml", "--log-level", "trace", environment: environment)
        #expect(noStore.status == 74)
        #expect(noStore.stderr.contains("no store at .swell/***.sqlite"), "\(noStore.stderr)")

        try workspace.write("blocked/file", "not a folder")
        try workspace.write("bad.yml", Self.pipeline(store: "blocked/file/${SECRET_DIR}.sqlite"))
        let unopenable = try workspace.run("import", "bad.yml", "--report", "out/bad.json", "--log-level", "trace", environment: environment)
        #expect(unopenable.status == 74, "\(unopenable.stderr)")

        let imported = try workspace.run("import", "items.yml", environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let lockPath = workspace.path(".swell/\(Self.secretDirectory).sqlite.lock")
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let held = try workspace.run("import", "items.yml", "--log-level", "trace", environment: environment)
        let seedHeld = try workspace.run("seed", "items.yml", "--from", "missing.sqlite", "--force", environment: environment)
        flock(descriptor, LOCK_UN)
        close(descriptor)
        #expect(held.status == 75)
        #expect(held.stderr.contains("holds the store .swell/***.sqlite"), "\(held.stderr)")
        #expect(seedHeld.status == 75)

        try FileManager.default.copyItem(atPath: workspace.path(".swell/\(Self.secretDirectory).sqlite"), toPath: workspace.path("seed.sqlite"))
        let seeded = try workspace.run("seed", "items.yml", "--from", "seed.sqlite",
                                       "--store", "copy/${SECRET_DIR}.sqlite", environment: environment)
        let badSeed = try workspace.run("seed", "items.yml", "--from", "missing.sqlite", "--force", environment: environment)
        #expect(seeded.status == 0, "\(seeded.stderr)")
        #expect(seeded.stdout.contains("seeded copy/${SECRET_DIR}.sqlite"), "\(seeded.stdout)")
        #expect(badSeed.status == 74)
        for outcome in [noStore, unopenable, held, seedHeld, seeded, badSeed] {
            #expect(!(outcome.stdout + outcome.stderr).contains(Self.secretDirectory), "\(outcome.stdout)\(outcome.stderr)")
        }
        #expect(!(try workspace.read("out/bad.json")).contains(Self.secretDirectory))
    }

    @Test func aPostgreSQLStoreIsNotSeeded() throws {
        let workspace = try workspace(store: "postgres://swell:${PGPASS_VAR}@127.0.0.1:1/swell")
        let seed = try workspace.run("seed", "items.yml", "--from", "x.sqlite", environment: ["PGPASS_VAR": "pw-5d4c3b2a"])
        #expect(seed.status == 64)
        #expect(seed.stderr.contains("postgres://swell:***@127.0.0.1:1/swell"), "\(seed.stderr)")
        #expect(!(seed.stdout + seed.stderr).contains("pw-5d4c3b2a"))
    }

    @Test(arguments: [
        ("postgres://app:hunter2@db.example:5432/swell", "postgres://app:***@db.example:5432/swell"),
        ("postgresql://app:p@ss@db/swell?sslmode=require", "postgresql://app:***@db/swell?sslmode=require"),
        ("postgres://db/swell?user=app&password=hunter2&sslmode=require", "postgres://db/swell?user=app&password=***&sslmode=require"),
        ("host=db user=app password=hunter2 dbname=swell", "host=db user=app password=*** dbname=swell"),
        ("cannot open the store postgres://app:hunter2@db/swell: refused", "cannot open the store postgres://app:***@db/swell: refused"),
        ("postgres://app@db/swell", "postgres://app@db/swell"),
        ("https://example.com/a?page=2", "https://example.com/a?page=2"),
    ])
    func urlPasswordsAreHiddenWhereverTheyCameFrom(text: String, shown: String) {
        #expect(Redactor(secrets: [])(text) == shown)
        #expect(StoreLocation(text, redactor: Redactor(secrets: [])).description == shown)
    }
}

/// A PostgreSQL store URL in a pipeline opens the PostgreSQL store (no lock file, no SQLite
/// file named after the URL); a server that cannot be reached exits 74, password hidden.
@Suite struct PostgresURLRoutingTests {
    @Test func aPostgresStoreURLIsNotTakenForAFilePath() throws {
        let workspace = try Workspace()
        try workspace.write("items.yml", StoreSecretTests.pipeline(store: "postgres://swell:${PGPASS_VAR}@127.0.0.1:1/swell"))
        try workspace.write("fixtures/items.json", #"{"data": [{"id": 1, "title": "one"}]}"#)
        let run = try workspace.run("import", "items.yml", "--report", "out/report.json", "--log-level", "trace",
                                    environment: ["PGPASS_VAR": "pw-1a2b3c4d"])
        #expect(run.status == 74, "\(run.stderr)")
        #expect(run.stderr.contains("postgres://swell:***@127.0.0.1:1/swell"), "\(run.stderr)")
        #expect(!(run.stdout + run.stderr + (try workspace.read("out/report.json"))).contains("pw-1a2b3c4d"))
        let made = try FileManager.default.contentsOfDirectory(atPath: workspace.url.path)
        #expect(!made.contains { $0.hasPrefix("postgres") }, "\(made)")
    }
}
