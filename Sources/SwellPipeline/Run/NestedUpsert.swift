import SwellStore

/// Writes a chunk of records with nested objects (pipeline-file.md, version 2)
/// into a worker's context, without creating managed objects: each nested
/// object is upserted into its entity by its key and linked, and a to-many
/// holds exactly what the record lists ("the set is what the record says").
///
/// Keys are looked up in the store once per chunk and entity; a stored object
/// is written only where a value or link differs, a new one is inserted once
/// per batch (later occurrences update it: the later record wins). Used on the
/// worker's queue; one per worker, emptied when the worker's batch is saved.
struct NestedUpsert {
    /// The source's entity as the store keeps it, and its nested mappings.
    let root: EntityDescription
    let plans: [NestedPlan]

    /// IDs given or found this batch, with the values written (or found stored), by entity and key.
    private var batchIDs: [String: [[StoreValue]: (id: Int64, values: [StoreValue])]] = [:]
    /// The stored rows of the chunk's keys, by entity and key.
    private var stored: [String: [[StoreValue]: (primaryKey: Int64, values: [StoreValue])]] = [:]
    /// Objects found equal to what is stored, by entity (counted as unchanged).
    private(set) var unchanged: [String: Int] = [:]
    /// Stored objects whose row stayed but whose to-many (held by the children's
    /// columns) changed, by entity: counted as updated.
    private(set) var touched: [String: Int] = [:]

    init(root: EntityDescription, plans: [NestedPlan]) {
        self.root = root
        self.plans = plans
    }

    /// The store's entities this writer writes, by name.
    var entities: [String: EntityDescription] {
        var result = [root.name: root]
        func note(_ plans: [NestedPlan]) {
            for plan in plans {
                result[plan.entity.name] = plan.entity
                note(plan.children)
            }
        }
        note(plans)
        return result
    }

    /// How many objects of `entity` were found unchanged since the last call (the
    /// source's own entity counts per chunk; nested ones with the batch).
    mutating func takeUnchanged(of entity: String) -> Int {
        unchanged.removeValue(forKey: entity) ?? 0
    }

    /// After the worker's save: IDs of this batch are no longer this level's.
    mutating func batchSaved() {
        batchIDs.removeAll(keepingCapacity: true)
        unchanged.removeAll()
        touched.removeAll()
    }

    /// Writes the chunk's records (their mapped trees) in order.
    mutating func write(_ records: [MappedNode], in context: ManagedObjectContext) throws {
        try lookUp(records, in: context)
        let written = NestedPlan.columns(writtenBy: plans)
        for record in records {
            _ = try write(record, entity: root, plans: plans, written: written, in: context)
        }
        stored.removeAll(keepingCapacity: true)
    }

    /// Reads the stored rows of every key the chunk names, one read per entity.
    private mutating func lookUp(_ records: [MappedNode], in context: ManagedObjectContext) throws {
        var keys: [String: Set<[StoreValue]>] = [:]
        func collect(_ node: MappedNode, entity: EntityDescription, plans: [NestedPlan]) {
            if !node.key.isEmpty { keys[entity.name, default: []].insert(node.key) }
            for (plan, nodes) in zip(plans, node.links) {
                for child in nodes ?? [] { collect(child, entity: plan.entity, plans: plan.children) }
            }
        }
        let entities = self.entities
        for record in records { collect(record, entity: root, plans: plans) }
        for (name, wanted) in keys {
            guard let entity = entities[name] else { continue }
            stored[name] = try context.storedRows(forKeys: Array(wanted), entity: entity)
        }
    }

    /// Writes one object and its links; returns its ID at this level.
    private mutating func write(_ node: MappedNode, entity: EntityDescription, plans: [NestedPlan], written: Set<Int>,
                                in context: ManagedObjectContext) throws -> (id: Int64, changed: Bool) {
        var values = node.values
        // Children this object points at come first: their IDs go in its columns.
        for (plan, nodes) in zip(plans, node.links) {
            switch plan.kind {
            case .toOne(let column):
                if let child = nodes?.first {
                    values[column] = .integer(try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id)
                } else {
                    values[column] = .null
                }
            case .joinOwner(let column, let ordered):
                var ids: [Int64] = []
                for child in nodes ?? [] {
                    let id = try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id
                    if !ids.contains(id) { ids.append(id) }
                }
                values[column] = JoinTable.encode(ids, ordered: ordered)
            case .inverseToOne, .joinInverse:
                break
            }
        }
        let (id, existed, rowChanged) = try writeRow(values, key: node.key, entity: entity, written: written, in: context)
        var linksChanged = false
        // Children that point at this object: their column names it; the set is what the record says.
        for (plan, nodes) in zip(plans, node.links) {
            switch plan.kind {
            case .inverseToOne(let column, let order, let cascade):
                var listed = Set<Int64>()
                for (position, var child) in (nodes ?? []).enumerated() {
                    child.values[column] = .integer(id)
                    var columns = plan.writtenColumns.union([column])
                    if let order {
                        child.values[order] = .integer(Int64(position))
                        columns.insert(order)
                    }
                    let written = try write(child, entity: plan.entity, plans: plan.children, written: columns, in: context)
                    listed.insert(written.id)
                    linksChanged = linksChanged || written.changed
                }
                if existed, try releaseMembers(of: id, plan: plan, column: column, keeping: listed, cascade: cascade, in: context) {
                    linksChanged = true
                }
            case .joinInverse(let column):
                for child in nodes ?? [] {
                    let childID = try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id
                    if try addOwner(id, to: childID, entity: plan.entity, column: column, in: context) { linksChanged = true }
                }
            case .toOne, .joinOwner:
                break
            }
        }
        // An object whose own row is as stored counts as unchanged unless the children
        // that point at it changed (then it counts as updated: its set changed).
        if existed && !rowChanged {
            if linksChanged { touched[entity.name, default: 0] += 1 } else { unchanged[entity.name, default: 0] += 1 }
        }
        return (id, rowChanged || linksChanged || !existed)
    }

    /// Inserts or updates one row: a key met this batch is updated (the later record
    /// wins), a stored one only where it differs, a new one inserted. Relationship
    /// columns no plan writes keep their stored value. Returns the ID and whether the
    /// object existed before this record (stored, or met earlier this batch), and whether its row changed.
    private mutating func writeRow(_ mapped: [StoreValue], key: [StoreValue], entity: EntityDescription, written: Set<Int>,
                                   in context: ManagedObjectContext) throws -> (Int64, Bool, Bool) {
        var values = mapped
        let userColumns = entity.attributes.indices.filter {
            entity.attributes[$0].destination == nil && entity.attributes[$0].join == nil && entity.attributes[$0].orderOf == nil
        }
        let relationshipColumns = entity.attributes.indices.filter { written.contains($0) }
        let columns = userColumns + relationshipColumns
        if !key.isEmpty, let (id, earlier) = batchIDs[entity.name]?[key] {
            // Met earlier this batch: the later record wins, where it differs.
            for index in entity.attributes.indices where !columns.contains(index) { values[index] = earlier[index] }
            let changed = columns.filter { values[$0] != earlier[$0] }
            if !changed.isEmpty {
                context.updateRow(entity: entity, primaryKey: id, values: values, indices: changed)
                batchIDs[entity.name, default: [:]][key] = (id, values)
            }
            return (id, true, !changed.isEmpty)
        }
        if !key.isEmpty, let row = stored[entity.name]?[key] {
            for index in entity.attributes.indices where !columns.contains(index) { values[index] = row.values[index] }
            let changed = columns.filter { values[$0] != row.values[$0] }
            if !changed.isEmpty {
                context.updateRow(entity: entity, primaryKey: row.primaryKey, values: values, indices: changed)
            }
            batchIDs[entity.name, default: [:]][key] = (row.primaryKey, values)
            return (row.primaryKey, true, !changed.isEmpty)
        }
        let id = context.insertRow(entity: entity, values: values)
        if !key.isEmpty { batchIDs[entity.name, default: [:]][key] = (id, values) }
        return (id, false, true)
    }

    /// A stored parent's members that the record no longer lists: deleted (cascade) or
    /// unlinked. Returns whether there were any.
    private func releaseMembers(of parent: Int64, plan: NestedPlan, column: Int, keeping listed: Set<Int64>, cascade: Bool,
                                in context: ManagedObjectContext) throws -> Bool {
        var request = FetchRequest(entityName: plan.entity.name)
        request.predicate = FetchPredicate(format: "%K == %@", plan.entity.attributes[column].name, parent)
        var gone: [Int64] = []
        try context.enumerateRows(request) { primaryKey, _ in
            if !listed.contains(primaryKey) { gone.append(primaryKey) }
        }
        guard !gone.isEmpty else { return false }
        if cascade {
            context.deleteRows(entity: plan.entity.name, primaryKeys: gone)
        } else {
            var cleared = [StoreValue](repeating: .null, count: plan.entity.attributes.count)
            cleared[column] = .null
            for member in gone { context.updateRow(entity: plan.entity, primaryKey: member, values: cleared, indices: [column]) }
        }
        return true
    }

    /// The other side of a many-to-many: the child's join column gains the parent.
    private func addOwner(_ parent: Int64, to child: Int64, entity: EntityDescription, column: Int,
                          in context: ManagedObjectContext) throws -> Bool {
        guard let join = entity.attributes[column].join else { return false }
        let members = JoinTable.decode(context.currentValues(entity: entity, primaryKey: child)[column])
        guard !members.contains(parent) else { return false }
        var values = [StoreValue](repeating: .null, count: entity.attributes.count)
        values[column] = JoinTable.encode(members + [parent], ordered: join.isOrdered)
        context.updateRow(entity: entity, primaryKey: child, values: values, indices: [column])
        return true
    }
}

/// A save's did-save changes counted per entity: inserted, updated (objects whose
/// own columns changed: an object listed only because the other side of one of its
/// relationships changed is not counted), and unchanged.
struct NestedCounts {
    private(set) var counts: [String: RunReport.Counts] = [:]

    init(_ changes: ContextDidSaveChanges, entities: [String: EntityDescription]) {
        for id in changes.inserted { counts[id.entityName, default: RunReport.Counts()].inserted += 1 }
        for (id, keys) in changes.updated where !changes.inserted.contains(id) {
            guard let entity = entities[id.entityName] else { continue }
            if keys.contains(where: { key in entity.attributes.contains { $0.name == key } }) {
                counts[id.entityName, default: RunReport.Counts()].updated += 1
            }
        }
        for id in changes.unchanged { counts[id.entityName, default: RunReport.Counts()].unchanged += 1 }
    }
}

