import Foundation
import SwellStoreCore

/// Persistent history (Store guarantees 46–48): what every writer of the store — this process or
/// another, contexts, batch requests, `swell` runs — committed, in order, to be merged as
/// change notices (SwellStore documentation, "Persistent history").
extension ManagedObjectContext {
    /// The store's history transactions after `token` (all kept ones when nil), oldest first.
    /// Empty when the store does not track history.
    ///
    /// - Throws: `StoreError.noPersistentStore`; `.unsupported` from a store that keeps no
    ///   history; a store error.
    public func fetchHistory(after token: HistoryToken?) throws -> [HistoryTransaction] {
        assertOnQueue("fetchHistory")
        return try storeOrThrow().history(after: token)
    }

    /// Removes the history transactions before `token` (purging what every reader has merged).
    /// The store notes how far it was ever purged, in the same transaction
    /// (`historyPurgedBefore()`), so a reader whose position is older learns that changes
    /// are gone rather than missing them.
    ///
    /// - Throws: as `fetchHistory`.
    public func deleteHistory(before token: HistoryToken) throws {
        assertOnQueue("deleteHistory")
        try storeOrThrow().deleteHistory(before: token)
    }

    /// The newest history transaction's token — of those committed before `date`, when
    /// given; nil when there is none (or no history).
    public func lastHistoryToken(before date: Date? = nil) throws -> HistoryToken? {
        assertOnQueue("lastHistoryToken")
        return try storeOrThrow().lastHistoryToken(before: date)
    }

    package static var historyPurgedBeforeKey: String { PersistentHistoryKeys.purgedBefore }

    /// The largest token any `deleteHistory(before:)` was given (nil: never purged): the
    /// transactions before it are gone. A reader whose last merged token is below
    /// `purgedBefore - 1` cannot know everything that changed since; read it after
    /// `fetchHistory`, so a purge in between is seen.
    public func historyPurgedBefore() throws -> HistoryToken? {
        assertOnQueue("historyPurgedBefore")
        return try storeOrThrow().read { try $0.metadata(forKey: Self.historyPurgedBeforeKey) }.flatMap(Int64.init).map(HistoryToken.init(value:))
    }
}
