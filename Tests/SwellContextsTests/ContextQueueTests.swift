import Dispatch
import Foundation
import Synchronization
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 1–4: queues, perform, confinement checks, parents.
@Suite(.onEveryStore) struct ContextQueueTests {
    let directory = TemporaryDirectory()

    @Test func privateContextRunsOnItsOwnQueueAndMainContextOnTheMainQueue() async throws {
        let container = try makeContainer(directory)
        let background = container.newBackgroundContext()
        let onOwnQueue = await background.perform { background.queue.isCurrent }
        let onMain = await background.perform { MainQueueMarker.isOnMainQueue }
        #expect(onOwnQueue)
        #expect(!onMain)
        let viewOnMain = await container.viewContext.perform { MainQueueMarker.isOnMainQueue }
        #expect(viewOnMain)
        #expect(background.concurrencyType == .privateQueue)
        #expect(container.viewContext.concurrencyType == .mainQueue)
    }

    @Test func onlyIDsCrossQueuesAndNameTheSameObjectInEachContext() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        let id = try await worker.perform { () throws -> ObjectID in
            let entry = insertEntry(worker, id: 1, location: "Ocean Beach")
            try worker.save()
            return entry.objectID
        }
        let location = try await container.viewContext.perform { () throws -> String? in
            let object = try container.viewContext.existingObject(with: id)
            return object["location"] as? String
        }
        #expect(location == "Ocean Beach")
    }

    @Test func performReturnsAtOnceAndRunsTheBlockLater() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let gate = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        // If perform ran the block before returning, waiting on the gate here would never end.
        context.perform {
            gate.wait()
            ran.signal()
        }
        gate.signal()
        #expect(ran.wait(timeout: .now() + 10) == .success)
    }

    @Test func performAndWaitIsReentrant() throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let value = context.performAndWait {
            context.performAndWait {
                context.performAndWait { 42 }
            }
        }
        #expect(value == 42)
        let viewValue = container.viewContext.performAndWait { container.viewContext.performAndWait { 7 } }
        #expect(viewValue == 7)
    }

    @Test func asyncPerformReturnsTheResultAndRethrows() async throws {
        let container = try makeContainer(directory)
        let context = container.newBackgroundContext()
        let result = await context.perform { 6 * 7 }
        #expect(result == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await context.perform { () throws -> Int in throw Boom() }
        }
    }

    @Test(.onSQLiteOnly("an exit test: its child process opens a SQLite file")) func touchingAContextOffItsQueueStopsTheProgramInDebugMode() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("SWELL_CONCURRENCY_DEBUG", "1", 1)
            let directory = TemporaryDirectory()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel)
            try coordinator.addPersistentStore(at: directory.file("debug.sqlite"))
            let context = ManagedObjectContext(concurrencyType: .privateQueue)
            context.name = "offending-context"
            context.persistentStoreCoordinator = coordinator
            _ = context.insertNewObject(forEntityName: "JournalEntry")  // not inside perform: a violation
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("offending-context"))
        #expect(stderr.contains("concurrency violation"))
    }

    /// Issue 13, item 4: a debug build checks without the variable, and warns (once per
    /// context, naming it) instead of stopping; a release build does not check.
    @Test(.onSQLiteOnly("an exit test: its child process opens a SQLite file")) func withoutTheVariableADebugBuildWarnsOncePerContextAndGoesOn() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            unsetenv("SWELL_CONCURRENCY_DEBUG")
            let directory = TemporaryDirectory()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel)
            try coordinator.addPersistentStore(at: directory.file("nodebug.sqlite"))
            let context = ManagedObjectContext(concurrencyType: .privateQueue)
            context.name = "warned-context"
            context.persistentStoreCoordinator = coordinator
            _ = context.insertNewObject(forEntityName: "JournalEntry")
            _ = context.insertNewObject(forEntityName: "JournalEntry")
            _ = context.hasChanges
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #if DEBUG
        #expect(stderr.components(separatedBy: "SwellStore concurrency warning").count == 2, "\(stderr)")
        #expect(stderr.contains("on context 'warned-context' (private queue) off its queue"))
        #else
        #expect(!stderr.contains("SwellStore concurrency"))
        #endif
    }

    @Test(.onSQLiteOnly("an exit test: its child process opens a SQLite file")) func theVariableAtZeroTurnsTheCheckOff() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            setenv("SWELL_CONCURRENCY_DEBUG", "0", 1)
            let directory = TemporaryDirectory()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: journalModel)
            try coordinator.addPersistentStore(at: directory.file("off.sqlite"))
            let context = ManagedObjectContext(concurrencyType: .privateQueue)
            context.persistentStoreCoordinator = coordinator
            _ = context.insertNewObject(forEntityName: "JournalEntry")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!stderr.contains("SwellStore concurrency"), "\(stderr)")
    }

    @Test(.onSQLiteOnly("an exit test: its child process opens a SQLite file")) func usingAContextOnItsQueueInDebugModeIsFine() async throws {
        await #expect(processExitsWith: .success) {
            setenv("SWELL_CONCURRENCY_DEBUG", "1", 1)
            let directory = TemporaryDirectory()
            let container = try makeContainer(directory)
            let worker = container.newBackgroundContext()
            try worker.performAndWait {
                insertEntry(worker, id: 1)
                try worker.save()
            }
            guard try count(container.viewContext) == 1 else { exit(2) }
        }
    }

    @Test func aContextHasEitherACoordinatorOrAParent() throws {
        let container = try makeContainer(directory)
        #expect(container.writerContext.persistentStoreCoordinator != nil)
        #expect(container.writerContext.parent == nil)
        #expect(container.viewContext.parent === container.writerContext)
        #expect(container.viewContext.persistentStoreCoordinator == nil)
        let child = container.newBackgroundContext()
        child.persistentStoreCoordinator = container.persistentStoreCoordinator
        #expect(child.parent == nil)
    }

    @Test func manyContextsShareOneCoordinatorAndAParentServesChildrenOnOtherQueues() async throws {
        let container = try makeContainer(directory)
        let second = ManagedObjectContext(concurrencyType: .privateQueue)
        second.persistentStoreCoordinator = container.persistentStoreCoordinator
        let children = (0..<4).map { _ in container.newBackgroundContext() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, child) in children.enumerated() {
                group.addTask {
                    try await child.perform {
                        insertEntry(child, id: index + 1)
                        try child.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try count(container.viewContext) == 4)
        try await container.saveToDisk()
        #expect(try count(second) == 4)
    }
}

/// Nested `performAndWait` from the main queue into a private child and back into the main context.
@Suite(.onEveryStore) struct NestedPerformTests {
    @Test @MainActor func aPrivateChildSavesIntoTheMainContextInsidePerformAndWaitFromTheMainQueue() throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory)
        let view = container.viewContext
        let child = container.newBackgroundContext()
        let seen = try child.performAndWait { () throws -> Int in
            insertEntry(child, id: 1)
            try child.save()
            return try view.performAndWait { try view.count(for: FetchRequest(entityName: "JournalEntry")) }
        }
        #expect(seen == 1)
    }
}
