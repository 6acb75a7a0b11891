import Foundation

/// A kind of persistent store a coordinator opens by URL, as Core Data's store types are: the
/// URLs it takes and how its store is made. Each store module brings its own —
/// `StoreType.sqlite` (SwellSQLite: file paths and `file:` URLs), `.inMemory`
/// (SwellInMemoryStore: `memory://name`), `.postgres` (SwellPostgres: `postgres://` and
/// `postgresql://`) — and a coordinator opens only the types it was given, so a program links
/// the stores it names and no other. `import SwellStore` gives them by its package traits
/// (README "Store types": SQLite and in-memory always, PostgreSQL with the `PostgreSQL` trait).
public struct StoreType: Sendable, CustomStringConvertible {
    /// The store's name in messages ("SQLite", "in-memory", "PostgreSQL").
    public let name: String
    /// The URL schemes it opens, lower case.
    package let schemes: [String]
    /// Whether it opens file URLs and plain paths.
    package let opensFiles: Bool
    /// Makes the store for a URL it takes; the store is opened by its `load`.
    package let make: @Sendable (URL) -> any PersistentStore

    package init(name: String, schemes: [String], opensFiles: Bool = false,
                 make: @escaping @Sendable (URL) -> any PersistentStore) {
        self.name = name
        self.schemes = schemes.map { $0.lowercased() }
        self.opensFiles = opensFiles
        self.make = make
    }

    public var description: String { name }

    /// What the type opens, for messages: "file paths and file: URLs", "memory://".
    var opens: String {
        let forms = (opensFiles ? ["file paths and file: URLs"] : []) + schemes.map { "\($0)://" }
        return forms.joined(separator: ", ")
    }

    /// The store for `url`: a store type registered for its scheme inside the package
    /// (`StoreTypeRegistry`, left for `PostgresStore.register()`), else the first of `types`
    /// that takes it.
    ///
    /// - Throws: `StoreError.unknownStoreType`, naming the scheme and what `types` open.
    package static func store(for url: URL, among types: [StoreType]) throws(StoreError) -> any PersistentStore {
        guard let scheme = url.scheme?.lowercased(), !url.isFileURL else {
            guard let type = types.first(where: \.opensFiles) else {
                throw .unknownStoreType(scheme: "file", linked: types)
            }
            return type.make(url)
        }
        if let registered = StoreTypeRegistry.factory(for: scheme) { return registered(url) }
        guard let type = types.first(where: { $0.schemes.contains(scheme) }) else {
            throw .unknownStoreType(scheme: scheme, linked: types)
        }
        return type.make(url)
    }
}
