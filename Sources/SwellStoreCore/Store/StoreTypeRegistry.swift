import Foundation
import SwellLocks

/// Store types registered by URL scheme (Core Data's `registerStoreClass(_:type:)`), ahead of
/// the ones SwellStore brings (SQLite, in-memory, PostgreSQL): a store of one's own for a
/// scheme of one's own.
package enum StoreTypeRegistry {
    /// Makes a store for a URL; it is opened by its `load`.
    package typealias Factory = @Sendable (URL) -> any PersistentStore

    private static let factories = LockedValue<[String: Factory]>([:])

    /// Registers `factory` for URLs whose scheme is `scheme` (case-insensitive); the last one registered wins.
    package static func register(scheme: String, _ factory: @escaping Factory) {
        factories.withLock { $0[scheme.lowercased()] = factory }
    }

    /// The factory registered for `scheme` (lower case), if any.
    package static func factory(for scheme: String) -> Factory? {
        factories.withLock { $0[scheme] }
    }
}
