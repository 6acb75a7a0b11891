import Foundation
import SwellInMemoryStore
import SwellPostgres
import SwellSQLite
import SwellStoreCore

/// The store types a container opens by URL when nothing else was registered for the scheme:
/// a file path or `file:` URL is the SQLite store, `memory:` the in-memory store, `postgres:`
/// and `postgresql:` the PostgreSQL store. The one place that names store types; SwellStore's
/// contexts and coordinator talk to every store through the `PersistentStore` protocol.
package enum DefaultStoreTypes {
    /// The store for `url`: the type registered for its scheme (`StoreTypeRegistry`), else one
    /// of these.
    package static func store(for url: URL) throws(StoreError) -> any PersistentStore {
        guard let scheme = url.scheme?.lowercased(), !url.isFileURL else { return SQLiteStore(url: url) }
        if let registered = StoreTypeRegistry.factory(for: scheme) { return registered(url) }
        switch scheme {
        case "memory": return InMemoryStore.named(by: url)
        case "postgres", "postgresql": return PostgresStore(url: url)
        default: throw .unknownStoreType(scheme: scheme)
        }
    }
}
