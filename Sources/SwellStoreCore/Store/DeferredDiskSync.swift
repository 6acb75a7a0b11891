/// A store whose commits can return before the disk has them, all made durable
/// together when the store closes: group commit for a batch run, whose unit of
/// work is the run rather than one commit.
///
/// Deferred or not, a commit is atomic and survives its process being killed
/// (Store guarantees 6: the bytes are the operating system's once written). What a
/// deferred commit gives up until the close is surviving a power cut or a crash
/// of the operating system: such a cut can take back the commits since the
/// store last synced (SQLite syncs at every checkpoint), never part of one.
package protocol DeferredDiskSync: AnyObject, Sendable {
    /// From now until `close`, commits do not wait for the disk; `close` syncs them
    /// before it returns, and throws when it cannot.
    func deferDiskSyncUntilClose() throws(StoreError)
    /// Syncs the commits made so far to disk now (what `close` would do), so that a
    /// caller can tell a failed sync from other trouble closing.
    func syncDeferredCommits() throws(StoreError)
}
