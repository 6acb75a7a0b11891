import SwellContexts
import SwellStoreCore

/// One version of a typed model (SwiftData's `VersionedSchema`): its identifier and its
/// `@Entity` classes, usually declared inside the conforming enum so each version keeps its own
/// classes (DocC "Migrating a store").
///
/// ```swift
/// enum JournalV1: VersionedSchema {
///     static let versionIdentifier = "1"
///     static var models: [any PersistentModel.Type] { [Entry.self] }
///     @Entity final class Entry { @Unique var id: Int; var location: String? ; init(id: Int) { self.id = id } }
/// }
/// ```
public protocol VersionedSchema {
    /// The version's identifier, recorded in the store (``ManagedObjectModel/versionIdentifier``).
    static var versionIdentifier: String { get }
    /// The version's entity classes.
    static var models: [any PersistentModel.Type] { get }
}

extension VersionedSchema {
    /// The version's model: its classes' entities, with its identifier.
    public static var managedObjectModel: ManagedObjectModel {
        var model = ManagedObjectModel(entities: models as [Any])
        model.versionIdentifier = versionIdentifier
        return model
    }
}

/// A typed migration plan (SwiftData's `SchemaMigrationPlan`): the schema versions oldest first
/// and a stage between each pair; `MigrationPlan(JournalPlan.self)` is the plan a coordinator or
/// container takes.
public protocol SchemaMigrationPlan {
    /// The versions, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stage from `schemas[i]` to `schemas[i + 1]`, for each `i`.
    static var stages: [MigrationStage] { get }
}

extension MigrationPlan {
    /// The plan of a typed `SchemaMigrationPlan`.
    public init(_ plan: any SchemaMigrationPlan.Type) {
        self.init(versions: plan.schemas.map { $0.managedObjectModel }, stages: plan.stages)
    }
}
