import SwellStoreCore

/// A custom stage's transform of one object (Store guarantees 58): the old object's attribute
/// values by their old names (`String`, `Int`, `Double`, `Bool`, `Date`; nil ones absent), and
/// the new object's by the new names, as the lightweight rules made them — set, change or remove
/// (nil) what the new model needs. What it leaves alone is carried over.
public typealias MigrationTransform = (_ old: [String: Any], _ new: inout [String: Any]) throws -> Void

/// One step between two model versions of a `MigrationPlan` (Core Data's `NSMigrationStage`,
/// SwiftData's `MigrationStage`).
///
/// `@unchecked Sendable`: its closures are plain ones (they may capture and change the caller's
/// state, as Core Data's and SwiftData's do) and are only ever called by the `addPersistentStore`
/// or `loadPersistentStores` call running the plan, on its thread, one at a time; a plan shared
/// between threads must not be run by two of them at once.
public enum MigrationStage: @unchecked Sendable {
    /// The lightweight migration (Store guarantees 57): renames, removed attributes, defaults, widenings.
    case lightweight
    /// The lightweight migration with code around it: `willMigrate` gets a context on the old
    /// model (read and change old data; its changes are saved before the schema changes),
    /// `didMigrate` one on the new model (its changes are saved after), and `transform`, per
    /// entity of the new model, sees each old object's values and writes the new object's, in
    /// the same transaction as the schema change.
    case custom(willMigrate: ((ManagedObjectContext) throws -> Void)? = nil,
                didMigrate: ((ManagedObjectContext) throws -> Void)? = nil,
                transform: [String: MigrationTransform] = [:])
}

/// The versions a store's model went through, oldest first, and a stage between each pair
/// (Core Data's `NSStagedMigrationManager`, SwiftData's `SchemaMigrationPlan`; Store guarantees
/// 58, DocC "Migrating a store").
///
/// `PersistentStoreCoordinator.addPersistentStore(at:migrationPlan:)` finds the store's recorded
/// version among `versions` and runs every later stage in order; a new store is created at the
/// newest version and runs none.
public struct MigrationPlan: Sendable {
    /// The model versions, oldest first; each has a distinct `versionIdentifier`, and the last is
    /// the coordinator's model.
    public let versions: [ManagedObjectModel]
    /// The stage from `versions[i]` to `versions[i + 1]`, for each `i`.
    public let stages: [MigrationStage]

    /// Creates a plan; `stages.count` must be `versions.count - 1` (checked when the plan is used).
    public init(versions: [ManagedObjectModel], stages: [MigrationStage]) {
        self.versions = versions
        self.stages = stages
    }

    /// A plan whose stages are all lightweight.
    public static func lightweight(_ versions: [ManagedObjectModel]) -> MigrationPlan {
        MigrationPlan(versions: versions, stages: Array(repeating: .lightweight, count: max(versions.count - 1, 0)))
    }

    /// Checks the plan's shape for a coordinator of `model`.
    func check(for model: ManagedObjectModel) throws(StoreError) {
        func refuse(_ reason: String) -> StoreError { .invalidMigrationPlan(reason) }
        guard let newest = versions.last else { throw refuse("it lists no model version") }
        guard stages.count == versions.count - 1 else {
            throw refuse("it has \(stages.count) stage(s) for \(versions.count) version(s); it needs one between each pair (\(versions.count - 1))")
        }
        var seen = Set<String>()
        for (position, version) in versions.enumerated() {
            guard let identifier = version.versionIdentifier else { throw refuse("version \(position + 1) has no versionIdentifier") }
            guard seen.insert(identifier).inserted else { throw refuse("the version '\(identifier)' is listed twice") }
            do {
                try version.validate()
            } catch {
                throw refuse("version '\(identifier)': \(error)")
            }
        }
        for (position, stage) in stages.enumerated() {
            guard case .custom(_, _, let transforms) = stage else { continue }
            let target = versions[position + 1]
            for entity in transforms.keys.sorted() where Self.entity(named: entity, in: target) == nil {
                throw refuse("stage \(position + 1)'s transform names the entity '\(entity)', which the version '\(target.versionIdentifier ?? "")' does not have")
            }
        }
        guard newest.versionIdentifier == model.versionIdentifier, newest.entities == model.entities else {
            throw refuse("its newest version ('\(newest.versionIdentifier ?? "")') is not the coordinator's model ('\(model.versionIdentifier ?? "unversioned")')")
        }
    }

    /// The position in `versions` of the model a store recorded: by its version, or for a store
    /// opened without versions, the version whose model it is.
    func position(of recorded: ManagedObjectModel) throws(StoreError) -> Int {
        if let identifier = recorded.versionIdentifier {
            if let position = versions.firstIndex(where: { $0.versionIdentifier == identifier }) { return position }
            throw .migrationFailed(version: identifier, reason: "the store's model version '\(identifier)' is not in the migration plan (\(listed)); a store newer than the app, or from another plan, is left untouched")
        }
        let shapes = Dictionary(recorded.entities.map { ($0.name, Self.shape(of: $0)) }, uniquingKeysWith: { first, _ in first })
        if let position = versions.firstIndex(where: { version in
            version.storageModel.entities.allSatisfy { shapes[$0.name] == Self.shape(of: $0) }
        }) { return position }
        throw .migrationFailed(version: nil, reason: "the store recorded no model version, and its model is none of the migration plan's (\(listed))")
    }

    /// The entity of `version` a transform's key names: by its name, or by the name it had
    /// (its `renamingIdentifier`).
    static func entity(named name: String, in version: ManagedObjectModel) -> EntityDescription? {
        version.entitiesByName[name] ?? version.entities.first { $0.renamingIdentifier == name }
    }

    /// What placing an unversioned store compares: names, types, optionality, relationship
    /// columns and the key — not defaults, rules or renaming identifiers.
    private static func shape(of entity: EntityDescription) -> [String] {
        [entity.uniquenessConstraint.joined(separator: ",")] + entity.attributes.map { attribute in
            "\(attribute.name):\(attribute.type.rawValue):\(attribute.isOptional):\(attribute.destination ?? ""):\(attribute.join?.table ?? "")"
        }
    }

    private var listed: String { versions.compactMap(\.versionIdentifier).joined(separator: ", ") }
}
