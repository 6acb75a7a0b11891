import SwellContexts

/// Writes a chunk of records with nested objects (Pipeline file reference, version 2)
/// into a worker's context, without creating managed objects: each nested
/// object is upserted into its entity by its key and linked, and every mapped
/// relationship holds exactly what the record lists ("the set is what the record
/// says").
///
/// - An object is written property by property, like every upsert: the attributes
///   its mapping maps (`MappedNode.mapped`) and the relationship columns its plans
///   write; the others keep their stored values.
/// - A relationship's members that the record no longer lists are unlinked, on
///   whichever side the store keeps the link (the parent's column or join table, the
///   children's to-one, or the other side's join table). Those taken out of a
///   `cascade` relationship are remembered by key and deleted by `finish` at the end
///   of the run when no object holds them through it any more (an element may move
///   to another parent later in the run).
/// - A stored object whose own columns are as stored but whose links changed counts
///   as updated (`touched`); one that did not change at all as unchanged.
///
/// Keys are looked up once per chunk and entity, over what earlier batches put on
/// disk (the worker waits for them) and what this batch wrote. Used on one worker's
/// queue: a source with nested mappings has one worker, so its records are written
/// in the order they came (the later record wins, for links too).
struct NestedUpsert {
    /// The source's entity as the store keeps it, and its nested mappings.
    let root: EntityDescription
    let plans: [NestedPlan]

    /// Rows this batch wrote, relinked or unlinked, with their values as they are now, by entity and key.
    var batchRows: [String: [[StoreValue]: (id: Int64, values: [StoreValue])]] = [:]
    /// The stored rows of the chunk's keys, by entity and key.
    private var stored: [String: [[StoreValue]: (primaryKey: Int64, values: [StoreValue])]] = [:]
    /// Objects found equal to what is stored, by entity (counted as unchanged).
    private(set) var unchanged: [String: Int] = [:]
    /// Stored objects whose own row stayed but whose links (kept on the other side) changed, by entity: counted as updated.
    private(set) var touched: [String: Int] = [:]
    /// Objects taken out of a `cascade` relationship during the run and not listed in it again since, for `finish`.
    var released = Set<Released>()

    /// An object a record took out of a `cascade` relationship of `parent`.
    struct Released: Hashable {
        let parent: String
        let relationship: String
        let key: [StoreValue]
    }

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

    /// After the worker's save: rows of this batch are no longer this level's.
    mutating func batchSaved() {
        batchRows.removeAll(keepingCapacity: true)
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

    /// The records (by position in `records`) whose to-one given by a key (`{ key: … }`
    /// without `create`) names a destination that neither the store nor this batch has: why
    /// each is bad and the path. Reads the stored keys as `write` does; nil work when the
    /// source has no such mapping.
    mutating func unknownKeyReferences(_ records: [MappedNode], in context: ManagedObjectContext) throws -> [Int: (path: String, message: String)] {
        let checked = plans.enumerated().filter { $0.element.mapping.byKey?.create == false }
        guard !checked.isEmpty else { return [:] }
        try lookUp(records, in: context)
        defer { stored.removeAll(keepingCapacity: true) }
        var bad: [Int: (path: String, message: String)] = [:]
        for (position, record) in records.enumerated() {
            for (index, plan) in checked {
                guard let child = record.links[index]?.first, existing(child.key, entity: plan.entity) == nil else { continue }
                let path = plan.mapping.path.joined(separator: ".")
                let value = child.key.first.map(\.messageText) ?? "null"
                bad[position] = (path, "\(path): \(value) is the key of no stored \(plan.entity.name) (nor of one earlier in the run); give \(plan.relationship.name) create: true to insert it")
                break
            }
        }
        return bad
    }

    /// Reads the stored rows of every key the chunk names, one read per entity.
    private mutating func lookUp(_ records: [MappedNode], in context: ManagedObjectContext) throws {
        var keys: [String: Set<[StoreValue]>] = [:]
        func collect(_ node: MappedNode, entity: EntityDescription, plans: [NestedPlan]) {
            if !node.key.isEmpty, batchRows[entity.name]?[node.key] == nil { keys[entity.name, default: []].insert(node.key) }
            for (plan, nodes) in zip(plans, node.links) {
                for child in nodes ?? [] { collect(child, entity: plan.entity, plans: plan.children) }
            }
        }
        let entities = self.entities
        for record in records { collect(record, entity: root, plans: plans) }
        for (name, wanted) in keys {
            guard let entity = entities[name] else { continue }
            stored[name] = try BulkSession(context).storedRows(forKeys: Array(wanted), entity: entity)
        }
    }

    /// The object with `key` as this batch sees it: written this batch, or stored.
    func existing(_ key: [StoreValue], entity: EntityDescription) -> (id: Int64, values: [StoreValue])? {
        guard !key.isEmpty else { return nil }
        if let row = batchRows[entity.name]?[key] { return row }
        return stored[entity.name]?[key].map { ($0.primaryKey, $0.values) }
    }

    /// Notes a row this batch wrote or relinked, with its values as they are now.
    mutating func note(_ id: Int64, values: [StoreValue], entity: EntityDescription) {
        let key = entity.keyIndices.map { values[$0] }
        guard !key.isEmpty, !key.contains(where: \.isNull) else { return }
        batchRows[entity.name, default: [:]][key] = (id, values)
    }

    /// Writes one object and its links; returns its ID at this level and whether it or its links changed.
    private mutating func write(_ node: MappedNode, entity: EntityDescription, plans: [NestedPlan], written: Set<Int>,
                                in context: ManagedObjectContext) throws -> (id: Int64, changed: Bool) {
        let before = existing(node.key, entity: entity)
        // Children listed again are no longer let go of, whichever parent let go of them earlier in the run.
        if !released.isEmpty {
            for (plan, nodes) in zip(plans, node.links) where plan.relationship.deleteRule == .cascade {
                for child in nodes ?? [] {
                    released.remove(Released(parent: entity.name, relationship: plan.relationship.name, key: child.key))
                }
            }
        }
        var values = node.values
        // Children this object points at come first: their IDs go in its columns.
        for (plan, nodes) in zip(plans, node.links) {
            switch plan.kind {
            case .toOne(let column):
                var now: Int64?
                if let child = nodes?.first, let reference = plan.mapping.byKey, !reference.create,
                   existing(child.key, entity: plan.entity) == nil {
                    let value = child.key.first.map(\.messageText) ?? "null"
                    throw PipelineError(.data, "a \(entity.name) record's \(plan.mapping.path.joined(separator: ".")) is \(value), which no stored \(plan.entity.name) has (nor one earlier in the run); give \(plan.relationship.name) create: true to insert it")
                }
                if let child = nodes?.first {
                    now = try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id
                }
                values[column] = now.map { .integer($0) } ?? .null
                if let before, case .integer(let old) = before.values[column], old != now {
                    release([old], from: plan, of: entity, in: context)
                }
            case .joinOwner(let column, let ordered):
                var ids: [Int64] = []
                for child in nodes ?? [] {
                    let id = try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id
                    if !ids.contains(id) { ids.append(id) }
                }
                values[column] = JoinTable.encode(ids, ordered: ordered)
                if let before {
                    release(JoinTable.decode(before.values[column]).filter { !ids.contains($0) }, from: plan, of: entity, in: context)
                }
            case .inverseToOne, .joinInverse:
                break
            }
        }
        let (id, rowChanged) = try writeRow(values, node: node, entity: entity, written: written, before: before, in: context)
        var linksChanged = false
        // Children that point at this object (their to-one, or their join table): the set is what the record says.
        for (plan, nodes) in zip(plans, node.links) {
            switch plan.kind {
            case .inverseToOne(let column, let order):
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
                if before != nil, try unlinkMembers(of: id, plan: plan, parent: entity, column: column, order: order, keeping: listed, in: context) {
                    linksChanged = true
                }
            case .joinInverse(let column):
                var listed: [Int64] = []
                for child in nodes ?? [] {
                    let childID = try write(child, entity: plan.entity, plans: plan.children, written: plan.writtenColumns, in: context).id
                    listed.append(childID)
                    if setLink(id, in: childID, plan: plan, column: column, linked: true, in: context) { linksChanged = true }
                }
                if before != nil, let join = plan.entity.attributes[column].join {
                    for member in BulkSession(context).owners(in: join, column: column, listing: id) where !listed.contains(member) {
                        if setLink(id, in: member, plan: plan, column: column, linked: false, in: context) {
                            linksChanged = true
                            release([member], from: plan, of: entity, in: context)
                        }
                    }
                }
            case .toOne, .joinOwner:
                break
            }
        }
        // An object whose own row is as stored counts as unchanged unless the children
        // that point at it changed (then it counts as updated: its set changed).
        if before != nil && !rowChanged {
            if linksChanged { touched[entity.name, default: 0] += 1 } else { unchanged[entity.name, default: 0] += 1 }
        }
        return (id, rowChanged || linksChanged || before == nil)
    }

    /// Inserts or updates one row. An existing object (met earlier this batch, or stored)
    /// is updated only in the columns the record maps and the relationship columns its
    /// plans write, where they differ; the rest keeps its values. A new object gets the
    /// mapped values and nil elsewhere. Returns the ID and whether the row changed.
    private mutating func writeRow(_ mapped: [StoreValue], node: MappedNode, entity: EntityDescription, written: Set<Int>,
                                   before: (id: Int64, values: [StoreValue])?, in context: ManagedObjectContext) throws -> (Int64, Bool) {
        let columns = node.mapped + written.sorted()
        var values = mapped
        if let before {
            let kept = Set(columns)
            for index in entity.attributes.indices where !kept.contains(index) { values[index] = before.values[index] }
            let changed = columns.filter { values[$0] != before.values[$0] }
            if !changed.isEmpty {
                BulkSession(context).updateRow(entity: entity, primaryKey: before.id, values: values, indices: changed)
            }
            note(before.id, values: values, entity: entity)
            return (before.id, !changed.isEmpty)
        }
        let mappedSet = Set(node.mapped)
        if let missing = entity.attributes.indices.first(where: { index in
            let attribute = entity.attributes[index]
            return !mappedSet.contains(index) && !attribute.isOptional && attribute.destination == nil && attribute.join == nil && attribute.orderOf == nil
        }) {
            let key = zip(entity.uniquenessConstraint, node.key).map { "\($0)=\($1.messageText)" }.joined(separator: ", ")
            throw PipelineError(.data, "a new \(entity.name) (\(key)) needs \(entity.attributes[missing].name), which its nested mapping does not map")
        }
        let id = BulkSession(context).insertRow(entity: entity, values: values)
        note(id, values: values, entity: entity)
        return (id, true)
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
