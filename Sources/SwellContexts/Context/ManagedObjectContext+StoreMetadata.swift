import Foundation
import SwellStoreCore

extension ManagedObjectContext {
    // MARK: Store metadata

    /// Sets a value Swell keeps in the store beside the data (table `swell_state`):
    /// it moves up with this context's saves like a change, and is written in
    /// the same transaction as the data saved with it. nil removes the key.
    public func setStoreMetadata(_ value: String?, forKey key: String) {
        assertOnQueue("set store metadata")
        level.withLock { $0.metadata[key] = .some(value) }
    }

    /// A store metadata value as this context sees it: its own and its
    /// ancestors' unsaved values over the store's.
    public func storeMetadata(forKey key: String) throws -> String? {
        assertOnQueue("read store metadata")
        var context: ManagedObjectContext? = self
        while let current = context {
            if let value = current.level.withLock({ $0.metadata[key] }) { return value }
            context = current.parent
        }
        return try readStore { try $0.metadata(forKey: key) }
    }
}
