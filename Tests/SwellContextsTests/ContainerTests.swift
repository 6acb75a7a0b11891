import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statements 22, 23, 25 and the SurfJournal flows.
@Suite(.onEveryStore) struct ContainerTests {
    let directory = TemporaryDirectory()

    @Test func theContainerSetsUpTheThreeLevelStack() async throws {
        let container = try makeContainer(directory)
        #expect(container.writerContext.concurrencyType == .privateQueue)
        #expect(container.writerContext.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(container.viewContext.concurrencyType == .mainQueue)
        #expect(container.viewContext.parent === container.writerContext)
        #expect(container.viewContext.automaticallyMergesChangesFromParent)
        let background = container.newBackgroundContext()
        #expect(background.concurrencyType == .privateQueue)
        #expect(background.parent === container.viewContext)
        let first = await container.performBackgroundTask { context in context }
        let second = await container.performBackgroundTask { context in context }
        #expect(first !== second)
    }

    @Test func performBackgroundTaskRunsOnANewPrivateChildOfTheViewContext() async throws {
        let container = try makeContainer(directory)
        let parentIsView = await container.performBackgroundTask { context in
            context.parent === container.viewContext && context.concurrencyType == .privateQueue && context.queue.isCurrent
        }
        #expect(parentIsView)
        let done = AsyncSignal()
        startBackgroundTask(container) { context in
            insertEntry(context, id: 1)
            try? context.save()
            done.fire()
        }
        await done.wait()
        #expect(try count(container.viewContext) == 1)
    }

    @Test func saveToDiskSavesTheViewContextThenTheWriter() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        await view.perform { _ = insertEntry(view, id: 1) }
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 1)
        let clean = await view.perform { !view.hasChanges }
        let writerClean = await container.writerContext.perform { !container.writerContext.hasChanges }
        #expect(clean && writerClean)
    }

    @Test func mainAndWriterLetChangesGoOnceTheyAreOnDisk() async throws {
        let container = try makeContainer(directory)
        for batch in 0..<5 {
            let worker = container.newBackgroundContext()
            try await worker.perform {
                for index in 0..<2_000 {
                    let note = worker.insertNewObject(forEntityName: "Note")
                    note["text"] = "batch \(batch) note \(index)"
                }
                try worker.save()
            }
            try await container.saveToDisk()
            let viewHeld = container.viewContext.level.withLock { $0.layers.reduce(0) { $0 + $1.count } }
            let writerHeld = container.writerContext.level.withLock {
                ($0.layers + $0.inFlight).reduce(0) { $0 + $1.count }
            }
            #expect(viewHeld == 0)
            #expect(writerHeld == 0)
        }
        #expect(try storedRowCount(container.storeURL, entity: "Note") == 10_000)
    }

    @Test func aContextHoldsOnlyChangedObjectsAndWhatCallersHold() async throws {
        let container = try makeContainer(directory)
        let writer = container.writerContext
        try await writer.perform {
            for index in 0..<1_000 {
                let note = writer.insertNewObject(forEntityName: "Note")
                note["text"] = "\(index)"
            }
            try writer.save()
        }
        let worker = container.newBackgroundContext()
        let (alive, retained, held) = try await worker.perform { () throws -> (Int, Int, Int) in
            var kept: ManagedObject?
            do {
                let notes = try worker.fetch(FetchRequest(entityName: "Note"))
                notes[0]["text"] = "changed"
                kept = notes[1]
            }
            let alive = worker.registeredObjects.count
            return (alive, worker.retained.count, kept == nil ? 0 : 1)
        }
        #expect(held == 1)
        #expect(retained == 1)
        #expect(alive == 2)
    }

    @Test(.sqliteStoreOnly) func seedingCopiesTheSeedWithItsWalAndShmWhenNoStoreExists() async throws {
        let seedDirectory = TemporaryDirectory()
        let seed = try makeContainer(seedDirectory, name: "seed")
        try await seed.writerContext.perform {
            for id in 1...5 { insertEntry(seed.writerContext, id: id) }
            try seed.writerContext.save()
        }
        #expect(FileManager.default.fileExists(atPath: seed.storeURL.path + "-wal"))
        let target = directory.file("nested/first-launch.sqlite")
        let container = PersistentContainer(name: "first-launch", managedObjectModel: journalModel, storeURL: target)
        #expect(try container.seedIfNeeded(from: seed.storeURL))
        #expect(FileManager.default.fileExists(atPath: target.path))
        #expect(FileManager.default.fileExists(atPath: target.path + "-wal"))
        #expect(FileManager.default.fileExists(atPath: target.path + "-shm"))
        try container.loadPersistentStores()
        #expect(try count(container.viewContext) == 5)
        // A second launch keeps the store it has.
        try await container.viewContext.perform {
            insertEntry(container.viewContext, id: 6)
            try container.viewContext.save()
        }
        try await container.saveToDisk()
        let again = PersistentContainer(name: "first-launch", managedObjectModel: journalModel, storeURL: target)
        #expect(try !again.seedIfNeeded(from: seed.storeURL))
        try again.loadPersistentStores()
        #expect(try count(again.viewContext) == 6)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path)
        #expect(leftovers.allSatisfy { !$0.contains(".seed-") })
    }

    @Test func seedingFromAMissingFileLeavesNoStore() throws {
        let target = directory.file("store.sqlite")
        let container = PersistentContainer(name: "store", managedObjectModel: journalModel, storeURL: target)
        #expect(throws: StoreError.self) { try container.seedIfNeeded(from: directory.file("missing.sqlite")) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test(.sqliteStoreOnly) func staleWalFilesWithoutTheirStoreAreNotReplayed() async throws {
        let other = TemporaryDirectory()
        let source = try makeContainer(other, name: "source")
        try await source.writerContext.perform {
            for id in 1...3 { insertEntry(source.writerContext, id: id) }
            try source.writerContext.save()
        }
        let target = directory.file("store.sqlite")
        // A crash between removing an old store and renaming in a new one could leave only a -wal.
        try FileManager.default.copyItem(atPath: source.storeURL.path + "-wal", toPath: target.path + "-wal")
        let container = PersistentContainer(name: "store", managedObjectModel: journalModel, storeURL: target)
        try container.loadPersistentStores()
        #expect(try count(container.viewContext) == 0)
    }

    // MARK: SurfJournal

    @Test func surfJournalExportOnABackgroundContextWhileTheViewContextIsUsed() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        try await view.perform {
            for id in 1...50 { insertEntry(view, id: id, location: "Spot \(id)", rating: id % 5 + 1) }
            try view.save()
        }
        try await container.saveToDisk()
        let exporter = container.newBackgroundContext()
        async let exported: [String] = exporter.perform { () throws -> [String] in
            var request = FetchRequest(entityName: "JournalEntry")
            request.sortDescriptors = [FetchSortDescriptor(key: "id")]
            return try exporter.fetch(request).map { "\($0["id"]!),\($0["location"]!),\($0["rating"]!)" }
        }
        try await view.perform {
            insertEntry(view, id: 51, location: "Late spot", rating: 3)
            try view.save()
        }
        let lines = try await exported
        #expect(lines.count >= 50)
        #expect(lines.first == "1,Spot 1,2")
    }

    @Test func surfJournalEditInAChildThenDiscardOrSave() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = try await view.perform { () throws -> ObjectID in
            let entry = insertEntry(view, id: 1, location: "Ocean Beach", rating: 3)
            try view.save()
            return entry.objectID
        }
        // Discard: the scratchpad edit is thrown away.
        let discard = ManagedObjectContext(concurrencyType: .mainQueue)
        discard.parent = view
        await discard.perform { discard.object(with: id)["rating"] = 1 }
        #expect(await view.perform { view.object(with: id)["rating"] as? Int } == 3)
        // Save: the edit moves into the view context, then to disk.
        let edit = ManagedObjectContext(concurrencyType: .mainQueue)
        edit.parent = view
        try await edit.perform {
            edit.object(with: id)["rating"] = 5
            try edit.save()
        }
        #expect(await view.perform { view.object(with: id)["rating"] as? Int } == 5)
        try await container.saveToDisk()
        let observer = try makeRootContext(at: container.storeURL)
        #expect(try count(observer, "JournalEntry", "rating == 5") == 1)
    }

    @Test func surfJournalAddInAChildAndCancel() async throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let add = ManagedObjectContext(concurrencyType: .mainQueue)
        add.parent = view
        await add.perform {
            let entry = insertEntry(add, id: 99, location: "Cancelled")
            _ = entry
        }
        #expect(try count(view) == 0)
        try await container.saveToDisk()
        #expect(try storedRowCount(container.storeURL) == 0)
    }
}

/// A one-shot signal a test can await without sleeping.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class AsyncSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        let toResume = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            fired = true
            defer { waiters.removeAll() }
            return waiters
        }
        toResume.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = lock.withLock { () -> Bool in
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
