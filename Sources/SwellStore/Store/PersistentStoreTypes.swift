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
        guard let factory = factories.withLock({ $0[scheme] }) else { throw .unknownStoreType(scheme: scheme) }
        return factory(url)
    }
}
