import Foundation
import SwellLocks
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
    let entitiesByName: [String: EntityDescription]
    /// Attribute name → index, per entity.
    let attributeIndices: [String: [String: Int]]

    private let state = LockedValue<State>(State())

    private struct State {
        var store: (any PersistentStore)?
        var nextPrimaryKey: [String: Int64] = [:]
        var rootContexts: [WeakContext] = []
    }

    /// Creates a coordinator for a model. The model is checked when a store is added.
    public init(managedObjectModel: ManagedObjectModel) {
        self.managedObjectModel = managedObjectModel
        self.entitiesByName = managedObjectModel.entitiesByName
        var indices: [String: [String: Int]] = [:]
        for entity in managedObjectModel.entities {
            indices[entity.name] = Dictionary(entity.attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        }
        self.attributeIndices = indices
    }

    /// Opens the SQLite store at `url` (creating it and its directory if needed)
    /// in WAL mode and migrates it to the model.
    ///
    /// - Throws: `ModelError` for an unusable model; `StoreError.notAStore`,
    ///   `.migrationFailed`, `.diskFull` or `.sqlite` when the file cannot be used.
    public func addPersistentStore(at url: URL) throws {
        try managedObjectModel.validate()
        for entity in managedObjectModel.entities where entity.attributes.count > AttributeMask.capacity {
            throw StoreError.migrationFailed(entity: entity.name, attribute: nil,
                                             reason: "more than \(AttributeMask.capacity) attributes")
        }
        let store = SQLiteStore(url: url)
        let maxKeys = try store.load(model: managedObjectModel)
        state.withLock {
            $0.store = store
            $0.nextPrimaryKey = maxKeys.mapValues { $0 + 1 }
        }
    }

    /// The store, or `StoreError.noPersistentStore`.
    var store: any PersistentStore {
        get throws(StoreError) {
            guard let store = state.withLock({ $0.store }) else { throw .noPersistentStore }
            return store
        }
    }

    /// The SQLite store, for tests that observe commits.
    var sqliteStore: SQLiteStore? { state.withLock { $0.store as? SQLiteStore } }

    /// The URL of the store, once added.
    public var storeURL: URL? { state.withLock { $0.store?.url } }

    var storeIdentifier: String { state.withLock { $0.store?.identifier ?? "unloaded" } }

    /// Root saves committed to the store so far (by any root context of this coordinator).
    var commitGeneration: UInt64 { commits.load(ordering: .acquiring) }

    /// Counts a root save that reached the store; called before its changes leave the in-flight level.
    func noteCommit() {
        commits.add(1, ordering: .releasing)
    }

    private let commits = Atomic<UInt64>(0)

    /// New primary keys for objects of `entity`: IDs are permanent from insert.
    /// Contexts take them in blocks, so inserts on many queues do not contend here.
    func allocatePrimaryKeys(for entity: String, count: Int64) -> Range<Int64> {
        state.withLock { state in
            let key = state.nextPrimaryKey[entity, default: 1]
            state.nextPrimaryKey[entity] = key + count
            return key..<(key + count)
        }
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
