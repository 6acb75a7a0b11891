import SwellStoreCore

extension PersistentStoreCoordinator {
    /// The store's source holds, when it has them (a server store many runners share).
    package var sourceHolding: (any SourceHolding)? {
        // No store added yet: nothing to hold (the run fails opening it first).
        (try? store) as? any SourceHolding
    }
}
