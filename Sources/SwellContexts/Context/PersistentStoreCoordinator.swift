import Foundation
import SwellLocks
import SwellStoreCore
import Synchronization

/// Connects root contexts to the persistent store: loads it, hands out
/// permanent object IDs and serves reads and commits.
///
/// Many contexts may share one coordinator; it is `Sendable` and may be used
/// from any queue. One coordinator writes to a store file at a time (the
/// `swell` command enforces this with its lock); others may read the same file.
public final class PersistentStoreCoordinator: Sendable {
    /// The model the store is kept in.
    public let managedObjectModel: ManagedObjectModel
    /// The model as the store keeps it (to-one relationships as columns after the attributes).
    let storageModel: ManagedObjectModel
    /// The storage model's entities by name.
    let entitiesByName: [String: EntityDescription]
    /// Whether any entity has a relationship (else saves skip the delete rules).
    let hasRelationships: Bool
    /// Per destination entity: the relationships without an inverse that point at it, as
    /// (source entity, relationship): deleting a destination clears them (to-one) or
    /// unlinks it (to-many).
    let incomingWithoutInverse: [String: [(entity: String, relationship: String)]]
    /// Attribute name → index, per entity.
    let attributeIndices: [String: [String: Int]]
    /// What validating an object checks, per entity (Store guarantees 55).
    let validationPlans: [String: EntityValidationPlan]

    private let state = LockedValue<State>(State())

    private struct State {
        var store: (any PersistentStore)?
        var rootContexts: [WeakContext] = []
    }

    /// The store types `addPersistentStore(at:)` chooses from by URL.
    public let storeTypes: [StoreType]

    /// Creates a coordinator for a model that opens stores of `storeTypes` (for example
    /// `[.sqlite]`, `[.sqlite, .postgres]`). The model is checked when a store is added.
    /// `import SwellStore` adds `init(managedObjectModel:)`, with the store types its package
    /// traits link (README "Store types").
    public init(managedObjectModel: ManagedObjectModel, storeTypes: [StoreType]) {
        self.managedObjectModel = managedObjectModel
        self.storeTypes = storeTypes
        storageModel = managedObjectModel.storageModel
        self.entitiesByName = storageModel.entitiesByName
        var indices: [String: [String: Int]] = [:]
        for entity in storageModel.entities {
            indices[entity.name] = Dictionary(entity.attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        }
        self.attributeIndices = indices
        var plans: [String: EntityValidationPlan] = [:]
        for entity in storageModel.entities {
            plans[entity.name] = EntityValidationPlan(entity: entity, entities: storageModel.entitiesByName, indices: indices[entity.name] ?? [:])
        }
        validationPlans = plans
        hasRelationships = managedObjectModel.entities.contains { !$0.relationships.isEmpty }
        var incoming: [String: [(entity: String, relationship: String)]] = [:]
        for entity in managedObjectModel.entities {
            for relationship in entity.relationships where relationship.inverse == nil {
                incoming[relationship.destination, default: []].append((entity.name, relationship.name))
            }
        }
        incomingWithoutInverse = incoming
    }

    /// Opens the store at `url` and migrates it to the model, with the first of
    /// ``storeTypes`` that takes the URL: for a file URL or path the SQLite store (creating
    /// the file and its directory if needed, in WAL mode); for `memory://…` an in-memory
    /// store; for `postgres://…` the PostgreSQL store.
    ///
    /// - Throws: `ModelError` for an unusable model; `StoreError.unknownStoreType` for a
    ///   URL none of the coordinator's store types opens (the message lists what they open); `StoreError.notAStore`, `.migrationFailed`,
    ///   `.diskFull` or `.sqlite` when the file cannot be used.
    ///
    /// With `options.history`, persistent history tracking is turned on for the store
    /// (`PersistentStoreOptions`); it stays on for every later writer of the store.
    public func addPersistentStore(at url: URL, options: PersistentStoreOptions = PersistentStoreOptions()) throws {
        try addPersistentStore(at: url, options: options, stage: MigrationStageWork())
    }

    /// Adds the store, doing in its load's transaction what a migration stage asks (`StagedMigration`).
    func addPersistentStore(at url: URL, options: PersistentStoreOptions, stage: MigrationStageWork) throws {
        try managedObjectModel.validate()
        let store = try StoreType.store(for: url, among: storeTypes)
        try store.load(model: storageModel, stage: stage)
        if options.history { try store.startHistory() }
        state.withLock { $0.store = store }
    }

    /// Closes the store on purpose (its connections; the last one to a SQLite file
    /// checkpoints it) and removes it from the coordinator: later fetches and saves throw
    /// `StoreError.noPersistentStore`. Closing a coordinator without a store does nothing.
    ///
    /// - Throws: `StoreError` when a connection cannot be closed (naming the statements it had open).
    public func close() throws(StoreError) {
        let store = state.withLock { state -> (any PersistentStore)? in
            defer { state.store = nil }
            return state.store
        }
        try store?.close()
    }

    /// The store, or `StoreError.noPersistentStore`.
    var store: any PersistentStore {
        get throws(StoreError) {
            guard let store = state.withLock({ $0.store }) else { throw .noPersistentStore }
            return store
        }
    }

    /// The URL of the store, once added.
    public var storeURL: URL? { state.withLock { $0.store?.url } }

    /// The store added (Core Data's `persistentStores`, of which a coordinator here has one),
    /// as an object of its store type's class — `PostgresStore`, for example — for what only
    /// that type offers; nil before ``addPersistentStore(at:options:)`` and after ``close()``.
    public var persistentStore: (any AnyObject & Sendable)? { state.withLock { $0.store } }

    var storeIdentifier: String { state.withLock { $0.store?.identifier ?? "unloaded" } }

    /// Root saves committed to the store so far (by any root context of this coordinator).
    var commitGeneration: UInt64 { commits.load(ordering: .acquiring) }

    /// A root save or batch request is about to commit (`noteCommit` or `noteFailedCommit` follows).
    func beginCommit() {
        recentCommits.withLock { $0.underWay += 1 }
    }

    /// Counts a root save that reached the store; called before its changes leave the in-flight level.
    /// `touched` says which rows it may have written (`CommitLog`): by default, any row.
    func noteCommit(touched: CommitLog.Touched = .anyRow) {
        recentCommits.withLock { log in
            log.underWay -= 1
            log.append(generation: commits.load(ordering: .relaxed) + 1, touched: touched)
            commits.add(1, ordering: .releasing)
        }
    }

    /// A commit failed: it may still have reached the store (a connection lost after the
    /// server committed), so it counts as one that may have written any row.
    func noteFailedCommit() {
        noteCommit(touched: .anyRow)
    }

    private let commits = Atomic<UInt64>(0)
    private let recentCommits = LockedValue(CommitLog())

    /// The keys (integers, or hashes of other keys) of `entity` whose rows a commit after `generation` may have written
    /// (one collection per commit); nil when that is not known: a save, a commit too long ago
    /// to be remembered, or a commit of another root context still under way. Called on the
    /// root's queue before its own commit begins.
    func keysWritten(after generation: UInt64, entity: String) -> [CommitLog.Keys]? {
        recentCommits.withLock { $0.underWay > 0 ? nil : $0.keysWritten(after: generation, entity: entity) }
    }

    /// Tells this coordinator's comparisons from another's (`ComparisonAhead`).
    var identity: ObjectIdentifier { ObjectIdentifier(self) }

    /// New primary keys for objects of `entity`: IDs are permanent from insert.
    /// Contexts take them in blocks, so inserts on many queues do not contend here.
    ///
    /// - Throws: when the store cannot hand them out (`PersistentStore.allocateIDs`).
    func allocatePrimaryKeys(for entity: String, count: Int64) throws(StoreError) -> Range<Int64> {
        // Without a store (a context used before one is added) IDs come from a local allocator.
        guard let store = state.withLock({ $0.store }) else { return unloadedIDs.allocate(for: entity, count: count) }
        return try store.allocateIDs(for: entity, count: count)
    }

    /// Whether a context of this coordinator was ever pinned to a query generation (Store
    /// guarantees 56): until one is, reads and saves look for no pin (one load, no locks).
    let queryGenerationsUsed = Atomic<Bool>(false)

    /// IDs handed out without the store: before one was added, or to an object inserted while
    /// the store could not hand out IDs (its context's save then fails with that error).
    let unloadedIDs = ObjectIDAllocator()

    /// Whether a new row of `entity`, whose key is its table's rowid, may take its key as
    /// its ID: only where `allocatePrimaryKeys` never hands that number out (`ObjectIDSpace`).
    /// That no object of a store made before that rule has the key as its ID is checked when
    /// the row is saved (`ChangeResolver`).
    func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool {
        state.withLock { $0.store }?.mayUseKeyAsID(key, for: entity) ?? false
    }

    func entity(named name: String) throws(StoreError) -> EntityDescription {
        guard let entity = entitiesByName[name] else { throw .unknownEntity(name) }
        return entity
    }

    func register(root context: ManagedObjectContext) {
        state.withLock { state in
            state.rootContexts.removeAll { $0.context == nil }
            state.rootContexts.append(WeakContext(context))
        }
    }

    var rootContexts: [ManagedObjectContext] {
        state.withLock { $0.rootContexts.compactMap(\.context) }
    }
}

/// A weak reference to a context, for lists that must not keep contexts alive.
struct WeakContext: Sendable {
    weak var context: ManagedObjectContext?
    init(_ context: ManagedObjectContext) { self.context = context }
}
