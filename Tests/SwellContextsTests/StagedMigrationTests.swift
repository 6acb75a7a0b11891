import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 58: model versions, a migration plan's stages in order, each its own work, a run
/// stopped between stages continuing at the next, unknown versions refused untouched.
@Suite(.onEveryStore) struct StagedMigrationTests {
    let directory = TemporaryDirectory()

    /// v1: Person(id, name). v2 adds given and family, filled from name by a custom stage.
    /// v3 drops name and renames family to surname (lightweight).
    static func version(_ number: Int) -> ManagedObjectModel {
        var attributes = [AttributeDescription(name: "id", type: .integer)]
        if number < 3 { attributes.append(AttributeDescription(name: "name", type: .string, isOptional: true)) }
        if number == 2 {
            attributes += [AttributeDescription(name: "given", type: .string, isOptional: true),
                           AttributeDescription(name: "family", type: .string, isOptional: true)]
        }
        if number == 3 {
            attributes += [AttributeDescription(name: "given", type: .string, isOptional: true),
                           AttributeDescription(name: "surname", type: .string, isOptional: true, renamingIdentifier: "family")]
        }
        return ManagedObjectModel(entities: [EntityDescription(name: "Person", attributes: attributes, uniquenessConstraint: ["id"])],
                                  versionIdentifier: "v\(number)")
    }

    /// The plan v1 → v2 → v3; `log` records what ran; `fail` names a step that throws instead.
    static func plan(_ log: StageLog, fail: String? = nil) -> MigrationPlan {
        MigrationPlan(versions: [version(1), version(2), version(3)], stages: [
            .custom(willMigrate: { context in
                try log.run("willMigrate v1", fail: fail)
                // On the old model: tidy the old data before the schema changes.
                for person in try context.fetch(FetchRequest(entityName: "Person")) {
                    person["name"] = (person["name"] as? String)?.trimmingCharacters(in: .whitespaces)
                }
            }, didMigrate: { context in
                try log.run("didMigrate v2", fail: fail)
                let added = context.insertNewObject(forEntityName: "Person")
                added["id"] = 100
                added["family"] = "Added"
            }, transform: ["Person": { old, new in
                if old["id"] as? Int == 1 { try log.run("transform", fail: fail) }
                guard let name = old["name"] as? String else { return }
                let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
                new["given"] = parts.first
                new["family"] = parts.count > 1 ? parts[1] : nil
            }]),
            .custom(willMigrate: { _ in try log.run("willMigrate v2", fail: fail) }),
        ])
    }

    private func seeded(_ opener: StoreOpener) throws {
        let context = try opener.open(Self.version(1))
        try context.performAndWait {
            for (id, name) in [(1, "  Ada Lovelace "), (2, "Grace Brewster Hopper"), (3, nil)] as [(Int, String?)] {
                let person = context.insertNewObject(forEntityName: "Person")
                person["id"] = id
                person["name"] = name
            }
            try context.save()
        }
    }

    private func people(_ context: ManagedObjectContext) throws -> [Int: [String]] {
        try context.performAndWait {
            var rows: [Int: [String]] = [:]
            for person in try context.fetch(FetchRequest(entityName: "Person")) {
                rows[person["id"] as? Int ?? -1] = ["given", "surname"].map { describe(person[$0]) }
            }
            return rows
        }
    }

    private static let migrated: [Int: [String]] = [
        1: ["s:Ada", "s:Lovelace"], 2: ["s:Grace", "s:Brewster Hopper"], 3: ["nil", "nil"], 100: ["nil", "s:Added"],
    ]

    @Test func aStoreTwoVersionsBehindRunsEveryStageInOrder() throws {
        let opener = StoreOpener(url: directory.storeURL("people"))
        try seeded(opener)
        let log = StageLog()
        let context = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
        #expect(try people(context) == Self.migrated)
        // At the newest version now: opening again runs nothing.
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries.count == 4)
    }

    @Test func aNewStoreIsCreatedAtTheNewestVersionAndRunsNoStage() throws {
        let opener = StoreOpener(url: directory.storeURL("fresh"))
        let log = StageLog()
        let context = try opener.open(Self.version(3), plan: Self.plan(log))
        try context.performAndWait {
            let person = context.insertNewObject(forEntityName: "Person")
            person["id"] = 1
            person["surname"] = "Noether"
            try context.save()
        }
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries.isEmpty)
        #expect(try people(try opener.open(Self.version(3))) == [1: ["nil", "s:Noether"]])
    }

    @Test func aStoreAtAVersionNotInThePlanFailsAndIsLeftUntouched() throws {
        let opener = StoreOpener(url: directory.storeURL("newer"))
        try seeded(opener)
        let log = StageLog()
        // The store is at v1; an app whose plan starts at v2 does not know it.
        let later = MigrationPlan(versions: [Self.version(2), Self.version(3)], stages: [.lightweight])
        let error = opener.migrationError(Self.version(3), plan: later)
        #expect(error?.modelVersion == "v1")
        #expect(error?.description.contains("'v1' is not in the migration plan (v2, v3)") == true)
        // Newer than the app: a store at v3 opened by an app at v2.
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        let older = MigrationPlan(versions: [Self.version(1), Self.version(2)], stages: [.lightweight])
        #expect(opener.migrationError(Self.version(2), plan: older)?.modelVersion == "v3")
        #expect(try people(try opener.open(Self.version(3))) == Self.migrated)
    }

    @Test func aStageThatFailsKeepsTheStagesBeforeItAndTheNextOpenContinues() throws {
        let opener = StoreOpener(url: directory.storeURL("again"))
        try seeded(opener)
        let log = StageLog()
        #expect(throws: StageLog.Planted.self) { _ = try opener.open(Self.version(3), plan: Self.plan(log, fail: "willMigrate v2")) }
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2"])
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
        #expect(try people(try opener.open(Self.version(3))) == Self.migrated)
    }

    @Test func aDidMigrateThatFailsRunsAtTheNextOpenAndNothingBeforeItAgain() throws {
        let opener = StoreOpener(url: directory.storeURL("did"))
        try seeded(opener)
        let log = StageLog()
        #expect(throws: StageLog.Planted.self) { _ = try opener.open(Self.version(3), plan: Self.plan(log, fail: "didMigrate v2")) }
        #expect(log.entries == ["willMigrate v1", "transform"])
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
        #expect(try people(try opener.open(Self.version(3))) == Self.migrated)
    }

    @Test func aTransformThatFailsRollsItsStageBackWhole() throws {
        let opener = StoreOpener(url: directory.storeURL("transform"))
        try seeded(opener)
        let log = StageLog()
        #expect(throws: StoreError.self) { _ = try opener.open(Self.version(3), plan: Self.plan(log, fail: "transform")) }
        // willMigrate's save stands (and is not repeated); the schema is still v1's.
        let v1 = try opener.open(Self.version(1))
        let names = try v1.performAndWait { try v1.fetch(FetchRequest(entityName: "Person")).compactMap { $0["name"] as? String }.sorted() }
        #expect(names == ["Ada Lovelace", "Grace Brewster Hopper"])
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
        #expect(try people(try opener.open(Self.version(3))) == Self.migrated)
    }

    /// A plan run from a version read before another process migrated the store (a stale read)
    /// is refused at its first step, inside that step's transaction: nothing is taken back or
    /// transformed twice.
    @Test func aStageStartedFromAStaleVersionIsRefusedAndTakesNothingBack() throws {
        let opener = StoreOpener(url: directory.storeURL("stale"))
        try seeded(opener)
        let log = StageLog()
        _ = try opener.open(Self.version(3), plan: Self.plan(log))
        let stale = StagedMigration(plan: Self.plan(log), url: opener.url, storeTypes: StoreType.linked)
        #expect(opener.migrationError { try stale.run(from: Self.version(1)) }?.modelVersion == "v3")
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
        #expect(try people(try opener.open(Self.version(3))) == Self.migrated)
    }

    /// A store opened before it had versions is placed by its model's shape, and migrated on.
    @Test func anUnversionedStoreIsPlacedByItsModel() throws {
        let opener = StoreOpener(url: directory.storeURL("unversioned"))
        var unversioned = Self.version(1)
        unversioned.versionIdentifier = nil
        let context = try opener.open(unversioned)
        try context.performAndWait {
            let person = context.insertNewObject(forEntityName: "Person")
            person["id"] = 1
            person["name"] = "Ada Lovelace"
            try context.save()
        }
        let log = StageLog()
        #expect(try people(try opener.open(Self.version(3), plan: Self.plan(log)))[1] == ["s:Ada", "s:Lovelace"])
        #expect(log.entries == ["willMigrate v1", "transform", "didMigrate v2", "willMigrate v2"])
    }

    /// The stage's closures are plain closures, as in Core Data and SwiftData: they may change
    /// the caller's state (they run on the thread that opens the store, one after another).
    @Test func stageClosuresMayChangeTheCallersState() throws {
        let opener = StoreOpener(url: directory.storeURL("closures"))
        try seeded(opener)
        var seen: [String] = []
        var transformed = 0
        let plan = MigrationPlan(versions: [Self.version(1), Self.version(2)], stages: [
            .custom(willMigrate: { _ in seen.append("will") }, didMigrate: { _ in seen.append("did") },
                    transform: ["Person": { _, _ in transformed += 1 }]),
        ])
        _ = try opener.open(Self.version(2), plan: plan)
        #expect(seen == ["will", "did"])
        #expect(transformed == 3)
    }

    /// A transform of a renamed entity may be keyed by its new name or by the name it had.
    @Test func aTransformOfARenamedEntityMayUseItsOldName() throws {
        let opener = StoreOpener(url: directory.storeURL("renamed"))
        try seeded(opener)
        var human = Self.version(2).entities[0]
        human.name = "Human"
        human.renamingIdentifier = "Person"
        let v2 = ManagedObjectModel(entities: [human], versionIdentifier: "v2")
        let plan = MigrationPlan(versions: [Self.version(1), v2], stages: [
            .custom(transform: ["Person": { old, new in new["given"] = (old["name"] as? String)?.uppercased() }]),
        ])
        let context = try opener.open(v2, plan: plan)
        let given = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Human")).compactMap { $0["given"] as? String }.sorted()
        }
        #expect(given == ["  ADA LOVELACE ", "GRACE BREWSTER HOPPER"])
    }

    @Test func aPlanThatDoesNotFitIsRefused() {
        let opener = StoreOpener(url: directory.storeURL("plan"))
        for plan in [MigrationPlan(versions: [Self.version(1), Self.version(3)], stages: []),
                     MigrationPlan(versions: [Self.version(1), Self.version(2)], stages: [.lightweight]),
                     MigrationPlan(versions: [Self.version(1), Self.version(3)], stages: [.custom(transform: ["Nobody": { _, _ in }])])] {
            #expect {
                _ = try opener.open(Self.version(3), plan: plan)
            } throws: { error in
                (error as? StoreError)?.kind == .invalidMigrationPlan
            }
        }
    }

    /// A process killed in a stage (SIGKILL: nothing of it runs on) continues at the next open.
    @Test(.onStores(except: .memory, "an in-memory store lives in one process"),
          arguments: ["didMigrate v2", "willMigrate v2"])
    func aProcessKilledBetweenStagesContinuesAtTheNextStage(killedIn step: String) async throws {
        let url = directory.storeURL("killed")
        try seeded(StoreOpener(url: url))
        await #expect(processExitsWith: .signal(SIGKILL)) { [url = url.absoluteString as String, step = step as String] in
            let log = StageLog(killIn: step)
            _ = try StoreOpener(url: URL(string: url)!).open(Self.version(3), plan: Self.plan(log))
        }
        let log = StageLog()
        let context = try StoreOpener(url: url).open(Self.version(3), plan: Self.plan(log))
        // What committed before the kill is not done again: the step killed, and what follows it, are.
        #expect(log.entries == (step == "didMigrate v2" ? ["didMigrate v2", "willMigrate v2"] : ["willMigrate v2"]))
        #expect(try people(context) == Self.migrated)
    }
}

/// What a plan's code ran, in order; a planted failure or kill for the tests.
/// `@unchecked Sendable`: `_entries` is only touched under `lock`.
final class StageLog: @unchecked Sendable {
    struct Planted: Error {}
    private let lock = NSLock()
    private var _entries: [String] = []
    private let killIn: String?

    init(killIn: String? = nil) { self.killIn = killIn }

    var entries: [String] { lock.withLock { _entries } }

    /// Records `step`; throws instead when `fail` names it, and kills the process when `killIn` does.
    func run(_ step: String, fail: String? = nil) throws {
        if killIn == step { kill(getpid(), SIGKILL) }
        if fail == step { throw Planted() }
        lock.withLock { _entries.append(step) }
    }
}

extension StoreOpener {
    /// A root context on a new coordinator that added the store through `plan`.
    func open(_ model: ManagedObjectModel, plan: MigrationPlan) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url, migrationPlan: plan)
        keep(coordinator)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The `.migrationFailed` error opening through `plan` throws (nil: it opened).
    func migrationError(_ model: ManagedObjectModel, plan: MigrationPlan) -> StoreError? {
        migrationError { _ = try open(model, plan: plan) }
    }
}
