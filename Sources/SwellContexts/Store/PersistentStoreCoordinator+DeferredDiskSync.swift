import SwellStoreCore

extension PersistentStoreCoordinator {
    /// The store's deferred disk sync, when it has one (SQLite: `synchronous=NORMAL`
    /// until the close; a server store's commits are the server's to sync).
    package var deferredDiskSync: (any DeferredDiskSync)? {
        // No store added yet: nothing to sync (loading it fails the run first), as `sourceHolding`.
        (try? store) as? any DeferredDiskSync
    }
}
