/// Applies a child's saved changes to its parent's level, honouring the
/// uniqueness constraints with the parent's merge policy.
///
/// Works on a copy of the parent's changes; the caller stores the result only
/// when every change applied (a failed save leaves the parent untouched).
struct ChangeResolver {
    /// The parent's changes being built.
    var target: ChangeLayer
    let policy: MergePolicy
    let entities: [String: EntityDescription]
    let storeIdentifier: String
    /// Levels above the parent, nearest first, by entity.
    let fartherLayers: (String) -> [EntityChanges]
    /// The store's row and key look-ups.
    let store: any PersistentStore

    private(set) var changes = ContextDidSaveChanges()
    private var conflicts: [StoreError] = []
    private var farther: [String: [EntityChanges]] = [:]
    /// The store's primary keys for the incoming inserts' keys, looked up once per save (entities absent: not prefetched).
    private var storeKeys: [String: [[StoreValue]: Int64]] = [:]

    init(target: ChangeLayer, policy: MergePolicy, entities: [String: EntityDescription], storeIdentifier: String,
         store: any PersistentStore, fartherLayers: @escaping (String) -> [EntityChanges]) {
        self.target = target
        self.policy = policy
        self.entities = entities
        self.storeIdentifier = storeIdentifier
        self.store = store
        self.fartherLayers = fartherLayers
    }

    private func id(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier)
    }

    private mutating func layers(_ entity: String) -> [EntityChanges] {
        if let cached = farther[entity] { return cached }
        let layers = fartherLayers(entity)
        farther[entity] = layers
        return layers
    }

    /// Applies every row of `layer`, entity by entity, each entity's rows in the
    /// order they were first changed (entities do not refer to each other, so
    /// only the order within an entity matters).
    mutating func apply(_ layer: ChangeLayer) throws {
        try prefetchStoreKeys(layer)
        for (entityName, changes) in layer.entities where !changes.rows.isEmpty {
            guard let entity = entities[entityName] else { throw StoreError.unknownEntity(entityName) }
            // Taken out of the layer while it changes, so that changing it copies nothing.
            var entityChanges = target.entities.removeValue(forKey: entityName) ?? EntityChanges()
            defer { target.entities[entityName] = entityChanges }
            if entityChanges.rows.isEmpty, layers(entityName).isEmpty, Self.needsNoResolution(changes, entity: entity) {
                moveWhole(changes, entity: entity, into: &entityChanges)
                continue
            }
            let ordered = changes.rows.sorted { $0.value.sequence < $1.value.sequence }
            for (key, row) in ordered {
                try apply(row, key: key, entity: entity, changes: &entityChanges)
            }
        }
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

    private mutating func apply(_ row: PendingRow, key primaryKey: Int64, entity: EntityDescription,
                                changes entityChanges: inout EntityChanges) throws {
        let incoming = id(entity.name, primaryKey)
        let count = entity.attributes.count
        let keyIndices = entity.uniquenessConstraint.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
        let keyMask: AttributeMask = {
            var mask = AttributeMask.empty
            for index in keyIndices { mask.insert(index) }
            return mask
        }()

        if row.kind == .deleted {
            entityChanges.markDeleted(primaryKey, sequence: target.takeSequence())
            changes.deleted.insert(incoming)
            changes.updated.removeValue(forKey: incoming)
            return
        }

        // The incoming object's key, when it has one and this change sets it.
        var newKey: [StoreValue]?
        if !keyIndices.isEmpty, row.kind == .inserted || row.mask.intersects(keyMask) {
            let full = try currentValues(of: primaryKey, entity: entity, changes: entityChanges, over: row)
            let key = keyIndices.map { full[$0] }
            if !key.contains(where: \.isNull) { newKey = key }
        }

        let checkStore = !(row.kind == .inserted && row.keyCheckedAgainstStore)
        if let key = newKey, let existing = try findExisting(key: key, excluding: primaryKey, entity: entity, changes: entityChanges,
                                                              checkStore: checkStore) {
            try merge(row, primaryKey: primaryKey, into: existing, key: key, entity: entity, changes: &entityChanges)
            return
        }

        // No conflict: the change lands as it is.
        if var current = entityChanges.rows[primaryKey] {
            switch current.kind {
            case .deleted:
                return
            case .inserted, .updated:
                for index in row.mask.indices(below: count) { current.values[index] = row.values[index] }
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
                                entity: EntityDescription, changes entityChanges: inout EntityChanges) throws {
        let incoming = id(entity.name, primaryKey)
        let survivor = id(entity.name, existing)
        let count = entity.attributes.count
        switch policy {
        case .error:
            var keyText: [String: String] = [:]
            for (offset, name) in entity.uniquenessConstraint.enumerated() { keyText[name] = describe(key[offset]) }
            conflicts.append(.constraintConflict(entity: entity.name, key: keyText, objects: [incoming, survivor]))
            return
        case .rollback:
            if row.kind == .inserted { changes.merged[incoming] = survivor }
            return
        case .mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump:
            break
        }
        let incomingValues = try currentValues(of: primaryKey, entity: entity, changes: entityChanges, over: row)
        let existingValues = try currentValues(of: existing, entity: entity, changes: entityChanges, over: nil)
        var mask = AttributeMask.empty
        var values = existingValues
        for index in 0..<count {
            let take: Bool
            switch policy {
            case .overwrite: take = true
            case .mergeByPropertyObjectTrump: take = row.mask.contains(index)
            case .mergeByPropertyStoreTrump: take = existingValues[index].isNull && !incomingValues[index].isNull
            case .error, .rollback: take = false
            }
            if take && values[index] != incomingValues[index] {
                values[index] = incomingValues[index]
                mask.insert(index)
            }
        }
        if var current = entityChanges.rows[existing], current.kind != .deleted {
            for index in mask.indices(below: count) { current.values[index] = values[index] }
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

    /// An object's full values at the parent's level, with `row` (an incoming change) on top.
    private mutating func currentValues(of primaryKey: Int64, entity: EntityDescription, changes entityChanges: EntityChanges,
                                        over row: PendingRow?) throws -> [StoreValue] {
        let count = entity.attributes.count
        if let row, row.kind == .inserted { return row.values }
        let levels = [entityChanges] + layers(entity.name)
        var values: [StoreValue]
        switch ComposedRow.compose(primaryKey, levels, attributeCount: count) {
        case .complete(let known)?:
            values = known
        case .deleted?:
            values = Array(repeating: .null, count: count)
        case let composed:
            let base = try store.read { try $0.rows(primaryKeys: [primaryKey], entity: entity) }[primaryKey]
            values = composed.flatMap { $0.values(base: base) } ?? base ?? Array(repeating: .null, count: count)
        }
        if let row {
            for index in row.mask.indices(below: count) { values[index] = row.values[index] }
        }
        return values
    }

    /// The object other than `primaryKey` that has `key` at the parent's level.
    private mutating func findExisting(key: [StoreValue], excluding primaryKey: Int64, entity: EntityDescription,
                                       changes entityChanges: EntityChanges, checkStore: Bool) throws -> Int64? {
        let levels = [entityChanges] + layers(entity.name)
        let keyIndices = entity.uniquenessConstraint.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
        var keyMask = AttributeMask.empty
        for index in keyIndices { keyMask.insert(index) }
        /// Whether a level nearer than `depth` deleted the row or changed its key.
        func shadowed(_ candidate: Int64, above depth: Int) -> Bool {
            for level in levels.prefix(depth) {
                guard let row = level.rows[candidate] else { continue }
                if row.kind == .deleted || row.mask.intersects(keyMask) { return true }
            }
            return false
        }
        for (depth, level) in levels.enumerated() {
            if let candidate = level.keyIndex[key], candidate != primaryKey, !shadowed(candidate, above: depth),
               level.rows[candidate]?.kind != .deleted {
                return candidate
            }
        }
        let stored: Int64?
        if !checkStore {
            stored = nil
        } else if let prefetched = storeKeys[entity.name] {
            stored = prefetched[key]
        } else {
            stored = try store.read { try $0.primaryKey(forKey: key, entity: entity) }
        }
        if let candidate = stored, candidate != primaryKey, !shadowed(candidate, above: levels.count) {
            return candidate
        }
        return nil
    }

    /// Looks up, in one read, which keys of the incoming inserts the store already has.
    private mutating func prefetchStoreKeys(_ layer: ChangeLayer) throws {
        for (entityName, changes) in layer.entities {
            guard let entity = entities[entityName], !entity.uniquenessConstraint.isEmpty else { continue }
            let keyIndices = entity.uniquenessConstraint.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
            var keys: [[StoreValue]] = []
            for row in changes.rows.values where row.kind == .inserted && !row.keyCheckedAgainstStore {
                let key = keyIndices.map { row.values[$0] }
                if !key.contains(where: \.isNull) { keys.append(key) }
            }
            guard keys.count > 1 else { continue }
            storeKeys[entityName] = try store.read { try $0.primaryKeys(forKeys: keys, entity: entity) }
        }
    }
}
