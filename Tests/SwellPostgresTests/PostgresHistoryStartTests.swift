import Foundation
import SwellLocks
import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// Turning history on while another runner commits (Store guarantees 46: every transaction after it
/// is on is recorded). A runner that turns it on reads its first position right after; a
/// commit that began before, asked whether history was on and was told no, must be visible
/// by then, or its change is neither recorded nor before that position. So turning it on
/// waits for commits in flight: here one held up on a row lock another session holds.
@Suite struct PostgresHistoryStartTests {
    private static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "title", type: .string, isOptional: true),
        ], uniquenessConstraint: ["id"]),
    ])

    /// A runner on `url` whose writer saved entry 1 ("old", with history off) and holds an
    /// unsaved change to it ("new"), to commit when the test says.
    static func runnerWithAnUnsavedChange(_ url: URL) throws -> PersistentContainer {
        let runner = PersistentContainer(name: "runner", managedObjectModel: model, storeURL: url)
        try runner.loadPersistentStores()
        let writer = runner.writerContext
        try writer.performAndWait {
            let entry = writer.insertNewObject(forEntityName: "Entry")
            entry["id"] = 1
            entry["title"] = "old"
            try writer.save()
            entry["title"] = "new"
        }
        return runner
    }

    /// Opens `container` on another thread (turning history on may wait on the server): signalled when done, with its error.
    static func loadInBackground(_ container: PersistentContainer) -> (DispatchSemaphore, LockedValue<(any Error)?>) {
        let opened = DispatchSemaphore(value: 0)
        let openError = LockedValue<(any Error)?>(nil)
        DispatchQueue.global().async {
            do { try container.loadPersistentStores() } catch { openError.withLock { $0 = error } }
            opened.signal()
        }
        return (opened, openError)
    }

    @Test func turningHistoryOnWaitsForCommitsInFlight() throws {
        let server = try PostgresServer.shared.get()
        let url = URL(string: server.url() + "?schema=hist_\(UUID().uuidString.prefix(8).lowercased())")!
        let runner = try Self.runnerWithAnUnsavedChange(url)
        defer { try? runner.persistentStoreCoordinator.close() }
        let writer = runner.writerContext

        // Another session locks the row: the runner's commit waits on the server.
        let blocker = try PostgresConnection(server.url())
        defer { blocker.close() }
        try blocker.query("BEGIN")
        try blocker.query("SELECT 1 FROM \"\(url.query!.dropFirst("schema=".count))\".\"Entry\" WHERE id = 1 FOR UPDATE")
        let blockerPID = try #require(blocker.query("SELECT pg_backend_pid()").first?.first)
        let committed = DispatchSemaphore(value: 0)
        let commitError = LockedValue<(any Error)?>(nil)
        writer.perform {
            do { try writer.save() } catch { commitError.withLock { $0 = error } }
            committed.signal()
        }
        let watcher = try PostgresConnection(server.url())
        defer { watcher.close() }
        func waitingOn(_ pid: StoreValue) throws -> Bool {
            try eventually(within: 10) {
                try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [pid]).first?.first != .integer(0)
            }
        }
        #expect(try waitingOn(blockerPID), "the commit never reached the row lock")

        // An app turns history on meanwhile: it waits for the commit in flight.
        let app = PersistentContainer(name: "app", managedObjectModel: Self.model, storeURL: url, options: PersistentStoreOptions(history: true))
        let (opened, openError) = Self.loadInBackground(app)
        defer { try? app.persistentStoreCoordinator.close() }
        let runnerPID = try #require(watcher.query("SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [blockerPID]).first?.first)
        #expect(try waitingOn(runnerPID), "turning history on did not wait for the commit in flight")
        try blocker.query("ROLLBACK")
        #expect(committed.wait(timeout: .now() + 60) == .success && commitError.withLock { $0 } == nil)
        #expect(opened.wait(timeout: .now() + 60) == .success && openError.withLock { $0 } == nil)

        // Once on, the app's first position comes after the runner's change, which it reads.
        let view = app.newBackgroundContext()
        let title = try view.performAndWait { try view.fetch(FetchRequest(entityName: "Entry")).first?["title"] as? String }
        #expect(title == "new")
        // And the runner's next commit is recorded.
        try writer.performAndWait {
            try writer.fetch(FetchRequest(entityName: "Entry")).first?["title"] = "newer"
            try writer.save()
        }
        let history = try view.performAndWait { try view.fetchHistory(after: nil) }
        #expect(history.count == 1 && history.first?.changes.first?.updatedProperties == ["title"])
    }

    /// A commit that asks whether history is on while turning it on waits (queued behind it)
    /// is told "on" once it gets its turn, and is recorded: after its session already
    /// committed with history off, so what it knew of the tables is out of date.
    @Test func aCommitQueuedBehindTurningHistoryOnIsRecorded() throws {
        let server = try PostgresServer.shared.get()
        let schema = "hist_\(UUID().uuidString.prefix(8).lowercased())"
        let url = URL(string: server.url() + "?schema=" + schema)!
        let runner = try Self.runnerWithAnUnsavedChange(url)
        defer { try? runner.persistentStoreCoordinator.close() }
        let writer = runner.writerContext
        // Another session holds the lock shared, as a commit in flight does: turning history on waits.
        let blocker = try PostgresConnection(server.url())
        defer { blocker.close() }
        try blocker.query("SELECT pg_advisory_lock_shared(hashtext($1::text))", [.text("swell.history.\(schema)")])
        let blockerPID = try #require(blocker.query("SELECT pg_backend_pid()").first?.first)
        let app = PersistentContainer(name: "app", managedObjectModel: Self.model, storeURL: url, options: PersistentStoreOptions(history: true))
        let (opened, openError) = Self.loadInBackground(app)
        defer { try? app.persistentStoreCoordinator.close() }
        let watcher = try PostgresConnection(server.url())
        defer { watcher.close() }
        /// The sessions waiting on `pid` (holding a lock they need, or ahead of them in its queue).
        func waiting(on pid: StoreValue) throws -> [StoreValue] {
            try watcher.query("SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [pid]).compactMap(\.first)
        }
        #expect(try eventually(within: 10) { try !waiting(on: blockerPID).isEmpty }, "turning history on did not wait")
        let appPID = try #require(try waiting(on: blockerPID).first)
        // The runner commits now: it queues behind the waiting exclusive lock.
        let committed = DispatchSemaphore(value: 0)
        let commitError = LockedValue<(any Error)?>(nil)
        writer.perform {
            do { try writer.save() } catch { commitError.withLock { $0 = error } }
            committed.signal()
        }
        #expect(try eventually(within: 10) { try !waiting(on: appPID).isEmpty }, "the commit did not queue behind turning history on")
        try blocker.query("SELECT pg_advisory_unlock_shared(hashtext($1::text))", [.text("swell.history.\(schema)")])
        #expect(opened.wait(timeout: .now() + 60) == .success && openError.withLock { $0 } == nil)
        #expect(committed.wait(timeout: .now() + 60) == .success && commitError.withLock { $0 } == nil)
        let view = app.newBackgroundContext()
        let history = try view.performAndWait { try view.fetchHistory(after: nil) }
        let titles = try view.performAndWait { try view.fetch(FetchRequest(entityName: "Entry")).map { $0["title"] as? String ?? "" } }
        #expect(history.count == 1 && history.first?.changes.first?.updatedProperties == ["title"], "\(history) \(titles)")
    }
}
