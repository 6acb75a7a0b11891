import Foundation
@testable import SwellInMemoryStore
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store types by URL scheme (Core Data's registered store classes): a file is
/// SQLite, `memory:` the in-memory store, another scheme what registered it.
@Suite(.onEveryStore) struct StoreTypeTests {
    @Test func aSchemeNothingRegisteredIsRefusedNamingIt() {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel)
        #expect {
            try coordinator.addPersistentStore(at: URL(string: "nosuch://app:pw@db.example/swell")!)
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .unknownStoreType else { return false }
            return error.scheme == "nosuch" && !"\(error)".contains("pw")
        }
        // The refusal says which store types there are and what each opens.
        let refusal = StoreError.unknownStoreType(scheme: "nosuch", linked: StoreType.linked).description
        #expect(refusal.contains("file paths and file: URLs (SQLite)") && refusal.contains("memory:// (in-memory)")
                && refusal.contains("postgres://, postgresql:// (PostgreSQL)"), "\(refusal)")
    }

    /// README "Store types": a coordinator opens the store types it was given and no other,
    /// so a program that names SQLite only refuses a `memory:` or `postgres:` URL, saying
    /// what it opens, and touches nothing.
    @Test func aCoordinatorOpensOnlyTheStoreTypesItWasGiven() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel, storeTypes: [.sqlite])
        for url in ["memory://only-sqlite", "postgres://swell@127.0.0.1:1/swell"] {
            #expect {
                try coordinator.addPersistentStore(at: URL(string: url)!)
            } throws: { error in
                guard let error = error as? StoreError, error.kind == .unknownStoreType else { return false }
                let text = "\(error)"
                return text.contains("file paths and file: URLs (SQLite)") && !text.contains("in-memory")
                    && (url.hasPrefix("memory") || text.contains("`PostgreSQL` package trait"))
            }
        }
        #expect(coordinator.storeURL == nil)
        let memoryOnly = PersistentStoreCoordinator(managedObjectModel: journalModel, storeTypes: [.inMemory])
        #expect {
            try memoryOnly.addPersistentStore(at: URL(fileURLWithPath: "/nonexistent/never-created.sqlite"))
        } throws: { ($0 as? StoreError)?.kind == .unknownStoreType }
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent"))
        try memoryOnly.addPersistentStore(at: URL(string: "memory://given-\(UUID().uuidString)")!)
        #expect(memoryOnly.storeURL != nil)
    }

    /// What `import SwellStore` links with its default traits: all three store types.
    @Test func swellStoreLinksTheThreeStoreTypesByDefault() {
        #expect(StoreType.linked.map(\.name) == ["SQLite", "in-memory", "PostgreSQL"])
    }

    /// PostgreSQL store guarantees, "Choosing the store": a `postgres://` URL given to
    /// `addPersistentStore(at:)` selects the PostgreSQL store with nothing but `import
    /// SwellStore` and nobody calling `PostgresStore.register()` (deprecated; no test calls it,
    /// and this one runs in a fresh process). A closed port shows the PostgreSQL store tried.
    @Test(.onSQLiteOnly("an exit test whose child process picks its store by URL"))
    func aPostgresURLSelectsThePostgresStoreWithoutRegisteringIt() async throws {
        await #expect(processExitsWith: .success) {
            let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
            }
            let port = UInt16(bigEndian: address.sin_port)
            close(socket)   // bound, then closed: nothing listens there
            let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel)
            do {
                try coordinator.addPersistentStore(at: URL(string: "postgres://swell@127.0.0.1:\(port)/swell?connect_timeout=5")!)
                exit(3)
            } catch StoreError.Kind.serverUnreachable {
                exit(0)
            } catch {
                exit(4)
            }
        }
    }

    @Test func aRegisteredSchemeGetsItsStoreType() throws {
        let scheme = "test-\(UUID().uuidString.prefix(8).lowercased())"
        let made = LockedURLs()
        StoreTypeRegistry.register(scheme: scheme) { url in
            made.append(url)
            return InMemoryStore(url: url)
        }
        let url = URL(string: "\(scheme.uppercased())://one")!
        let container = PersistentContainer(name: "journal", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        #expect(made.urls == [url])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            insertEntry(context, id: 7, location: "Pipeline")
            try context.save()
        }
        try container.writerContext.performAndWait { try container.writerContext.save() }
        #expect(try count(container.viewContext, "JournalEntry", "location == %@", "Pipeline") == 1)
    }

    @Test func coordinatorsOfOneMemoryURLShareItsStoreAndOthersDoNot() throws {
        let url = URL(string: "memory://shared-\(UUID().uuidString)")!
        let first = try makeRootContext(at: url)
        try first.performAndWait {
            insertEntry(first, id: 1)
            try first.save()
        }
        let second = try makeRootContext(at: url)
        #expect(try count(second) == 1)
        let other = try makeRootContext(at: URL(string: "memory://other-\(UUID().uuidString)")!)
        #expect(try count(other) == 0)
    }

    @Test func idsComeFromTheStoreSoCoordinatorsSharingOneNeverGetTheSameID() throws {
        let url = URL(string: "memory://ids-\(UUID().uuidString)")!
        let first = PersistentStoreCoordinator(managedObjectModel: journalModel)
        try first.addPersistentStore(at: url)
        let taken = try first.allocatePrimaryKeys(for: "Note", count: 100)
        // Another coordinator adds the same store before the first saved anything.
        let second = PersistentStoreCoordinator(managedObjectModel: journalModel)
        try second.addPersistentStore(at: url)
        let next = try second.allocatePrimaryKeys(for: "Note", count: 100)
        #expect(!taken.overlaps(next), "\(taken) \(next)")
        #expect(try first.allocatePrimaryKeys(for: "Note", count: 1).lowerBound >= next.upperBound)
    }

    @Test(.onSQLiteOnly("opens SQLite files of its own")) func aFileURLOrPlainPathIsTheSQLiteStore() throws {
        let directory = TemporaryDirectory(store: .sqlite)
        let context = try makeRootContext(at: directory.file("plain.sqlite"))
        try context.performAndWait {
            insertEntry(context, id: 1)
            try context.save()
        }
        #expect(try storedRowCount(directory.file("plain.sqlite")) == 1)
    }
}

/// URLs a factory was called with, from any queue.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
private final class LockedURLs: @unchecked Sendable {
    private let lock = NSLock()
    private var _urls: [URL] = []
    func append(_ url: URL) { lock.withLock { _urls.append(url) } }
    var urls: [URL] { lock.withLock { _urls } }
}
