import SwellStoreCore



/// The unsaved changes of one entity at one level, with an index of the keys it introduces.
struct EntityChanges: Sendable {
    var rows: [Int64: PendingRow] = [:]
    /// Key (uniqueness constraint values) → primary key, for rows whose key this level sets.
    var keyIndex: [[StoreValue]: Int64] = [:]
    /// Primary key → its key in `keyIndex`, to keep the index right when a key changes.
    var keyOfRow: [Int64: [StoreValue]] = [:]

    mutating func setKey(_ key: [StoreValue]?, for primaryKey: Int64) {
        if let old = keyOfRow.removeValue(forKey: primaryKey), keyIndex[old] == primaryKey {
            keyIndex.removeValue(forKey: old)
        }
        if let key {
            keyIndex[key] = primaryKey
            keyOfRow[primaryKey] = key
        }
    }

    /// Marks a row deleted at this level; a row inserted at this level just goes. `base`: the
    /// object's values the deleting context read (kept from an earlier change at this level
    /// when there is one), for the save's version check.
    mutating func markDeleted(_ primaryKey: Int64, sequence newSequence: @autoclosure () -> UInt64, base: [StoreValue]? = nil) {
        if rows[primaryKey]?.kind == .inserted {
            removeRow(primaryKey)
            return
        }
        let earlier = rows[primaryKey]
        let sequence = earlier?.sequence ?? newSequence()
        rows[primaryKey] = PendingRow(kind: .deleted, values: [], mask: .empty, sequence: sequence,
                                      base: earlier == nil ? base : earlier?.base)
        setKey(nil, for: primaryKey)
    }

    mutating func removeRow(_ primaryKey: Int64) {
        rows.removeValue(forKey: primaryKey)
        setKey(nil, for: primaryKey)
    }
}

/// All unsaved changes at one level, by entity name.
///
/// A value: a context keeps it behind a lock, and readers on other queues copy
/// (cheaply, copy-on-write) the part they need.
struct ChangeLayer: Sendable {
    var entities: [String: EntityChanges] = [:]
    private(set) var nextSequence: UInt64 = 0
    /// Every row is an insert whose key (if it has one) was checked against every
    /// level above and the store when the layer was moved whole into its level (a
    /// segment): the next level takes it without looking at its rows.
    var keysChecked = false

    var isEmpty: Bool { entities.values.allSatisfy { $0.rows.isEmpty } }

    var count: Int { entities.values.reduce(0) { $0 + $1.rows.count } }

    /// Makes the next sequence number larger than `sequence`.
    mutating func advanceSequence(past sequence: UInt64) {
        nextSequence = max(nextSequence, sequence)
    }

    mutating func takeSequence() -> UInt64 {
        nextSequence += 1
        return nextSequence
    }

    /// Changes one entity's rows in place (no copy of its dictionaries).
    mutating func modify<R, E: Error>(_ entity: String, _ body: (inout EntityChanges) throws(E) -> R) throws(E) -> R {
        try body(&entities[entity, default: EntityChanges()])
    }

    func row(_ id: ObjectID) -> PendingRow? {
        entities[id.entityName]?.rows[id.primaryKey]
    }

    /// The rows of every entity in the order they were first changed.
    func orderedRows() -> [(entity: String, primaryKey: Int64, row: PendingRow)] {
        // Sorted as plain (sequence, entity, key) triples first: moving whole rows would retain their values.
        let names = Array(entities.keys)
        var order: [(sequence: UInt64, entity: Int, key: Int64)] = []
        order.reserveCapacity(count)
        for (entityIndex, name) in names.enumerated() {
            for (key, row) in entities[name]!.rows { order.append((row.sequence, entityIndex, key)) }
        }
        order.sort { $0.sequence < $1.sequence }
        var all: [(entity: String, primaryKey: Int64, row: PendingRow)] = []
        all.reserveCapacity(order.count)
        let changes = names.map { entities[$0]! }
        for item in order {
            guard let row = changes[item.entity].rows[item.key] else { continue }
            all.append((names[item.entity], item.key, row))
        }
        return all
    }
}

extension ChangeLayer {
    /// Puts `newer`'s changes on top of this layer's, as if they had been made here
    /// afterwards (per-row work; rows new here take fresh sequence numbers).
    mutating func stack(_ newer: ChangeLayer) {
        keysChecked = false
        // In the order the newer changes were made, so later ones stay later.
        for (entity, key, row) in newer.orderedRows() {
            let sequence = takeSequence()
            modify(entity) { merged in
                if var older = merged.rows[key] {
                    // The older change's base stays: it is what this level read first.
                    let base = older.base
                    switch (older.kind, row.kind) {
                    case (.inserted, .deleted):
                        merged.removeRow(key)
                        return
                    case (_, .deleted):
                        older = row
                        older.base = base
                    case (.deleted, _): older = row
                    default:
                        row.mask.overlay(row.values, onto: &older.values)
                        older.mask.formUnion(row.mask)
                    }
                    merged.rows[key] = older
                } else {
                    var moved = row
                    moved.sequence = sequence
                    if newer.keysChecked { moved.keyCheckedAgainstStore = true }
                    merged.rows[key] = moved
                }
                if let newKey = newer.entities[entity]?.keyOfRow[key] { merged.setKey(newKey, for: key) }
            }
        }
    }

    /// Layers folded into one, oldest first.
    static func folded(_ layers: [ChangeLayer]) -> ChangeLayer {
        guard var result = layers.first else { return ChangeLayer() }
        for newer in layers.dropFirst() { result.stack(newer) }
        result.keysChecked = false
        return result
    }

    /// The operations that commit layers (oldest first), each layer's rows in the
    /// order they were first changed; rows of a key-checked layer (a segment) say so.
    static func operations(_ layers: [ChangeLayer]) -> [StoreChangeSet.Operation] {
        var operations: [StoreChangeSet.Operation] = []
        operations.reserveCapacity(layers.reduce(0) { $0 + $1.count })
        for layer in layers {
            let checked = layer.keysChecked
            for (entity, primaryKey, row) in layer.orderedRows() {
                var operation = StoreChangeSet.Operation(entity: entity, primaryKey: primaryKey, row: row)
                if checked { operation.row.keyCheckedAgainstStore = true }
                operations.append(operation)
            }
        }
        return operations
    }
}
