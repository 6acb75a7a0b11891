import SwellStoreCore

extension PersistentStoreCoordinator {
    /// The store's shared rate budgets, when it has them (a server store many runners share).
    package var rateBudgetSharing: (any RateBudgetSharing)? {
        // No store added yet: nothing to share (the run fails opening it first).
        (try? store) as? any RateBudgetSharing
    }
}
