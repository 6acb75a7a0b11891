import Synchronization

extension ManagedObjectContext {
    /// Whether a registered object whose row is gone — another context deleted and saved it, or
    /// a reset parent never had it — is marked deleted when it is next faulted or refreshed
    /// (`isDeleted` true, its attributes nil) instead of being handed out as live (Store
    /// guarantees 62; Core Data's `shouldDeleteInaccessibleFaults`). Default true. Safe to set
    /// from any queue; set it before the context is used.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { deletesInaccessibleFaults.load(ordering: .relaxed) }
        set { deletesInaccessibleFaults.store(newValue, ordering: .relaxed) }
    }
}
