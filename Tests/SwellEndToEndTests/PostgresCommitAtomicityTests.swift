import Foundation
import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A root save is one PostgreSQL transaction, all or nothing, also when the process dies
/// mid-commit (PostgreSQL store guarantees 1): a runner's commit is held up on the server (the test
/// holds a row lock it needs) and the runner is killed with SIGKILL while it waits; none
/// of that commit is ever seen, everything committed before stays.
@Suite struct PostgresCommitAtomicityTests {
    @Test func aRunnerKilledMidCommitLeavesNothingOfThatCommit() throws {
        let server = try PostgresServer.shared.get()
        let schema = "atomic_\(UUID().uuidString.prefix(8).lowercased())"
        let store = server.url() + "?schema=" + schema
        let workspace = try Workspace()
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json"))
        try workspace.write("data/items.json", EndToEndTests.page(1...3))
        let first = try workspace.run("import", "items.yml", "--store", store)
        #expect(first.status == 0, "\(first.stderr)")

        // The next run (one worker: one save) brings items 4…6 and changes item 1: the commit inserts the
        // new rows, then waits on the lock of row 1.
        try workspace.write("data/items.json", #"{"data": [{"id": 4, "title": "item 4"}, {"id": 5, "title": "item 5"},"#
                            + #" {"id": 6, "title": "item 6"}, {"id": 1, "title": "changed", "score": 9}]}"#)
        let blocker = try PostgresConnection(server.url())
        defer { blocker.close() }
        try blocker.query("BEGIN")
        try blocker.query("SELECT 1 FROM \"\(schema)\".\"Item\" WHERE id = 1 FOR UPDATE")
        let blockerPID = try #require(blocker.query("SELECT pg_backend_pid()").first?.first)
        let runner = try RunningSwell(["import", "items.yml", "--store", store, "--workers", "1", "--batch-size", "1000"], in: workspace.url)
        let waiting = try Self.sessionWaiting(on: blockerPID, server)
        #expect(waiting != nil, "the runner's commit never waited on the row lock")
        // The commit has written row 4 in its transaction: another session inserting key 4 waits for it.
        let prober = try PostgresConnection(server.url())
        defer { prober.close() }
        try prober.query("BEGIN")
        try prober.query("SET LOCAL lock_timeout = '200ms'")
        #expect(throws: PostgresError.statementFailed(sqlState: "55P03", message: "canceling statement due to lock timeout",
                                                       sql: "INSERT INTO \"\(schema)\".\"Item\" (\"_pk\", id) VALUES (-1, 4)")) {
            try prober.query("INSERT INTO \"\(schema)\".\"Item\" (\"_pk\", id) VALUES (-1, 4)")
        }
        try prober.query("ROLLBACK")
        runner.kill()
        #expect(runner.finish(within: 30))
        try blocker.query("ROLLBACK")
        // The killed runner's session ends (the server notices the closed socket), its transaction rolled back.
        if let waiting { #expect(try Self.sessionEnds(waiting, server), "the killed runner's session stayed") }

        let rows = try blocker.query("SELECT id, title FROM \"\(schema)\".\"Item\" ORDER BY id")
        #expect(rows == [[.integer(1), .text("item 1")], [.integer(2), .text("item 2")], [.integer(3), .text("item 3")]])
        let rerun = try workspace.run("import", "items.yml", "--store", store)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try blocker.query("SELECT count(*), min(title) FROM \"\(schema)\".\"Item\" WHERE id = 1 OR id > 3")
                == [[.integer(4), .text("changed")]])
    }

    /// The pid of a session waiting on a lock `blocker` holds, within 30 s.
    private static func sessionWaiting(on blocker: StoreValue, _ server: PostgresServer) throws -> StoreValue? {
        let watcher = try PostgresConnection(server.url())
        defer { watcher.close() }
        var pid: StoreValue?
        _ = try eventually(within: 30) {
            pid = try watcher.query("SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [blocker]).first?.first
            return pid != nil
        }
        return pid
    }

    /// Whether the session `pid` is gone within 30 s.
    private static func sessionEnds(_ pid: StoreValue, _ server: PostgresServer) throws -> Bool {
        let watcher = try PostgresConnection(server.url())
        defer { watcher.close() }
        return try eventually(within: 30) {
            try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int", [pid]).first?.first == .integer(0)
        }
    }
}
