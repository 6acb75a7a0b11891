import Foundation
import SwellLocks

/// The store types a coordinator can open, by URL scheme (Core Data's
/// `registerStoreClass(_:type:)`): a file path or `file:` URL is the SQLite
/// store, `memory:` the in-memory store, and a module that brings another store
/// registers it here (`SwellPostgres` registers `postgres` and `postgresql`), so
/// `SwellStore` never imports it and users who never name such a URL never load it.
package enum PersistentStoreTypes {
    /// Makes a store for a URL; it is opened by its `load`.
    package typealias Factory = @Sendable (URL) -> any PersistentStore

    private static let factories = LockedValue<[String: Factory]>(["memory": { InMemoryStore.named(by: $0) }])

    /// Registers `factory` for URLs whose scheme is `scheme` (case-insensitive); the last one registered wins.
    package static func register(scheme: String, _ factory: @escaping Factory) {
        factories.withLock { $0[scheme.lowercased()] = factory }
    }

    /// The store for `url`: SQLite for files, else the type registered for its scheme.
    static func store(for url: URL) throws(StoreError) -> any PersistentStore {
        guard let scheme = url.scheme?.lowercased(), !url.isFileURL else { return SQLiteStore(url: url) }
        if let factory = factories.withLock({ $0[scheme] }) { return factory(url) }
        guard registerLinkedStoreType(for: scheme), let factory = factories.withLock({ $0[scheme] }) else {
            throw .unknownStoreType(scheme: scheme)
        }
        return factory(url)
    }

    /// The store types Swell's own modules bring, by scheme, and the type that registers them.
    private static let knownTypes = ["postgres": "SwellPostgres.PostgresStore", "postgresql": "SwellPostgres.PostgresStore"]

    /// Registers the store type for `scheme` when its module is linked into the program
    /// but nobody called its `register()`: PostgreSQL store guarantees has a `postgres://` URL given
    /// to `addPersistentStore(at:)` select the PostgreSQL store, and `SwellStore` cannot
    /// import `SwellPostgres` (which depends on it). The Swift runtime finds the type by
    /// name among the program's loaded modules; a program without the module gets nil.
    private static func registerLinkedStoreType(for scheme: String) -> Bool {
        guard let name = knownTypes[scheme],
              let type = _typeByName(name) as? any RegisteringStoreType.Type else { return false }
        type.register()
        return true
    }
}

/// A store type that registers its URL schemes with `PersistentStoreTypes` (the PostgreSQL store).
package protocol RegisteringStoreType {
    /// Registers the type's schemes.
    static func register()
}
