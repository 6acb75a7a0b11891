import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A PostgreSQL password from `${PGPASS_VAR}` (issue 11, item 5; Command line reference: nothing secret is
/// printed): a server that checks it (SCRAM), every command at every log level, the run
/// report, and the refused login of a wrong one — the password appears in none of them.
@Suite struct PostgresPasswordTests {
    @Test func aPasswordFromTheEnvironmentIsUsedAndNeverPrintedAtAnyLogLevel() throws {
        let secret = "pw-\(UUID().uuidString.prefix(12))"
        let server = try PostgresServer(password: secret)
        defer { server.stop() }
        let workspace = try Workspace()
        let store = "postgresql://\(server.user):${PGPASS_VAR}@127.0.0.1:\(server.port)/postgres?schema=secrets"
        try workspace.write("items.yml", StoreSecretTests.pipeline(store: store))
        try workspace.write("fixtures/items.json", #"{"data": [{"id": 1, "title": "one"}, {"id": 2, "title": "two"}]}"#)
        let environment = ["PGPASS_VAR": secret]

        var seen: [String] = []
        for level in ["trace", "debug", "info", "notice", "warning", "error"] {
            let run = try workspace.run("run", "items.yml", "--report", "out/report-\(level).json", "--log-level", level, environment: environment)
            #expect(run.status == 0, "\(level): \(run.stderr)")
            seen += [run.stdout, run.stderr, try workspace.read("out/report-\(level).json")]
        }
        #expect(try workspace.read("out/items.csv") == "id,title\n1,one\n2,two\n")
        // validate and status have no log level.
        for command in [["validate", "items.yml"], ["status", "items.yml"], ["export", "items.yml", "--log-level", "trace"],
                        ["import", "items.yml", "--log-level", "trace"]] {
            let run = try workspace.run(command, environment: environment)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            seen += [run.stdout, run.stderr]
        }
        // The report names the store with the password hidden.
        #expect(try workspace.read("out/report-trace.json").contains("postgresql://swell:***@127.0.0.1:\(server.port)/postgres"))

        // A wrong password: the login is refused (74), the message names the endpoint, no password in it.
        let wrong = "wrong-\(UUID().uuidString.prefix(12))"
        let refused = try workspace.run(["import", "items.yml", "--log-level", "trace"], environment: ["PGPASS_VAR": wrong])
        #expect(refused.status == 74, "\(refused.stderr)")
        #expect(refused.stderr.contains("127.0.0.1:\(server.port)/postgres"), "\(refused.stderr)")
        #expect(refused.stderr.contains("password authentication failed"), "\(refused.stderr)")
        seen += [refused.stdout, refused.stderr]

        for text in seen {
            #expect(!text.contains(secret) && !text.contains(wrong), "\(text)")
        }
    }
}
