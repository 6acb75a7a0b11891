import Foundation
import SwellStoreCore

extension PersistentStoreCoordinator {
    /// Opens the store at `url` and brings it to the coordinator's model through `migrationPlan`
    /// (Store guarantees 58; DocC "Migrating a store"): the store's recorded version is found
    /// among the plan's versions and every later stage runs, oldest first; then the store is
    /// added as `addPersistentStore(at:options:)` adds it. A new store is created at the newest
    /// version and runs no stage.
    ///
    /// Each stage is its own work, so a run killed between two stages continues at the next
    /// stage: a custom stage's `willMigrate` saves on the old model (once: the save records that
    /// it ran), the schema change and the `transform`s are one transaction that also records the
    /// new version, and `didMigrate` saves on the new model (once: its save clears the mark the
    /// schema change left).
    ///
    /// - Throws: `StoreError.invalidMigrationPlan` for a plan that does not fit the model;
    ///   `.migrationFailed` for a store whose recorded version is not in the plan (newer than the
    ///   model, or from another plan), untouched, or for a stage that cannot be applied (that
    ///   stage's transaction is rolled back; earlier stages stay done); what a `willMigrate` or
    ///   `didMigrate` throws.
    public func addPersistentStore(at url: URL, migrationPlan: MigrationPlan,
                                   options: PersistentStoreOptions = PersistentStoreOptions()) throws {
        try managedObjectModel.validate()
        try migrationPlan.check(for: managedObjectModel)
        let probe = try StoreType.store(for: url, among: storeTypes)
        if let recorded = try probe.recordedModel() {
            try StagedMigration(plan: migrationPlan, url: url, storeTypes: storeTypes).run(from: recorded)
        }
        try addPersistentStore(at: url, options: options)
        withExtendedLifetime(probe) {}
    }
}

/// Runs a plan's stages on one store, each through a coordinator of its own on the version it
/// needs (the store's load does the schema change; contexts do `willMigrate` and `didMigrate`).
/// What a stage has done is kept in the store's metadata under `markKey`, written in the same
/// transaction as the work it marks: "willMigrate <old version>" once `willMigrate` saved,
/// "didMigrate <new version>" from the schema change until `didMigrate` saved.
struct StagedMigration {
    let plan: MigrationPlan
    let url: URL
    let storeTypes: [StoreType]

    /// The metadata key of a stage's progress.
    static let markKey = "swell.migration.stage"

    func run(from recorded: ManagedObjectModel) throws {
        var position = try plan.position(of: recorded)
        if recorded.versionIdentifier == nil {
            // Placed by its model: record that version first (the same shape: nothing else changes).
            let coordinator = PersistentStoreCoordinator(managedObjectModel: plan.versions[position], storeTypes: storeTypes)
            try coordinator.addPersistentStore(at: url)
            try coordinator.close()
        }
        try finishDidMigrate(at: position)
        while position < plan.versions.count - 1 {
            let old = plan.versions[position], new = plan.versions[position + 1]
            let (willMigrate, didMigrate, transforms) = plan.stages[position].parts
            if let willMigrate {
                let mark = "willMigrate \(old.versionIdentifier ?? "")"
                try withContext(on: old) { context in
                    guard try context.storeMetadata(forKey: Self.markKey) != mark else { return }
                    try willMigrate(context)
                    context.setStoreMetadata(mark, forKey: Self.markKey)
                    try context.save()
                }
            }
            var work = MigrationStageWork(metadata: [Self.markKey: didMigrate == nil ? nil : "didMigrate \(new.versionIdentifier ?? "")"],
                                          versions: (old.versionIdentifier, new.versionIdentifier))
            for (name, transform) in transforms {
                // Keyed by the new entity's name, or by the name it had.
                guard let entity = MigrationPlan.entity(named: name, in: new) else { continue }
                work.transforms[entity.name] = try Self.rowTransform(transform, entity: entity.name, old: old, new: new)
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: new, storeTypes: storeTypes)
            try coordinator.addPersistentStore(at: url, options: PersistentStoreOptions(), stage: work)
            try coordinator.close()
            position += 1
            try finishDidMigrate(at: position)
        }
    }

    /// Runs the `didMigrate` of the stage into `versions[position]` if the store's mark says it
    /// has not run yet, and clears the mark in its save.
    private func finishDidMigrate(at position: Int) throws {
        guard position > 0, let didMigrate = plan.stages[position - 1].parts.didMigrate else { return }
        let version = plan.versions[position]
        try withContext(on: version) { context in
            guard try context.storeMetadata(forKey: Self.markKey) == "didMigrate \(version.versionIdentifier ?? "")" else { return }
            try didMigrate(context)
            context.setStoreMetadata(nil, forKey: Self.markKey)
            try context.save()
        }
    }

    /// Runs `body` on a root context of a coordinator of `version` over the store, which must be
    /// at that version (adding it changes nothing; a store another process moved on meanwhile is
    /// refused, never taken back), then closes that coordinator.
    private func withContext(on version: ManagedObjectModel, _ body: (ManagedObjectContext) throws -> Void) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: version, storeTypes: storeTypes)
        try coordinator.addPersistentStore(at: url, options: PersistentStoreOptions(),
                                           stage: MigrationStageWork(versions: (version.versionIdentifier, version.versionIdentifier)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.name = "migration \(version.versionIdentifier ?? "")"
        context.persistentStoreCoordinator = coordinator
        do {
            try context.performAndWait { try body(context) }
        } catch {
            // Closing only releases connections; the error `body` threw is the one to report.
            try? coordinator.close()
            throw error
        }
        try coordinator.close()
    }

    /// A transform of Swift values as the store's row transform: values converted by the old and
    /// new entities' attribute types; a value that does not fit its new attribute fails the
    /// stage naming it.
    static func rowTransform(_ transform: @escaping MigrationTransform, entity name: String,
                             old: ManagedObjectModel, new: ManagedObjectModel) throws -> MigrationRowTransform {
        guard let entity = new.entitiesByName[name] else {
            throw StoreError.invalidMigrationPlan("a transform names the entity '\(name)', which the version '\(new.versionIdentifier ?? "")' does not have")
        }
        let oldEntity = entity.renamingIdentifier.flatMap { old.entitiesByName[$0] } ?? old.entitiesByName[name]
        let oldTypes = Dictionary((oldEntity?.attributes ?? []).map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let newTypes = Dictionary(entity.attributes.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        return { oldValues, newValues in
            var oldObject: [String: Any] = [:]
            for (key, value) in oldValues { if let type = oldTypes[key], let swift = value.swiftValue(for: type) { oldObject[key] = swift } }
            var newObject: [String: Any] = [:]
            for (key, value) in newValues { if let type = newTypes[key], let swift = value.swiftValue(for: type) { newObject[key] = swift } }
            try transform(oldObject, &newObject)
            for key in newValues.keys {
                guard let type = newTypes[key] else { continue }
                guard let value = StoreValue(swiftValue: newObject[key], for: type) else {
                    throw StoreError.migrationFailed(entity: name, attribute: key,
                                                     reason: "the migration stage's transform set \(String(describing: newObject[key]!)), which is not a \(type.rawValue)")
                }
                newValues[key] = value
            }
        }
    }
}

extension MigrationStage {
    /// The stage's code, empty for a lightweight stage.
    var parts: (willMigrate: ((ManagedObjectContext) throws -> Void)?, didMigrate: ((ManagedObjectContext) throws -> Void)?,
                transforms: [String: MigrationTransform]) {
        switch self {
        case .lightweight: (nil, nil, [:])
        case .custom(let willMigrate, let didMigrate, let transform): (willMigrate, didMigrate, transform)
        }
    }
}
