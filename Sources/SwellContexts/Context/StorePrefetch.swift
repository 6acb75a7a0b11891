import SwellStoreCore
/// The store's rows a child's save needs to resolve its changes, read before
/// the parent's lock is taken, so that nothing waiting for that lock (a
/// main-queue fetch on the view context) ever waits for the disk (Store guarantees 11, 14).
///
/// What it holds: for each keyed entity, the stored rows whose keys are among
/// the keys of the save's inserts and the new keys of its key changes (absent
/// keys are not stored), and the stored
/// rows of updated objects whose key changes (their full values are needed to
/// check the new key); for an entity whose key is its table's rowid, which of
/// the inserts' IDs that are their keys a stored object has as its ID apart
/// from its key (such an insert takes a new ID).
struct StorePrefetch: Sendable {
    /// Stored rows by key, per entity: authoritative for the keys that were looked up.
    var rowsByKey: [String: [[StoreValue]: StoreRow]] = [:]
    /// Stored rows by primary key, per entity (those found by key and those read by primary key).
    var rowsByPrimaryKey: [String: [Int64: [StoreValue]]] = [:]
    /// Per entity whose key is the rowid: the looked-up IDs that stored objects have in `_pk`
    /// (authoritative for the IDs that were looked up).
    var displacedIDs: [String: Set<Int64>] = [:]

    /// What a save's changes need from the store, worked out from the child's layer (no I/O).
    struct Request: Sendable {
        var keys: [String: [[StoreValue]]] = [:]
        var primaryKeys: [String: [Int64]] = [:]
        /// Updated rows that change their key, per entity: their new keys are looked up
        /// too, once their stored rows give the attributes the change leaves alone.
        var keyChanges: [String: [(primaryKey: Int64, row: PendingRow)]] = [:]
        /// New rows' IDs that are their keys, per entity whose key is the rowid.
        var keyIDs: [String: [Int64]] = [:]

        var isEmpty: Bool { keys.isEmpty && primaryKeys.isEmpty && keyIDs.isEmpty }

        init(layer: ChangeLayer, entities: [String: EntityDescription]) {
            for (entityName, changes) in layer.entities {
                guard let entity = entities[entityName] else { continue }
                guard !entity.uniquenessConstraint.isEmpty else {
                    // Only the version checks of updates and deletes need the stored rows.
                    let based = changes.rows.compactMap { $0.value.base != nil && $0.value.kind != .inserted ? $0.key : nil }
                    if !based.isEmpty { primaryKeys[entityName] = based }
                    continue
                }
                let keyIndices = entity.keyIndices
                let rowidKey = entity.rowidKeyIndex
                var keyMask = AttributeMask.empty
                for index in keyIndices { keyMask.insert(index) }
                var keys: [[StoreValue]] = []
                var primaryKeys: [Int64] = []
                var keyIDs: [Int64] = []
                var keyChanges: [(primaryKey: Int64, row: PendingRow)] = []
                for (primaryKey, row) in changes.rows {
                    switch row.kind {
                    case .inserted where !row.keyCheckedAgainstStore:
                        let key = keyIndices.map { row.values[$0] }
                        if !key.contains(where: \.isNull) { keys.append(key) }
                        if let rowidKey, row.values[rowidKey] == .integer(primaryKey) { keyIDs.append(primaryKey) }
                    case .updated where row.mask.intersects(keyMask):
                        primaryKeys.append(primaryKey)
                        keyChanges.append((primaryKey, row))
                    case .updated, .deleted:
                        // The version check compares the stored row with what the change was based on.
                        if row.base != nil { primaryKeys.append(primaryKey) }
                    default:
                        break
                    }
                }
                if !keys.isEmpty { self.keys[entityName] = keys }
                if !primaryKeys.isEmpty { self.primaryKeys[entityName] = primaryKeys }
                if !keyChanges.isEmpty { self.keyChanges[entityName] = keyChanges }
                if !keyIDs.isEmpty { self.keyIDs[entityName] = keyIDs }
            }
        }

        /// Reads every requested row in one snapshot of the store.
        func read(from store: any PersistentStore, entities: [String: EntityDescription]) throws -> StorePrefetch {
            try store.read { reader in
                var prefetch = StorePrefetch()
                var keys = keys
                // Entities with a key change whose new key the store cannot tell (its object is
                // not stored and the change sets only part of the key): their keys stay unprefetched,
                // so the save looks each one up (as before this prefetch existed).
                var partial = Set<String>()
                for (entityName, primaryKeys) in primaryKeys {
                    guard let entity = entities[entityName] else { continue }
                    let found = try reader.rows(primaryKeys: primaryKeys, entity: entity)
                    prefetch.rowsByPrimaryKey[entityName, default: [:]].merge(found) { stored, _ in stored }
                    let keyIndices = entity.keyIndices
                    for (primaryKey, row) in keyChanges[entityName] ?? [] {
                        var values: [StoreValue]
                        if let stored = found[primaryKey] {
                            values = stored
                            row.mask.overlay(row.values, onto: &values)
                        } else if keyIndices.allSatisfy({ row.mask.contains($0) }) {
                            values = row.values
                        } else {
                            partial.insert(entityName)
                            continue
                        }
                        let key = keyIndices.map { values[$0] }
                        if !key.contains(where: \.isNull) { keys[entityName, default: []].append(key) }
                    }
                }
                for (entityName, keys) in keys where !partial.contains(entityName) {
                    guard let entity = entities[entityName] else { continue }
                    let found = try reader.rows(forKeys: keys, entity: entity)
                    prefetch.rowsByKey[entityName] = found
                    var byPrimaryKey = prefetch.rowsByPrimaryKey[entityName] ?? [:]
                    byPrimaryKey.reserveCapacity(byPrimaryKey.count + found.count)
                    for row in found.values where byPrimaryKey[row.primaryKey] == nil { byPrimaryKey[row.primaryKey] = row.values }
                    prefetch.rowsByPrimaryKey[entityName] = byPrimaryKey
                }
                for (entityName, ids) in keyIDs {
                    guard let entity = entities[entityName] else { continue }
                    prefetch.displacedIDs[entityName] = Set(try reader.rows(displacedIDs: ids, entity: entity).keys)
                }
                return prefetch
            }
        }
    }
}
