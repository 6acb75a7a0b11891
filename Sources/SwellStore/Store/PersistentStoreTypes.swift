import Foundation
import SwellInMemoryStore
import SwellPostgres
import SwellSQLite
import SwellStoreCore

/// The store types a coordinator opens, by URL scheme — the container's default store and
/// the others SwellStore brings: a file path or `file:` URL is the SQLite store, `memory:`
/// the in-memory store, `postgres:` and `postgresql:` the PostgreSQL store. The one place
/// that names store types: every other part of SwellStore talks to a store through the
/// `PersistentStore` protocol. A type registered for a scheme (`StoreTypeRegistry`) comes
/// before these (Core Data's `registerStoreClass(_:type:)`).
enum PersistentStoreTypes {
    /// The store for `url`: the type registered for its scheme, else SwellStore's own.
    static func store(for url: URL) throws(StoreError) -> any PersistentStore {
        guard let scheme = url.scheme?.lowercased(), !url.isFileURL else { return SQLiteStore(url: url) }
        if let registered = StoreTypeRegistry.factory(for: scheme) { return registered(url) }
        switch scheme {
        case "memory": return InMemoryStore.named(by: url)
        case "postgres", "postgresql": return PostgresStore(url: url)
        default: throw .unknownStoreType(scheme: scheme)
        }
    }
}
