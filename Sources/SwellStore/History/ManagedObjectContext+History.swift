import Foundation

/// Persistent history (store.md 46–48): what every writer of the store — this process or
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
}
