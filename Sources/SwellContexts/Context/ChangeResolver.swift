import SwellStoreCore

/// What resolving an entity's rows needs, worked out once per save rather than per row.
private struct EntityPlan {
    let entity: EntityDescription
    /// The uniqueness constraint's attribute indices (empty: no key).
    let keyIndices: [Int]
    let keyMask: AttributeMask
    /// The key attribute that is the table's rowid (`TableLayout`): new rows may share an ID.
    let rowidKey: Int?
    /// The levels above the parent, nearest first.
    let farther: [EntityChanges]

    init(entity: EntityDescription, farther: [EntityChanges]) {
        self.entity = entity
        self.keyIndices = entity.keyIndices
        self.rowidKey = entity.rowidKeyIndex
        var mask = AttributeMask.empty
        for index in keyIndices { mask.insert(index) }
        self.keyMask = mask
        self.farther = farther
    }

    /// The row the `depth`th level (0: the parent's own changes) has for `primaryKey`.
    func row(_ primaryKey: Int64, depth: Int, nearest: EntityChanges) -> PendingRow? {
        depth == 0 ? nearest.rows[primaryKey] : farther[depth - 1].rows[primaryKey]
    }
}

/// Applies a child's saved changes to its parent's level, honouring the uniqueness
/// constraints and the objects' versions (optimistic locking) with the saving child's merge
/// policy (Store guarantees 61).
///
/// Works on a copy of the parent's changes; the caller stores the result only
/// when every change applied (a failed save leaves the parent untouched).
struct ChangeResolver {
    /// The parent's changes being built.
    var target: ChangeLayer
    let policy: MergePolicy
    let entities: [String: EntityDescription]
    let storeIdentifier: String
    /// The store's row and key look-ups (only when no prefetch covers a change).
    let store: any PersistentStore
    /// A new ID for an object of the entity, for a new row whose ID another object has.
    let newID: (String) throws(StoreError) -> Int64

    private(set) var changes = ContextDidSaveChanges()
    private var conflicts: [StoreError] = []
    /// Changes whose objects the parent changed since the child read them, unresolved by the policy.
    private var versionConflicts: [MergeConflict] = []
    /// Levels above the parent, nearest first, by entity (copied under the parent's lock).
    private let farther: [String: [EntityChanges]]
    /// The store's rows for the incoming inserts' keys, looked up once per save (entities absent: not prefetched).
    private var storeKeys: [String: [[StoreValue]: StoreRow]] = [:]
    /// The same rows by primary key, so merging an insert into a stored row reads nothing more.
    private var storeRows: [String: [Int64: [StoreValue]]] = [:]
    /// IDs of the incoming inserts that stored objects have apart from their keys, per entity
    /// whose key is the rowid (entities absent: not prefetched).
    private var storeDisplacedIDs: [String: Set<Int64>] = [:]
    /// Whether the store's rows were read before the save took its locks.
    private let hasPrefetch: Bool

    /// - Parameters:
    ///   - farther: the levels above the parent, nearest first, by entity of the incoming layer.
    ///   - prefetched: the store's rows the incoming layer needs, read before the locks were
    ///     taken (`StorePrefetch.Request`); nil reads them during `apply`.
    init(target: ChangeLayer, policy: MergePolicy, entities: [String: EntityDescription], storeIdentifier: String,
         store: any PersistentStore, newID: @escaping (String) throws(StoreError) -> Int64, farther: [String: [EntityChanges]], prefetched: StorePrefetch?) {
        self.target = target
        self.policy = policy
        self.entities = entities
        self.storeIdentifier = storeIdentifier
        self.store = store
        self.newID = newID
        self.farther = farther
        self.hasPrefetch = prefetched != nil
        if let prefetched { take(prefetched) }
    }

    private mutating func take(_ prefetched: StorePrefetch) {
        storeKeys = prefetched.rowsByKey
        storeRows = prefetched.rowsByPrimaryKey
        storeDisplacedIDs = prefetched.displacedIDs
    }

    private func id(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
    }

    private func layers(_ entity: String) -> [EntityChanges] {
        farther[entity] ?? []
    }

    /// Applies every row of `layer`, entity by entity, each entity's rows in the
    /// order they were first changed (entities do not refer to each other, so
    /// only the order within an entity matters).
    mutating func apply(_ layer: ChangeLayer) throws {
        changes.inserted.reserveCapacity(layer.count)
        // The levels above were copied first, then the store is read: a commit that
        // ends in between is then in one or the other (it leaves the writer's
        // in-flight level only after it is in the store).
        if !hasPrefetch { try prefetchStoreKeys(layer) }
        for (entityName, changes) in layer.entities where !changes.rows.isEmpty {
            guard let entity = entities[entityName] else { throw StoreError.unknownEntity(entityName) }
            // Taken out of the layer while it changes, so that changing it copies nothing.
            var entityChanges = target.entities.removeValue(forKey: entityName) ?? EntityChanges()
            defer { target.entities[entityName] = entityChanges }
            let plan = EntityPlan(entity: entity, farther: layers(entityName))
            if entityChanges.rows.isEmpty, plan.farther.isEmpty, Self.needsNoResolution(changes, entity: entity) {
                moveWhole(changes, entity: entity, into: &entityChanges)
                continue
            }
            // Sorted as plain (sequence, key) pairs: moving whole rows would retain their values.
            var order: [(sequence: UInt64, key: Int64)] = []
            order.reserveCapacity(changes.rows.count)
            for (key, row) in changes.rows { order.append((row.sequence, key)) }
            order.sort { $0.sequence < $1.sequence }
            entityChanges.rows.reserveCapacity(entityChanges.rows.count + order.count)
            for (_, key) in order {
                guard let row = changes.rows[key] else { continue }
                try apply(row, key: key, plan: plan, changes: &entityChanges)
            }
        }
        if !versionConflicts.isEmpty { throw StoreError.mergeConflict(versionConflicts) }
        if let first = conflicts.first { throw first }
    }

    /// Inserts whose keys were already checked against every level above (or
    /// an entity without a key) cannot conflict with anything at an empty level.
    private static func needsNoResolution(_ changes: EntityChanges, entity: EntityDescription) -> Bool {
        let keyed = !entity.uniquenessConstraint.isEmpty
        return changes.rows.values.allSatisfy { $0.kind == .inserted && (!keyed || $0.keyCheckedAgainstStore) }
    }

    /// Moves an entity's rows to an empty level as they are (no per-row resolution).
    private mutating func moveWhole(_ changes: EntityChanges, entity: EntityDescription, into entityChanges: inout EntityChanges) {
        let moved = changes
        var highest: UInt64 = 0
        for (key, row) in moved.rows {
            highest = max(highest, row.sequence)
            self.changes.inserted.insert(id(entity.name, key))
        }
        // Keep this level's sequence ahead of the moved rows, so later changes order after them.
        target.advanceSequence(past: highest)
        entityChanges = moved
    }

    private mutating func apply(_ incomingRow: PendingRow, key incomingKey: Int64, plan: EntityPlan,
                                changes entityChanges: inout EntityChanges) throws {
        let entity = plan.entity
        var primaryKey = incomingKey
        var incoming = id(entity.name, primaryKey)
        let count = entity.attributes.count
        let keyIndices = plan.keyIndices
        let keyMask = plan.keyMask
        var row = incomingRow

        // An update or delete of an object the child read: checked against the parent's values now.
        if row.base != nil, row.kind != .inserted {
            let current = try currentValuesIfAny(of: primaryKey, plan: plan, changes: entityChanges)
            switch policy.resolveVersion(of: row, id: incoming, entity: entity, current: current) {
            case .unchanged:
                break
            case .write(let resolved):
                row = resolved
                changes.resolvedConflicts.insert(incoming)
            case .drop:
                changes.resolvedConflicts.insert(incoming)
                return
            case .conflict(let conflict):
                versionConflicts.append(conflict)
                return
            }
            // Landing where the parent has no change of its own, the change is based on the
            // parent's values now (what the next level up checks it against).
            if entityChanges.rows[primaryKey] == nil { row.base = current }
        }

        if row.kind == .deleted {
            entityChanges.markDeleted(primaryKey, sequence: target.takeSequence(), base: row.base)
            changes.deleted.insert(incoming)
            changes.updated.removeValue(forKey: incoming)
            return
        }

        // The incoming object's key, when it has one and this change sets it.
        var newKey: [StoreValue]?
        if !keyIndices.isEmpty, row.kind == .inserted || row.mask.intersects(keyMask) {
            let full = try currentValues(of: primaryKey, plan: plan, changes: entityChanges, over: row)
            let key = keyIndices.map { full[$0] }
            if !key.contains(where: \.isNull) { newKey = key }
        }

        let checkStore = !(row.kind == .inserted && row.keyCheckedAgainstStore)
        // A new row whose ID is its key (`insertRow`) may meet another object with that ID: with its key,
        // that object is the one it merges into; with another key (or deleted), the row takes a new ID.
        let idFromKey = plan.rowidKey.map { row.kind == .inserted && row.values[$0] == .integer(primaryKey) } ?? false
        if let key = newKey, let existing = try findExisting(key: key, excluding: idFromKey ? nil : primaryKey, plan: plan,
                                                              changes: entityChanges, checkStore: checkStore) {
            try merge(row, primaryKey: primaryKey, into: existing, key: key, plan: plan, changes: &entityChanges)
            return
        }
        if idFromKey, try idIsTaken(primaryKey, plan: plan, changes: entityChanges, checkStore: checkStore) {
            primaryKey = try newID(entity.name)
            let renumbered = id(entity.name, primaryKey)
            changes.merged[incoming] = renumbered
            incoming = renumbered
        }

        // No conflict: the change lands as it is.
        if var current = entityChanges.rows[primaryKey] {
            switch current.kind {
            case .deleted:
                return
            case .inserted, .updated:
                row.mask.overlay(row.values, onto: &current.values)
                if row.kind == .inserted { current.values = row.values }
                current.mask.formUnion(row.mask)
                entityChanges.rows[primaryKey] = current
            }
        } else {
            var landed = row
            landed.sequence = target.takeSequence()
            landed.keyCheckedAgainstStore = row.kind == .inserted && newKey != nil
            entityChanges.rows[primaryKey] = landed
        }
        if row.kind == .inserted || row.mask.intersects(keyMask) { entityChanges.setKey(newKey, for: primaryKey) }
        if row.kind == .inserted && entityChanges.rows[primaryKey]?.kind == .inserted {
            changes.inserted.insert(incoming)
        } else {
            changes.updated[incoming, default: []].formUnion(row.mask.indices(below: count).map { entity.attributes[$0].name })
        }
    }

    /// Resolves two objects with one key: the existing one survives, by the policy.
    private mutating func merge(_ row: PendingRow, primaryKey: Int64, into existing: Int64, key: [StoreValue],
                                plan: EntityPlan, changes entityChanges: inout EntityChanges) throws {
        let entity = plan.entity
        let incoming = id(entity.name, primaryKey)
        let survivor = id(entity.name, existing)
        let count = entity.attributes.count
        switch policy.resolution {
        case .fail:
            var keyText: [String: String] = [:]
            for (offset, name) in entity.uniquenessConstraint.enumerated() { keyText[name] = describe(key[offset]) }
            // Two new rows of one key may have the same ID (their key): it is named once.
            conflicts.append(.constraintConflict(entity: entity.name, key: keyText,
                                                 objects: incoming == survivor ? [incoming] : [incoming, survivor]))
            return
        case .keepExisting:
            if row.kind == .inserted { changes.merged[incoming] = survivor }
            return
        case .merge:
            break
        }
        let incomingValues = try currentValues(of: primaryKey, plan: plan, changes: entityChanges, over: row)
        let existingValues = try currentValues(of: existing, plan: plan, changes: entityChanges, over: nil)
        var mask = AttributeMask.empty
        var values = existingValues
        for index in 0..<count {
            if let join = entity.attributes[index].join {
                // A to-many kept in a join table: the survivor keeps the union (Store guarantees 32).
                guard row.kind == .inserted || row.mask.contains(index) else { continue }
                let union = JoinTable.union(values[index], incomingValues[index], ordered: join.isOrdered)
                if union != values[index] {
                    values[index] = union
                    mask.insert(index)
                }
                continue
            }
            let value = policy.merged(existing: existingValues[index], incoming: incomingValues[index], incomingSet: row.mask.contains(index))
            if value != values[index] {
                values[index] = value
                mask.insert(index)
            }
        }
        if var current = entityChanges.rows[existing], current.kind != .deleted {
            mask.overlay(values, onto: &current.values)
            current.mask.formUnion(mask)
            entityChanges.rows[existing] = current
        } else if !mask.isEmpty {
            entityChanges.rows[existing] = PendingRow(kind: .updated, values: values, mask: mask, sequence: target.takeSequence())
        }
        if row.kind == .updated {
            // An existing object took another's key: it is merged into that one and goes.
            entityChanges.markDeleted(primaryKey, sequence: target.takeSequence())
            changes.deleted.insert(incoming)
        }
        changes.merged[incoming] = survivor
        if !changes.inserted.contains(survivor) {
            if mask.isEmpty {
                if changes.updated[survivor] == nil { changes.unchanged.insert(survivor) }
            } else {
                changes.unchanged.remove(survivor)
                changes.updated[survivor, default: []].formUnion(mask.indices(below: count).map { entity.attributes[$0].name })
            }
        }
    }

    /// An object's full values at the parent's level, or nil when it does not exist there (deleted
    /// at a level, or neither at a level nor stored).
    private mutating func currentValuesIfAny(of primaryKey: Int64, plan: EntityPlan,
                                             changes entityChanges: EntityChanges) throws -> [StoreValue]? {
        let entity = plan.entity
        let count = entity.attributes.count
        let composedRow = plan.farther.isEmpty
            ? ComposedRow.compose(primaryKey, CollectionOfOne(entityChanges), attributeCount: count)
            : ComposedRow.compose(primaryKey, [entityChanges] + plan.farther, attributeCount: count)
        switch composedRow {
        case .complete(let known)?:
            return known
        case .deleted?:
            return nil
        case let composed:
            guard let base = try storeRows[entity.name]?[primaryKey]
                    ?? store.read({ try $0.rows(primaryKeys: [primaryKey], entity: entity) })[primaryKey] else { return nil }
            return composed.flatMap { $0.values(base: base) } ?? base
        }
    }

    /// An object's full values at the parent's level (nil values where it does not exist), with
    /// `row` (an incoming change) on top.
    private mutating func currentValues(of primaryKey: Int64, plan: EntityPlan, changes entityChanges: EntityChanges,
                                        over row: PendingRow?) throws -> [StoreValue] {
        if let row, row.kind == .inserted { return row.values }
        var values = try currentValuesIfAny(of: primaryKey, plan: plan, changes: entityChanges)
            ?? Array(repeating: .null, count: plan.entity.attributes.count)
        if let row {
            row.mask.overlay(row.values, onto: &values)
        }
        return values
    }

    /// Whether another object has `primaryKey` as its ID at the parent's level: a row at any
    /// level (deleted ones too: the deletion is not on disk yet), or a stored object that keeps
    /// it apart from its key (one that has it as its key was found by key).
    private mutating func idIsTaken(_ primaryKey: Int64, plan: EntityPlan, changes entityChanges: EntityChanges,
                                    checkStore: Bool) throws -> Bool {
        if entityChanges.rows[primaryKey] != nil || plan.farther.contains(where: { $0.rows[primaryKey] != nil }) { return true }
        guard checkStore else { return false }
        let entity = plan.entity
        if let prefetched = storeDisplacedIDs[entity.name] { return prefetched.contains(primaryKey) }
        return try !store.read { try $0.rows(displacedIDs: [primaryKey], entity: entity) }.isEmpty
    }

    /// The object other than `primaryKey` that has `key` at the parent's level (nil `primaryKey`:
    /// any object, for a new row whose ID, its key, may be that object's too).
    private mutating func findExisting(key: [StoreValue], excluding primaryKey: Int64?, plan: EntityPlan,
                                       changes entityChanges: EntityChanges, checkStore: Bool) throws -> Int64? {
        let depthCount = plan.farther.count + 1
        /// Whether a level nearer than `depth` deleted the row or changed its key.
        func shadowed(_ candidate: Int64, above depth: Int) -> Bool {
            for nearer in 0..<depth {
                guard let row = plan.row(candidate, depth: nearer, nearest: entityChanges) else { continue }
                if row.kind == .deleted || row.mask.intersects(plan.keyMask) { return true }
            }
            return false
        }
        for depth in 0..<depthCount {
            let found = depth == 0 ? entityChanges.keyIndex[key] : plan.farther[depth - 1].keyIndex[key]
            if let candidate = found, candidate != primaryKey, !shadowed(candidate, above: depth),
               plan.row(candidate, depth: depth, nearest: entityChanges)?.kind != .deleted {
                return candidate
            }
        }
        let stored: Int64?
        let entity = plan.entity
        if !checkStore {
            stored = nil
        } else if let prefetched = storeKeys[entity.name] {
            stored = prefetched[key]?.primaryKey
        } else {
            let row = try store.read { try $0.row(forKey: key, entity: entity) }
            if let row { storeRows[entity.name, default: [:]][row.primaryKey] = row.values }
            stored = row?.primaryKey
        }
        if let candidate = stored, candidate != primaryKey, !shadowed(candidate, above: depthCount) {
            return candidate
        }
        return nil
    }

    /// Looks up, in one read, which keys of the incoming inserts the store already has
    /// (when the save could not read them before taking its locks).
    private mutating func prefetchStoreKeys(_ layer: ChangeLayer) throws {
        let request = StorePrefetch.Request(layer: layer, entities: entities)
        guard !request.isEmpty else { return }
        take(try request.read(from: store, entities: entities))
    }
}
