import Foundation
import SwellLocks
import SwellPostgres
@testable import SwellSQLite
import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStore

/// Fetches never wait for a commit in progress (PostgreSQL store guarantees 3): a commit held up on
/// the server (another session holds a row lock it needs) while contexts of the same stack
/// and another runner's stack fetch; both return, each with what it should see.
@Suite struct PostgresSnapshotTests {
    private static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "title", type: .string, isOptional: true),
        ], uniquenessConstraint: ["id"]),
    ])

    private static func titles(_ context: ManagedObjectContext) throws -> [String] {
        var request = FetchRequest(entityName: "Entry")
        request.sortDescriptors = [FetchSortDescriptor(key: "id")]
        return try context.fetch(request).map { $0["title"] as? String ?? "nil" }
    }

    /// Runs `fetch` on `context`'s queue; its titles, or nil when it did not return within 10 s.
    private static func titlesWithin10Seconds(_ context: ManagedObjectContext) -> [String]? {
        let done = DispatchSemaphore(value: 0)
        let seen = LockedValue<[String]?>(nil)
        context.perform {
            let titles = try? titles(context)
            seen.withLock { $0 = titles }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return seen.withLock { $0 }
    }

    /// The view context's and the writer's saves, on their own queues (not on the test's task:
    /// while other tests block the few threads async tasks run on, a task may not start in time).
    /// `wait` false: returns at once; the returned semaphore is signalled when the commit ended.
    @discardableResult
    private static func saveToDisk(_ stack: PersistentContainer, error: LockedValue<(any Error)?>, wait: Bool = true) throws -> DispatchSemaphore {
        let view = stack.viewContext, writer = stack.writerContext
        try view.performAndWait { try view.save() }
        let committed = DispatchSemaphore(value: 0)
        writer.perform {
            do { try writer.save() } catch let failure { error.withLock { $0 = failure } }
            committed.signal()
        }
        if wait { _ = committed.wait(timeout: .now() + 60) }
        return committed
    }

    @Test func fetchesReturnWhileACommitWaitsOnTheServer() throws {
        let server = try PostgresServer.shared.get()
        let schema = "snap_\(UUID().uuidString.prefix(8).lowercased())"
        let url = URL(string: server.url() + "?schema=" + schema)!
        let stack = PersistentContainer(name: "snap", managedObjectModel: Self.model, storeURL: url)
        try stack.loadPersistentStores()
        let other = PersistentContainer(name: "other", managedObjectModel: Self.model, storeURL: url)
        try other.loadPersistentStores()
        let seed = stack.newBackgroundContext()
        try seed.performAndWait {
            for id in 1...3 {
                let entry = seed.insertNewObject(forEntityName: "Entry")
                entry["id"] = id
                entry["title"] = "old \(id)"
            }
            try seed.save()
        }
        let commitError = LockedValue<(any Error)?>(nil)
        try Self.saveToDisk(stack, error: commitError)
        #expect(commitError.withLock { $0 } == nil)

        // Another session locks row 1: the commit that changes it waits on the server.
        let blocker = try PostgresConnection(server.url())
        defer { blocker.close() }
        try blocker.query("BEGIN")
        try blocker.query("SELECT 1 FROM \"\(schema)\".\"Entry\" WHERE id = 1 FOR UPDATE")
        let blockerPID = try #require(blocker.query("SELECT pg_backend_pid()").first?.first)
        let worker = stack.newBackgroundContext()
        try worker.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = FetchPredicate(format: "id == 1")
            try worker.fetch(request).first?["title"] = "new 1"
            try worker.save()
        }
        let committed = try Self.saveToDisk(stack, error: commitError, wait: false)
        let waiting = try Self.untilACommitWaitsOnALock(server, heldBy: blockerPID)
        #expect(waiting, "the commit never reached the server's lock")

        // The same stack: a fresh context sees its parents' change; the other runner, the last commit.
        let sameStack = Self.titlesWithin10Seconds(stack.newBackgroundContext())
        let otherRunner = Self.titlesWithin10Seconds(other.newBackgroundContext())
        let stillWaiting = try Self.untilACommitWaitsOnALock(server, heldBy: blockerPID)
        try blocker.query("ROLLBACK")
        #expect(committed.wait(timeout: .now() + 60) == .success)
        #expect(commitError.withLock { $0 } == nil)
        #expect(stillWaiting, "the commit was no longer in progress while the fetches ran")
        #expect(sameStack == ["new 1", "old 2", "old 3"])
        #expect(otherRunner == ["old 1", "old 2", "old 3"])
        #expect(Self.titlesWithin10Seconds(other.newBackgroundContext()) == ["new 1", "old 2", "old 3"])
    }

    /// Whether, within 10 s, a session waits on a lock `blocker` holds (the held-up commit).
    private static func untilACommitWaitsOnALock(_ server: PostgresServer, heldBy blocker: StoreValue) throws -> Bool {
        let watcher = try PostgresConnection(server.url())
        defer { watcher.close() }
        return try eventually(within: 10) {
            try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [blocker]).first?.first != .integer(0)
        }
    }
}
