/// Which attributes (by index) a change sets. Up to 256 attributes an entity.
package struct AttributeMask: Hashable, Sendable {
    package static let capacity = 256
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    package static let empty = AttributeMask()

    /// Every attribute of an entity with `count` attributes.
    package static func all(_ count: Int) -> AttributeMask {
        var mask = AttributeMask()
        for index in 0..<count { mask.insert(index) }
        return mask
    }

    package func contains(_ index: Int) -> Bool {
        let bit = UInt64(1) << UInt64(index & 63)
        switch index >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    package mutating func insert(_ index: Int) {
        let bit = UInt64(1) << UInt64(index & 63)
        switch index >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    package mutating func remove(_ index: Int) {
        let bit = ~(UInt64(1) << UInt64(index & 63))
        switch index >> 6 {
        case 0: words.0 &= bit
        case 1: words.1 &= bit
        case 2: words.2 &= bit
        default: words.3 &= bit
        }
    }

    package mutating func formUnion(_ other: AttributeMask) {
        words.0 |= other.words.0
        words.1 |= other.words.1
        words.2 |= other.words.2
        words.3 |= other.words.3
    }

    package var isEmpty: Bool { words.0 | words.1 | words.2 | words.3 == 0 }

    package func intersects(_ other: AttributeMask) -> Bool {
        (words.0 & other.words.0) | (words.1 & other.words.1) | (words.2 & other.words.2) | (words.3 & other.words.3) != 0
    }

    /// The indices set, ascending, below `count`.
    package func indices(below count: Int) -> [Int] {
        (0..<count).filter { contains($0) }
    }

    /// Copies `source`'s values at the masked positions onto `target` (a change over the
    /// values beneath it): the one overlay every level, the store prefetch and the objects use.
    package func overlay(_ source: [StoreValue], onto target: inout [StoreValue]) {
        for index in 0..<min(target.count, source.count) where contains(index) { target[index] = source[index] }
    }

    package static func == (lhs: AttributeMask, rhs: AttributeMask) -> Bool {
        lhs.words == rhs.words
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

/// One object's unsaved change at one level (a context, or the writer's save in flight).
package struct PendingRow: Sendable {
    package enum Kind: Sendable, Equatable {
        /// New at this level: `values` is the whole row.
        case inserted
        /// Changed at this level: `values` holds the new values at the `mask` positions.
        case updated
        /// Deleted at this level.
        case deleted
    }

    package var kind: Kind
    /// A value per attribute of the entity; for updates only the masked positions mean anything.
    package var values: [StoreValue]
    /// The attributes this change set (for inserts: those set explicitly, nil included).
    package var mask: AttributeMask
    /// When the object was first changed at this level: saves move changes in this order.
    package var sequence: UInt64
    /// An insert whose key a save already checked against the store (so the next
    /// level need not read the store again: the main queue never waits for disk).
    package var keyCheckedAgainstStore = false
}

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

    /// Marks a row deleted at this level; a row inserted at this level just goes.
    mutating func markDeleted(_ primaryKey: Int64, sequence newSequence: @autoclosure () -> UInt64) {
        if rows[primaryKey]?.kind == .inserted {
            removeRow(primaryKey)
            return
        }
        let sequence = rows[primaryKey]?.sequence ?? newSequence()
        rows[primaryKey] = PendingRow(kind: .deleted, values: [], mask: .empty, sequence: sequence)
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
                    switch (older.kind, row.kind) {
                    case (.inserted, .deleted):
                        merged.removeRow(key)
                        return
                    case (_, .deleted): older = row
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
