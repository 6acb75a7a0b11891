import Dispatch
@testable import SwellSQLite
import SwellStoreCore
import Synchronization
import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 5, 6, 9, 10, 11: saves move one level, roots save atomically, discards leave no trace.
@Suite(.onEveryStore) struct SavingTests {
    let directory = TemporaryDirectory()

    @Test func childSaveDoesNotTouchDiskUntilTheWriterSaves() async throws {
        let container = try makeContainer(directory)
        let observer = try makeRootContext(at: container.storeURL)
        let worker = container.newBackgroundContext()
        try await worker.perform {
            for id in 1...3 { insertEntry(worker, id: id) }
            try worker.save()
        }
        #expect(try count(container.viewContext) == 3)
        #expect(try count(observer) == 0)
        #expect(try storedRowCount(container.storeURL) == 0)
        try await container.viewContext.perform { try container.viewContext.save() }
        #expect(try count(observer) == 0)
        #expect(try count(container.writerContext) == 3)
        try await container.writerContext.perform { try container.writerContext.save() }
        #expect(try count(observer) == 3)
        #expect(try storedRowCount(container.storeURL) == 3)
    }

    @Test func aParentNeverPullsUnsavedChangesOutOfItsChildren() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        await worker.perform { _ = insertEntry(worker, id: 1) }
        try await container.saveToDisk()
        #expect(try count(container.viewContext) == 0)
        #expect(try storedRowCount(container.storeURL) == 0)
        let pending = await worker.perform { worker.hasChanges }
        #expect(pending)
    }

    @Test func aRootSaveIsOneTransactionAllOrNothing() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            insertEntry(writer, id: 1)
            try writer.save()
        }
        // The second save holds a new row and a conflicting one: the conflict fails it whole.
        let conflicting = await writer.perform { () -> Bool in
            insertEntry(writer, id: 2)
            insertEntry(writer, id: 1)
            do { try writer.save(); return false } catch { return true }
        }
        #expect(conflicting)
        #expect(try storedRowCount(container.storeURL) == 1)
        let stillPending = await writer.perform { writer.insertedObjects.count }
        #expect(stillPending == 2)
    }

    @Test(.onSQLiteOnly("an exit test: its child process opens a SQLite file")) func aProcessKilledMidSaveLeavesNoPartialTransaction() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("killed.sqlite")
        // The store's path goes to the child process in the exit test's capture list (not through
        // setenv, which would change the environment under the other tests running meanwhile).
        let path = url.path
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            let url = URL(fileURLWithPath: path)
            let container = PersistentContainer(name: "killed", managedObjectModel: journalModel, storeURL: url)
            try container.loadPersistentStores()
            let writer = container.writerContext
            try writer.performAndWait {
                for id in 1...100 { insertEntry(writer, id: id) }
                try writer.save()
            }
            let store = container.persistentStoreCoordinator.sqliteStore!
            store.commitObserverInterval = 5_000
            store.commitObserver = { written in
                if written >= 20_000 { kill(getpid(), SIGKILL) }
            }
            try writer.performAndWait {
                for id in 101...50_100 { insertEntry(writer, id: id) }
                try writer.save()
            }
        }
        let connection = try SQLiteConnection(path: url.path)
        let integrity = try connection.query("PRAGMA integrity_check")
        #expect(integrity.first?.first == .text("ok"))
        #expect(try storedRowCount(url) == 100)
        let container = PersistentContainer(name: "killed", managedObjectModel: journalModel, storeURL: url)
        try container.loadPersistentStores()
        #expect(try count(container.viewContext) == 100)
    }

    @Test func aDiscardedChildLeavesNoTrace() async throws {
        let container = try makeContainer(directory)
        let viewRecorder = SaveRecorder(container.viewContext)
        let writerRecorder = SaveRecorder(container.writerContext)
        let view = container.viewContext
        let id = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1, location: "Pacifica", rating: 3)
            try view.save()
            return entry.objectID
        }
        try await container.writerContext.perform { try container.writerContext.save() }
        do {
            let scratchpad = container.newBackgroundContext()
            try await scratchpad.perform {
                let entry = try scratchpad.existingObject(with: id)
                entry["location"] = "Changed"
                entry["rating"] = 5
                insertEntry(scratchpad, id: 2)
            }
        }
        #expect(try count(view) == 1)
        let location = try await view.perform { try view.existingObject(with: id)["location"] as? String }
        #expect(location == "Pacifica")
        let viewHasChanges = await view.perform { view.hasChanges }
        #expect(!viewHasChanges)
        #expect(viewRecorder.changes.count == 1)
        #expect(writerRecorder.changes.count == 1)
        #expect(try storedRowCount(container.storeURL) == 1)
    }

    @Test func changeListsTellExactlyWhatASaveWouldMove() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let ids = try await view.perform { () throws -> [ObjectID] in
            let entries = (1...3).map { insertEntry(view, id: $0, rating: 1) }
            try view.save()
            return entries.map(\.objectID)
        }
        let state = try await view.perform { () throws -> [Int] in
            #expect(!view.hasChanges)
            let inserted = insertEntry(view, id: 4)
            let updated = try view.existingObject(with: ids[0])
            updated["rating"] = 5
            let deleted = try view.existingObject(with: ids[1])
            view.delete(deleted)
            #expect(view.hasChanges)
            #expect(view.insertedObjects == [inserted])
            #expect(view.updatedObjects == [updated])
            #expect(view.deletedObjects == [deleted])
            #expect(inserted.isInserted && updated.isUpdated && deleted.isDeleted)
            #expect(updated.changedValues()["rating"] as? Int == 5)
            return [view.insertedObjects.count, view.updatedObjects.count, view.deletedObjects.count]
        }
        #expect(state == [1, 1, 1])
    }

    @Test func rollbackRestoresTheLastSavedState() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            let entry = insertEntry(view, id: 1, rating: 2)
            try view.save()
            entry["rating"] = 4
            let added = insertEntry(view, id: 2)
            view.delete(entry)
            view.rollback()
            #expect(!view.hasChanges)
            #expect(entry["rating"] as? Int == 2)
            #expect(!entry.isDeleted)
            #expect(added.managedObjectContext == nil)
            #expect(try view.count(for: FetchRequest(entityName: "JournalEntry")) == 1)
        }
    }

    @Test func resetForgetsEveryRegisteredObject() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            let entry = insertEntry(view, id: 1)
            try view.save()
            _ = try view.fetch(FetchRequest(entityName: "JournalEntry"))
            insertEntry(view, id: 2)
            #expect(!view.registeredObjects.isEmpty)
            view.reset()
            #expect(view.registeredObjects.isEmpty)
            #expect(!view.hasChanges)
            #expect(entry.managedObjectContext == nil)
            #expect(try view.count(for: FetchRequest(entityName: "JournalEntry")) == 1)
        }
    }

    @Test func aRequiredAttributeWithoutAValueFailsTheSave() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let error = await view.perform { () -> StoreError? in
            let entry = view.insertNewObject(forEntityName: "JournalEntry")
            entry["id"] = 1
            do { try view.save(); return nil } catch { return error as? StoreError }
        }
        guard let error, error.kind == .missingRequiredValue, let attribute = error.attribute else {
            Issue.record("expected missingRequiredValue, got \(String(describing: error))")
            return
        }
        #expect(attribute == "date")
    }

    @Test func aValueOfTheWrongTypeFailsTheSave() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let error = await view.perform { () -> StoreError? in
            let entry = insertEntry(view, id: 1)
            entry["rating"] = "five"
            do { try view.save(); return nil } catch { return error as? StoreError }
        }
        guard let error, error.kind == .typeMismatch, let attribute = error.attribute, let expected = error.expectedType else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(attribute == "rating")
        #expect(expected == .integer)
    }

    @Test(.sqliteStoreOnly) func theViewContextsSaveIntoTheWriterReadsNothingFromTheStore() async throws {
        let container = try makeContainer(directory)
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let worker = container.newBackgroundContext()
        try await worker.perform {
            for id in 1...500 { insertEntry(worker, id: id) }
            try worker.save()
        }
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let before = store.readCount.load(ordering: .relaxed)
        try await container.viewContext.perform { try container.viewContext.save() }
        #expect(store.readCount.load(ordering: .relaxed) == before)
        try await container.writerContext.perform { try container.writerContext.save() }
        #expect(try storedRowCount(container.storeURL) == 500)
    }

    @Test func workersChangesMoveFromTheViewContextToTheWriterOffTheMainQueue() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let worker = container.newBackgroundContext()
        try await worker.perform {
            for id in 1...300 { insertEntry(worker, id: id) }
            try worker.save()
        }
        let moved = try await Task.detached { try view.saveIntoParentOffQueue() }.value
        #expect(moved?.inserted.count == 300)
        let viewEmpty = view.level.withLock { $0.pending.isEmpty }
        #expect(viewEmpty)
        try await container.writerContext.perform { try container.writerContext.save() }
        #expect(try storedRowCount(container.storeURL) == 300)
        // With an edit of the view context's own objects, only a save on its queue may move the changes.
        await view.perform { _ = insertEntry(view, id: 999) }
        let declined = try await Task.detached { try view.saveIntoParentOffQueue() }.value
        #expect(declined == nil)
        #expect(await view.perform { view.hasChanges })
    }

    @Test func threeLevelStackPutsWorkerChangesOnDisk() async throws {
        let container = try makeContainer(directory)
        let worker = container.newBackgroundContext()
        try await worker.perform {
            insertEntry(worker, id: 7, location: "Mavericks", rating: 5)
            try worker.save()
        }
        try await container.saveToDisk()
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try count(observer, "JournalEntry", "location == %@ AND rating == 5", "Mavericks") == 1)
    }

    @Test func eightBackgroundContextsTimesTenThousandInsertsGiveEightyThousandRows() async throws {
        let container = try makeContainer(directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    try await context.perform {
                        for index in 0..<10_000 {
                            let note = context.insertNewObject(forEntityName: "Note")
                            note["text"] = "worker \(worker) note \(index)"
                            if index % 2_500 == 2_499 {
                                try context.save()
                                context.reset()
                            }
                        }
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL, entity: "Note") == 80_000)
        #expect(try count(container.viewContext, "Note") == 80_000)
    }

    @Test(.sqliteStoreOnly) func theMainQueueKeepsRunningWhileTheWriterSaves200000Objects() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let mainRan = DispatchSemaphore(value: 0)
        let timeouts = Counter()
        store.commitObserverInterval = 50_000
        store.commitObserver = { written in
            guard written > 0 else { return }
            // Mid-transaction: the main queue must run, and its context must read, while the writer writes.
            DispatchQueue.main.async {
                _ = try? container.viewContext.count(for: FetchRequest(entityName: "Note"))
                mainRan.signal()
            }
            if mainRan.wait(timeout: .now() + 10) == .timedOut { timeouts.increment() }
        }
        try await writer.perform {
            for index in 0..<200_000 {
                let note = writer.insertNewObject(forEntityName: "Note")
                note["text"] = "note \(index)"
            }
            try writer.save()
        }
        store.commitObserver = nil
        #expect(timeouts.value == 0)
        #expect(try storedRowCount(container.storeURL, entity: "Note") == 200_000)
    }
}

/// A thread-safe counter for callbacks.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var _value = 0
    func increment() { lock.withLock { _value += 1 } }
    var value: Int { lock.withLock { _value } }
}
