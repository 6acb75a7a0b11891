import Foundation
import SwellPostgres
import SwellTestSupport
import Testing
@testable import SwellInMemoryStore
@testable import SwellSQLite
@testable import SwellContexts
import SwellStore
import SwellStoreCore

/// The SurfJournal model: journal entries keyed by `id`.
package let journalEntity = EntityDescription(
    name: "JournalEntry",
    attributes: [
        AttributeDescription(name: "id", type: .integer),
        AttributeDescription(name: "date", type: .date),
        AttributeDescription(name: "height", type: .string, isOptional: true),
        AttributeDescription(name: "period", type: .string, isOptional: true),
        AttributeDescription(name: "wind", type: .string, isOptional: true),
        AttributeDescription(name: "location", type: .string, isOptional: true),
        AttributeDescription(name: "rating", type: .integer, isOptional: true),
    ],
    uniquenessConstraint: ["id"]
)

/// An entity without a key, for inserts that never merge.
package let noteEntity = EntityDescription(
    name: "Note",
    attributes: [
        AttributeDescription(name: "text", type: .string),
        AttributeDescription(name: "score", type: .double, isOptional: true),
        AttributeDescription(name: "pinned", type: .boolean, isOptional: true),
    ]
)

package let journalModel = ManagedObjectModel(entities: [journalEntity, noteEntity])

/// The stores the store tests run against: the SQLite store, the in-memory store and the
/// PostgreSQL store (on the suite's own server) — three conformers of one store protocol.
package enum TestStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, memory, postgres

    package var testDescription: String { rawValue }

    /// The store the running test uses: set by `.onEveryStore` for each pass of the test
    /// (SQLite outside one).
    @TaskLocal package static var current: TestStore = .sqlite

    /// The stores a test runs on: every store, or the one `SWELL_TEST_STORE` names (to replay a
    /// failure on one store: `SWELL_TEST_STORE=memory swift test --filter …`); a value that
    /// names no store is an error, not every store.
    package static let chosen: Result<[TestStore], StoreChoiceError> = {
        guard let name = ProcessInfo.processInfo.environment["SWELL_TEST_STORE"] else { return .success(allCases) }
        guard let store = TestStore(rawValue: name) else { return .failure(StoreChoiceError(name: name)) }
        return .success([store])
    }()
}

/// `SWELL_TEST_STORE` names no store.
package struct StoreChoiceError: Error, CustomStringConvertible {
    package let name: String
    package var description: String {
        "SWELL_TEST_STORE=\(name) names no store (\(TestStore.allCases.map(\.rawValue).joined(separator: ", ")))"
    }
}

/// Runs each test of a store suite once on each store, in this process: SQLite, in-memory,
/// PostgreSQL, one after another, with `TestStore.current` set for the pass. A test's
/// `.onStores` trait narrows the set. Every pass runs, also after one fails. An issue a pass
/// records on the test's own task names its store (one recorded on a context's queue, off
/// the task, does not: its pass is the one whose store line precedes it), and so does an
/// error it throws.
package struct EveryStoreTrait: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    /// Around each test case (each argument of a parameterised test), never around a suite.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let narrowed = test.traits.compactMap { $0 as? StoreSelectionTrait }
        let stores = try TestStore.chosen.get().filter { store in narrowed.allSatisfy { $0.stores.contains(store) } }
        var firstFailure: (any Error)?
        for store in stores {
            let naming = IssueHandlingTrait.compactMapIssues { issue in
                var issue = issue
                issue.comments.append("on the \(store) store")
                return issue
            }
            do {
                try await TestStore.$current.withValue(store) {
                    try await naming.provideScope(for: test, testCase: testCase, performing: function)
                }
            } catch let failed as ExpectationFailedError {
                // A `#require` that failed: recorded already, with its store.
                firstFailure = firstFailure ?? failed
            } catch {
                firstFailure = firstFailure ?? StorePassError(store: store, error: error)
            }
        }
        if let firstFailure { throw firstFailure }
    }
}

/// An error a test threw on one store's pass, named with that store.
package struct StorePassError: Error, CustomStringConvertible {
    package let store: TestStore
    package let error: any Error

    package var description: String { "on the \(store) store: \(error)" }
}

/// Narrows the stores `.onEveryStore` runs a test on (a test of what only some stores have).
package struct StoreSelectionTrait: TestTrait {
    package let stores: Set<TestStore>
    package let comments: [Comment]
}

extension Trait where Self == EveryStoreTrait {
    /// Runs every test of the suite on every store (`EveryStoreTrait`).
    package static var onEveryStore: Self { EveryStoreTrait() }
}

extension Trait where Self == StoreSelectionTrait {
    /// For a test of the SQLite store itself (its file, tables, indexes, WAL, commit observers):
    /// the other stores have no such thing.
    package static var sqliteStoreOnly: Self {
        StoreSelectionTrait(stores: [.sqlite], comments: ["tests the SQLite store's file itself"])
    }

    /// For a test that opens a SQLite file whatever the pass (in an exit test's child process,
    /// which has no pass, or at a path of its own): the other passes would repeat it.
    package static func onSQLiteOnly(_ why: Comment) -> Self {
        StoreSelectionTrait(stores: [.sqlite], comments: [why])
    }

    /// For a test that does not apply to one store; `why` says why.
    package static func onStores(except store: TestStore, _ why: Comment) -> Self {
        StoreSelectionTrait(stores: Set(TestStore.allCases).subtracting([store]), comments: [why])
    }
}

/// A fresh temporary folder for one test, removed when the value goes; `store` is the
/// kind of store `makeContainer` opens in it.
package final class TemporaryDirectory: Sendable {
    package let url: URL
    package let store: TestStore

    package init(store: TestStore = .current) {
        self.store = store
        url = FileManager.default.temporaryDirectory.appendingPathComponent("swell-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Where `makeContainer` opens a store named `name`: a file here, or a fresh in-memory store.
    package func storeURL(_ name: String) -> URL {
        switch store {
        case .sqlite: file("\(name).sqlite")
        case .memory: URL(string: "memory://\(url.lastPathComponent)/\(name)")!
        case .postgres: Self.postgresURL(schema: "t\(url.lastPathComponent.suffix(12).lowercased())_\(name)")
        }
    }

    /// A schema of the suite's own PostgreSQL server (started on first use, stopped at exit).
    private static func postgresURL(schema: String) -> URL {
        let server = try! PostgresServer.shared.get()
        return URL(string: server.url() + "?schema=" + schema.replacingOccurrences(of: "-", with: "_"))!
    }

}

/// A loaded container on a fresh store file.
package func makeContainer(_ directory: TemporaryDirectory, name: String = "journal",
                   model: ManagedObjectModel = journalModel) throws -> PersistentContainer {
    let container = PersistentContainer(name: name, managedObjectModel: model, storeURL: directory.storeURL(name))
    try container.loadPersistentStores()
    return container
}

/// A root context on its own coordinator over an existing store file (a second "process").
package func makeRootContext(at url: URL, model: ManagedObjectModel = journalModel) throws -> ManagedObjectContext {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(at: url)
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    return context
}

/// Inserts a journal entry with the given values.
@discardableResult
package func insertEntry(_ context: ManagedObjectContext, id: Int, location: String? = nil, rating: Int? = nil,
                 date: Date = Date(timeIntervalSince1970: 1_700_000_000)) -> ManagedObject {
    let entry = context.insertNewObject(forEntityName: "JournalEntry")
    entry["id"] = id
    entry["date"] = date
    if let location { entry["location"] = location }
    if let rating { entry["rating"] = rating }
    return entry
}

/// Enqueues a block on a context from async code (where the bare call would pick the async `perform`).
package func enqueue(_ context: ManagedObjectContext, _ block: @escaping @Sendable () -> Void) {
    context.perform(block)
}

/// Starts a background task from async code (where the bare call would pick the async overload).
package func startBackgroundTask(_ container: PersistentContainer, _ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
    container.performBackgroundTask(block)
}

/// Rows of the entity in the store: for a file, read through a separate connection; for an
/// in-memory store, from its last committed state.
package func storedRowCount(_ url: URL, entity: String = "JournalEntry") throws -> Int {
    if url.scheme == "postgresql" || url.scheme == "postgres" {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let schema = components.queryItems?.first { $0.name == "schema" }?.value ?? "public"
        components.queryItems = nil
        let connection = try PostgresConnection(components.string!)
        defer { connection.close() }
        let rows = try connection.query("SELECT count(*) FROM \"\(schema)\".\"\(entity)\"")
        guard case .integer(let count)? = rows.first?.first else { return -1 }
        return Int(count)
    }
    if url.scheme == "memory" {
        return try InMemoryStore.named(by: url).read { reader in
            (reader as? InMemoryStoreReader)?.state.tables[entity]?.rows.count ?? 0
        }
    }
    let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
    guard case .integer(let count)? = try connection.query("SELECT count(*) FROM \"\(entity)\"").first?.first else { return -1 }
    return Int(count)
}

/// Counts a context's objects matching a format, on its queue.
package func count(_ context: ManagedObjectContext, _ entity: String = "JournalEntry", _ format: String? = nil,
           _ arguments: Any?...) throws -> Int {
    var request = FetchRequest(entityName: entity)
    if let format { request.predicate = FetchPredicate(format: format, argumentArray: arguments) }
    return try context.performAndWait { try context.count(for: request) }
}

/// Collects did-save notifications of one context.
/// `@unchecked Sendable`: `_changes` is only touched under `lock`; `token` is set once in `init`.
package final class SaveRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _changes: [ContextDidSaveChanges] = []
    private var token: NSObjectProtocol?

    package init(_ context: ManagedObjectContext) {
        token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: context, queue: nil) { [weak self] note in
            guard let self, let changes = ContextDidSaveChanges(notification: note) else { return }
            lock.withLock { _changes.append(changes) }
        }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }

    package var changes: [ContextDidSaveChanges] { lock.withLock { _changes } }
}

extension PersistentStoreCoordinator {
    /// The coordinator's store when it is a SQLite store, for tests that observe its commits.
    package var sqliteStore: SQLiteStore? { (try? store) as? SQLiteStore }
}

/// Holds what a notification observer saw, for the test to read after the save.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
package final class NotificationBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: Set<ObjectID>?
    private var _note: Notification?
    package init() {}
    package func set(_ value: Set<ObjectID>?) { lock.withLock { _value = value } }
    package func setNote(_ note: Notification) { lock.withLock { _note = note } }
    package var value: Set<ObjectID>? { lock.withLock { _value } }
    package var note: Notification? { lock.withLock { _note } }
}

@discardableResult
package func insertRows(_ container: PersistentContainer, _ rows: [[StoreValue]]) async throws -> ContextDidSaveChanges {
    let worker = container.newBackgroundContext()
    return try await worker.perform {
        for row in rows { worker.insertRow(entity: journalEntity, values: row) }
        return try worker.saveReturningChanges()
    }
}

/// `SELECT <columns> FROM <table> ORDER BY <order>` on the store file, through its own connection.
package func storedRows(_ url: URL, _ sql: String, _ arguments: [StoreValue] = []) throws -> [[StoreValue]] {
    try SQLiteConnection(path: url.path, mode: .readOnly).query(sql, arguments)
}

/// Every JournalEntry in a context as key → object ID number, with its location and rating.
package func entriesByKey(_ context: ManagedObjectContext) throws -> [Int: (id: Int64, location: String?, rating: Int?)] {
    try context.performAndWait {
        var result: [Int: (id: Int64, location: String?, rating: Int?)] = [:]
        for entry in try context.fetch(FetchRequest(entityName: "JournalEntry")) {
            result[entry["id"] as! Int] = (entry.objectID.primaryKey, entry["location"] as? String, entry["rating"] as? Int)
        }
        return result
    }
}
