import Foundation
import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Runners on hosts of their own sharing one PostgreSQL server on a host of its own
/// (PostgreSQL store guarantees 7, 9, 10): three runners, each in a network namespace, the server
/// in a fourth, this process (and its HTTP server) linked to them by a bridge. Where the
/// machine refuses namespaces, the runners are three processes on loopback and what
/// needs a link to cut is skipped, saying why.
@Suite(.serialized) struct PostgresManyHostsTests {
    /// Shard 1/3 takes positions 1, 4, 7: r1, r4, r7. Its r4 page 2 is held, and the runner killed then.
    @Test func aRunnerKilledMidRunLosesNothingAndItsRerunGivesTheRowsOfOneUninterruptedRun() throws {
        let machines = try Machines()
        defer { machines.stop() }
        let faults = try ManyHostsFaultServer(address: machines.httpAddress, failOnce: ["/items/r2?page=1", "/items/r6?page=2"],
                                              hold: "/items/r4?page=2")
        defer { faults.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", ManyHostsCatalogue.pipeline(baseURL: faults.baseURL))
        let schema = "hosts_\(UUID().uuidString.prefix(8).lowercased())"
        let store = machines.server.url() + "?schema=" + schema
        let runners = try (0..<3).map { try machines.runner(on: $0, shard: "\($0)/3", store: store, in: workspace) }
        defer { runners.forEach { $0.kill() } }

        try #require(faults.held.wait(timeout: .now() + 30) == .success, "runner 1 never asked for r4's page 2")
        let killed = runners[1].process.processIdentifier
        // `ip netns exec` execs: the pid killed is the runner's own.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(killed)/exe") == SwellProcess.executable.path)
        runners[1].kill()
        faults.release()
        for runner in runners {
            #expect(runner.finish(within: 30), "a runner did not end")
        }
        for runner in [runners[0], runners[2]] {
            #expect(runner.process.terminationStatus == 0, "\(runner.stderr)")
        }
        #expect(runners[1].process.terminationReason == .uncaughtSignal && runners[1].process.terminationStatus == SIGKILL)

        let database = try PostgresConnection(machines.server.url())
        defer { database.close() }
        // The killed runner's session ended with its process, and its hold with it.
        #expect(try eventually(within: 10) { try advisoryLocks(database) == 0 }, "the killed runner's hold outlived it")
        // What the others committed is whole; the killed runner's committed work (r1, before r4) stayed.
        #expect(try rows(database, schema, items: [0, 3, 6, 2, 5, 8, 1]) == ManyHostsCatalogue.rows(items: [0, 1, 2, 3, 5, 6, 8]))

        let rerun = try machines.runner(on: 1, shard: "1/3", store: store, in: workspace)
        defer { rerun.kill() }
        #expect(rerun.finish(within: 30), "the rerun of shard 1/3 did not end")
        #expect(rerun.process.terminationStatus == 0, "\(rerun.stderr)")

        #expect(try rows(database, schema, items: 0..<9) == ManyHostsCatalogue.rows(items: 0..<9))
        let expected = Int64(ManyHostsCatalogue.rows(items: 0..<9).count)
        #expect(try database.query("SELECT count(*), count(DISTINCT id) FROM \(schema).\"Item\"") == [[.integer(expected), .integer(expected)]])
        #expect(try advisoryLocks(database) == 0)
        let status = try workspace.run("status", "items.yml", "--store", store)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("entity Item: \(expected) rows"), "\(status.stdout)")
        #expect(!status.stdout.contains("running "), "\(status.stdout)")

        // Each fault happened once and was retried; each item was asked for from its runner's host only.
        let requests = faults.requests
        #expect(requests.filter { $0.path == "/items/r2?page=1" }.count == 2)
        #expect(requests.filter { $0.path == "/items/r6?page=2" }.count == 2)
        for item in 0..<9 {
            let peers = Set(requests.filter { $0.path.hasPrefix("/items/r\(item)?") }.map(\.peer))
            #expect(peers == [machines.address(of: item % 3)], "r\(item) was asked for from \(peers)")
        }
    }

    /// Runner A holds r0 (its page 2 is held), then A's host loses its link: no FIN reaches
    /// the server, yet a runner queued with `--wait` on another host takes r0 over within seconds.
    @Test func aRunnerWhoseHostIsCutOffLosesItsSourceToAWaitingRunnerWithinSeconds() throws {
        let machines = try Machines()
        defer { machines.stop() }
        let faults = try ManyHostsFaultServer(address: machines.httpAddress, hold: "/items/r0?page=2")
        defer { faults.stop() }
        let workspace = try Workspace()
        try workspace.write("items.yml", ManyHostsCatalogue.pipeline(baseURL: faults.baseURL))
        let schema = "cut_\(UUID().uuidString.prefix(8).lowercased())"
        let store = machines.server.url() + "?schema=" + schema
        let holder = try machines.runner(on: 0, shard: "0/3", store: store, in: workspace)
        defer { holder.kill() }
        try #require(faults.held.wait(timeout: .now() + 30) == .success, "runner A never asked for r0's page 2")

        // Another host's runner on the same source exits 75 naming A's host and pid.
        let refused = try machines.runner(on: 1, shard: "0/3", store: store, in: workspace)
        defer { refused.kill() }
        #expect(refused.finish(within: 30))
        #expect(refused.process.terminationStatus == 75, "\(refused.stderr)")
        let naming = "source items[r0] is being run by another runner (host \(ProcessInfo.processInfo.hostName), pid \(holder.process.processIdentifier)"
        #expect(refused.stderr.contains(naming), "\(refused.stderr)")

        // With --wait, a third host's runner queues behind A.
        let waiting = try machines.runner(on: 2, shard: "0/3", store: store, in: workspace, extra: ["--wait"])
        defer { waiting.kill() }
        #expect(waiting.waitForStderr("waiting for the runner that holds the source"), "\(waiting.stderr)")

        if let network = machines.network {
            try network.cutLink(of: network.hosts[0])
            let cut = Date()
            let tookOver = waiting.finish(within: 20)
            #expect(tookOver, "the waiting runner had not taken r0 over 20 s after A's host was cut off")
            if tookOver {
                print("PostgresManyHostsTests: r0 taken over and run in \(String(format: "%.1f", Date().timeIntervalSince(cut))) s after A's host was cut off")
            }
            // The hold ended because A's host vanished, not because A ended.
            #expect(holder.process.isRunning)
            holder.kill()
            faults.release()
            _ = holder.finish(within: 10)
        } else {
            print("PostgresManyHostsTests: cutting runner A's host off is skipped: \(machines.refusal ?? "no namespaces"); A finishes instead")
            faults.release()
            #expect(holder.finish(within: 30))
            #expect(holder.process.terminationStatus == 0, "\(holder.stderr)")
            #expect(waiting.finish(within: 30))
        }
        #expect(waiting.process.terminationStatus == 0, "\(waiting.stderr)")

        let database = try PostgresConnection(machines.server.url())
        defer { database.close() }
        #expect(try rows(database, schema, items: [0, 3, 6]) == ManyHostsCatalogue.rows(items: [0, 3, 6]))
        #expect(try eventually(within: 10) { try advisoryLocks(database) == 0 }, "a hold outlived its runner")
        let status = try workspace.run("status", "items.yml", "--store", store)
        #expect(!status.stdout.contains("running "), "\(status.stdout)")
    }
}

/// The hosts of one test: runners h0…h2 and the PostgreSQL server on a fourth, in
/// network namespaces; or, where namespaces are refused, all on loopback, with the reason.
private final class Machines {
    let network: NetworkNamespaces?
    let refusal: String?
    let server: PostgresServer

    init() throws {
        do {
            network = try NetworkNamespaces(hosts: 4)
            refusal = nil
        } catch let refused as NetworkNamespaces.Refused {
            print("PostgresManyHostsTests: no network namespaces (\(refused)); the runners run as three processes on loopback")
            network = nil
            refusal = refused.description
        }
        if let database = network?.hosts[3] {
            server = try PostgresServer(launcher: database.launcher, host: database.address)
        } else {
            server = try PostgresServer()
        }
    }

    /// Where this process's servers listen for the runners.
    var httpAddress: String { network?.localAddress ?? "127.0.0.1" }

    /// The address runner `index`'s requests come from.
    func address(of index: Int) -> String { network?.hosts[index].address ?? "127.0.0.1" }

    /// `swell import items.yml --shard shard` on host `index`.
    func runner(on index: Int, shard: String, store: String, in workspace: Workspace, extra: [String] = []) throws -> RunningSwell {
        try RunningSwell(["import", "items.yml", "--store", store, "--shard", shard, "--batch-size", "2"] + extra, in: workspace.url,
                         launcher: network?.hosts[index].launcher ?? [])
    }

    /// Stops the server, then removes the namespaces.
    func stop() {
        server.stop()
        network?.remove()
    }
}

/// The `Item` rows of `items` in `schema`, by id.
private func rows(_ database: PostgresConnection, _ schema: String, items: some Sequence<Int>) throws -> [[StoreValue]] {
    let names = items.map { "'r\($0)'" }.joined(separator: ", ")
    return try database.query("SELECT id, item, page, value FROM \(schema).\"Item\" WHERE item IN (\(names)) ORDER BY id")
}

/// Advisory locks held on the server now (the runners' holds are session advisory locks).
private func advisoryLocks(_ database: PostgresConnection) throws -> Int64 {
    guard case .integer(let count) = try database.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").first?.first else { return -1 }
    return count
}

