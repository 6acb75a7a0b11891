import Foundation
import SwellInMemoryStore
import SwellSQLite
#if PostgreSQL
import SwellPostgres
#endif

extension StoreType {
    /// The store types `import SwellStore` opens by URL: SQLite (file paths and `file:` URLs)
    /// and in-memory (`memory://`) always; PostgreSQL (`postgres://`, `postgresql://`) with
    /// the package trait `PostgreSQL`, on by default. A package that depends on Swell with
    /// `traits: []` links neither libpq nor the macros' swift-syntax (README "Store types").
    public static var linked: [StoreType] {
        #if PostgreSQL
        [.sqlite, .inMemory, .postgres]
        #else
        [.sqlite, .inMemory]
        #endif
    }
}

extension PersistentStoreCoordinator {
    /// Creates a coordinator for a model that opens the store types SwellStore links
    /// (``StoreType/linked``). The model is checked when a store is added.
    public convenience init(managedObjectModel: ManagedObjectModel) {
        self.init(managedObjectModel: managedObjectModel, storeTypes: StoreType.linked)
    }
}

extension PersistentContainer {
    /// Creates the stack over a store of one of the types SwellStore links
    /// (``StoreType/linked``); call `loadPersistentStores()` before using it. Without
    /// `storeURL`, the store is `<name>.sqlite` in `defaultDirectoryURL()`. With a
    /// `migrationPlan`, loading runs its stages (DocC "Migrating a store").
    public convenience init(name: String, managedObjectModel: ManagedObjectModel, storeURL: URL? = nil,
                            options: PersistentStoreOptions = PersistentStoreOptions(), migrationPlan: MigrationPlan? = nil) {
        self.init(name: name, managedObjectModel: managedObjectModel, storeURL: storeURL, options: options,
                  migrationPlan: migrationPlan, storeTypes: StoreType.linked)
    }
}
