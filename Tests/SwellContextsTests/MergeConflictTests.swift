import Foundation
import SwellPostgres
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Store guarantees 61: conflicts between writers are detected (optimistic locking) and resolved
/// by the saving context's merge policy, as Core Data resolves them — between two roots on one
/// coordinator, two coordinators, two processes, and a child and its parent.
@Suite(.onEveryStore) struct MergeConflictTests {
    let directory = TemporaryDirectory()

    /// Stores entry 1 with wind "calm" and height "1 ft", and returns two root contexts that both
    /// read it: on one coordinator, or each on its own.
    private func twoReaders(sameCoordinator: Bool, store: String = "conflicts") throws -> (a: ManagedObjectContext, b: ManagedObjectContext, id: ObjectID) {
        let url = directory.storeURL(store)
        let a = try makeRootContext(at: url)
        let id = try a.performAndWait {
            let entry = insertEntry(a, id: 1)
            entry["wind"] = "calm"
            entry["height"] = "1 ft"
            try a.save()
            return entry.objectID
        }
        let b: ManagedObjectContext
        if sameCoordinator {
            b = ManagedObjectContext(concurrencyType: .privateQueue)
            b.persistentStoreCoordinator = a.persistentStoreCoordinator
        } else {
            b = try makeRootContext(at: url)
        }
        // B keeps what it read (a context holds unchanged objects only while someone does).
        b.retainsRegisteredObjects = true
        try b.performAndWait { _ = try b.existingObject(with: id)["wind"] }
        return (a, b, id)
    }

    /// What a fresh coordinator reads for the entry: (wind, height), nil when it is gone.
    private func stored(_ id: ObjectID, store: String = "conflicts") throws -> (wind: String?, height: String?)? {
        let reader = try makeRootContext(at: directory.storeURL(store))
        return reader.performAndWait {
            guard let entry = try? reader.existingObject(with: id) else { return nil }
            return (entry["wind"] as? String, entry["height"] as? String)
        }
    }

    /// A sets wind and height and saves; then B, which read the entry before, sets wind and saves
    /// under `policy`. Core Data's results: error throws, storeTrump A/A, overwrite B/(what B read),
    /// rollback A/A, objectTrump B/A.
    @Test(arguments: [(MergePolicy.error, nil as String?, nil as String?),
                      (.mergeByPropertyStoreTrump, "A", "A"),
                      (.overwrite, "B", "1 ft"),
                      (.rollback, "A", "A"),
                      (.mergeByPropertyObjectTrump, "B", "A")],
          [true, false])
    func theSecondSaveIsResolvedByItsPolicy(case: (policy: MergePolicy, wind: String?, height: String?), sameCoordinator: Bool) throws {
        let (a, b, id) = try twoReaders(sameCoordinator: sameCoordinator)
        try a.performAndWait {
            let entry = try a.existingObject(with: id)
            entry["wind"] = "A"
            entry["height"] = "A"
            try a.save()
        }
        b.mergePolicy = `case`.policy
        let outcome = Result { try b.performAndWait { () throws -> (String?, String?) in
            let entry = try b.existingObject(with: id)
            entry["wind"] = "B"
            try b.save()
            // The object shows what the store kept.
            return (entry["wind"] as? String, entry["height"] as? String)
        } }
        guard let wind = `case`.wind else {
            // .error: the save fails naming the object, what B changed and what A changed; nothing moved.
            expectKind(.mergeConflict) { try outcome.get() }
            guard case .failure(let error as StoreError) = outcome else { return }
            #expect(error.objects == [id])
            let conflict = try #require(error.conflicts.first)
            #expect(conflict.objectID == id)
            #expect(conflict.changed == ["wind"])
            #expect(conflict.theirChanges == ["wind", "height"])
            #expect(conflict.ours["wind"] as? String == "B")
            #expect(conflict.theirs?["wind"] as? String == "A")
            #expect(conflict.theirs?["height"] as? String == "A")
            #expect(!conflict.isDeletion)
            #expect(try stored(id)! == ("A", "A"))
            // B keeps its change: after a refresh it is based on A's save and saves.
            try b.performAndWait {
                #expect(b.hasChanges)
                let entry = try b.existingObject(with: id)
                b.refresh(entry, mergeChanges: true)
                try b.save()
            }
            #expect(try stored(id)! == ("B", "A"))
            return
        }
        let seen = try outcome.get()
        #expect(seen == (wind, `case`.height))
        #expect(try stored(id)! == (wind, `case`.height))
        b.performAndWait { #expect(!b.hasChanges) }
    }

    @Test(arguments: [true, false])
    func anEditOfAnObjectDeletedMeanwhileFailsExceptUnderRollback(sameCoordinator: Bool) throws {
        for policy in [MergePolicy.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback] {
            let store = "deleted-\(policy)"
            let (a, b, id) = try twoReaders(sameCoordinator: sameCoordinator, store: store)
            try a.performAndWait {
                a.delete(try a.existingObject(with: id))
                try a.save()
            }
            b.mergePolicy = policy
            let outcome = Result { try b.performAndWait {
                let entry = try #require(b.registeredObject(for: id))
                entry["wind"] = "B"
                try b.save()
            } }
            if policy == .rollback {
                try outcome.get()
                b.performAndWait { #expect(!b.hasChanges) }
            } else {
                expectKind(.mergeConflict, "policy \(policy)") { try outcome.get() }
                if case .failure(let error as StoreError) = outcome {
                    #expect(error.conflicts.map(\.objectID) == [id])
                    #expect(error.conflicts.first?.theirs == nil)
                }
            }
            #expect(try stored(id, store: store) == nil, "policy \(policy): the deleted entry came back")
        }
    }

    @Test func aDeleteOfAnObjectChangedMeanwhileIsAConflictTheTrumpPoliciesLetThrough() throws {
        for (policy, deleted) in [(MergePolicy.error, false), (.mergeByPropertyObjectTrump, true), (.overwrite, true),
                                  (.mergeByPropertyStoreTrump, true), (.rollback, false)] {
            let store = "delete-\(policy)"
            let (a, b, id) = try twoReaders(sameCoordinator: false, store: store)
            try a.performAndWait {
                try a.existingObject(with: id)["wind"] = "A"
                try a.save()
            }
            b.mergePolicy = policy
            let outcome = Result { try b.performAndWait {
                b.delete(try b.existingObject(with: id))
                try b.save()
            } }
            if policy == .error {
                expectKind(.mergeConflict) { try outcome.get() }
                if case .failure(let error as StoreError) = outcome { #expect(error.conflicts.first?.isDeletion == true) }
            } else {
                try outcome.get()
            }
            if deleted {
                #expect(try stored(id, store: store) == nil, "policy \(policy)")
            } else {
                #expect(try stored(id, store: store)?.wind == "A", "policy \(policy)")
            }
        }
    }

    @Test func aContextThatMergedOrRefreshedTheOtherSaveHasNoConflict() throws {
        let (a, b, id) = try twoReaders(sameCoordinator: true)
        a.retainsRegisteredObjects = true
        let saved = try a.performAndWait { () throws -> ContextDidSaveChanges in
            try a.existingObject(with: id)["height"] = "A"
            return try a.saveReturningChanges()
        }
        try b.performAndWait {
            let entry = try #require(b.registeredObject(for: id))
            entry["wind"] = "B"
            b.mergeChanges(saved)
            #expect(entry["height"] as? String == "A")
            try b.save()
        }
        #expect(try stored(id)! == ("B", "A"))
        // A's object is now stale: its next edit conflicts until it refreshes.
        try a.performAndWait {
            let entry = try a.existingObject(with: id)
            entry["height"] = "A2"
            expectKind(.mergeConflict) { try a.save() }
            a.refresh(entry, mergeChanges: true)
            #expect(entry["wind"] as? String == "B")
            #expect(entry["height"] as? String == "A2")
            try a.save()
        }
        #expect(try stored(id)! == ("B", "A2"))
    }

    @Test func aConflictInOneObjectSavesNothingOfTheOthers() throws {
        let (a, b, id) = try twoReaders(sameCoordinator: false)
        try a.performAndWait {
            try a.existingObject(with: id)["wind"] = "A"
            try a.save()
        }
        expectKind(.mergeConflict) {
            try b.performAndWait {
                insertEntry(b, id: 2)
                try b.existingObject(with: id)["height"] = "B"
                try b.save()
            }
        }
        #expect(try storedRowCount(directory.storeURL("conflicts")) == 1)
        #expect(try stored(id)! == ("A", "1 ft"))
    }

    /// Between a child and its parent: the parent changed the object after the child read it.
    @Test func aChildsSaveMeetsItsParentsNewerChangeByTheChildsPolicy() throws {
        let container = try makeContainer(directory)
        let view = container.viewContext
        let id = try view.performAndWait {
            let entry = insertEntry(view, id: 1)
            entry["wind"] = "calm"
            try view.save()
            return entry.objectID
        }
        for policy in [MergePolicy.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump] {
            let child = container.newBackgroundContext()
            child.retainsRegisteredObjects = true
            child.mergePolicy = policy
            try child.performAndWait { _ = try child.existingObject(with: id)["wind"] }
            try view.performAndWait { try view.existingObject(with: id)["wind"] = "view" }
            let outcome = Result { try child.performAndWait {
                try #require(child.registeredObject(for: id))["wind"] = "child"
                try child.save()
            } }
            let wind = try view.performAndWait { try view.existingObject(with: id)["wind"] as? String }
            switch policy {
            case .error:
                expectKind(.mergeConflict) { try outcome.get() }
                #expect(wind == "view")
            case .mergeByPropertyObjectTrump:
                try outcome.get()
                #expect(wind == "child")
            default:
                try outcome.get()
                #expect(wind == "view")
            }
            view.performAndWait { view.rollback() }
        }
    }

    /// Statement 61: the saving context's policy decides key conflicts too — a background
    /// import with `.objectTrump` upserts although the view context keeps `.error`.
    @Test func theSavingContextsPolicyDecidesKeyConflicts() throws {
        let container = try makeContainer(directory)
        try container.viewContext.performAndWait {
            insertEntry(container.viewContext, id: 7, location: "old")
            try container.viewContext.save()
        }
        #expect(container.viewContext.mergePolicy == .error)
        let background = container.newBackgroundContext()
        background.mergePolicy = .objectTrump
        try background.performAndWait {
            insertEntry(background, id: 7, location: "new")
            try background.save()
        }
        try container.viewContext.performAndWait { try container.viewContext.save() }
        try container.writerContext.performAndWait { try container.writerContext.save() }
        let locations = try container.viewContext.performAndWait {
            try container.viewContext.fetch(FetchRequest(entityName: "JournalEntry")).map { $0["location"] as? String }
        }
        #expect(locations == ["new"])
        // And the other way round: the child's .error fails where the parent would upsert; a
        // child whose policy was never set takes its parent's.
        container.viewContext.mergePolicy = .objectTrump
        let inheriting = container.newBackgroundContext()
        #expect(inheriting.mergePolicy == .objectTrump)
        let strict = container.newBackgroundContext()
        strict.mergePolicy = .error
        expectKind(.constraintConflict) {
            try strict.performAndWait {
                insertEntry(strict, id: 7, location: "newer")
                try strict.save()
            }
        }
    }

    /// Two processes on one SQLite file, or two runners on one PostgreSQL database: the other
    /// process's save is a conflict here.
    @Test(.onStores(except: .memory, "another process cannot reach an in-memory store"))
    func aSaveFromAnotherProcessIsAConflict() async throws {
        let url = directory.storeURL("processes")
        let here = try makeRootContext(at: url)
        let id = try here.performAndWait {
            let entry = insertEntry(here, id: 1)
            entry["wind"] = "calm"
            try here.save()
            return entry.objectID
        }
        try here.performAndWait { try here.existingObject(with: id)["wind"] = "here" }
        let address = url.absoluteString
        await #expect(processExitsWith: .success) { [address = address as String] in
            let context = try makeRootContext(at: URL(string: address)!)
            try context.performAndWait {
                let entry = try context.fetch(FetchRequest(entityName: "JournalEntry"))[0]
                entry["wind"] = "there"
                try context.save()
            }
        }
        expectKind(.mergeConflict) { try here.performAndWait { try here.save() } }
        here.mergePolicy = .objectTrump
        try here.performAndWait { try here.save() }
        let reader = try makeRootContext(at: url)
        let wind = try reader.performAndWait { try reader.existingObject(with: id)["wind"] as? String }
        #expect(wind == "here")
    }
}

/// Expects `body` to throw a `StoreError` of `kind` (recording what it threw otherwise).
func expectKind<T>(_ kind: StoreError.Kind, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                   _ body: () throws -> T) {
    do {
        _ = try body()
        Issue.record("expected a \(kind) error, nothing was thrown\(comment.map { ": \($0)" } ?? "")", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(error.kind == kind, "\(error)\(comment.map { " — \($0)" } ?? "")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a \(kind) store error, got \(error)", sourceLocation: sourceLocation)
    }
}
