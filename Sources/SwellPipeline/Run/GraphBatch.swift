import SwellContexts

/// The shapes of nested mappings whose records go to the store as batch inserts
/// (`GraphBatch`, `GraphWriter`) rather than object by object (`NestedUpsert`): each
/// nested mapping one level deep, into a keyed entity other than the source's, linked
/// by a to-one the parent keeps or by an unordered to-many kept in the parent's join
/// table, and not `cascade` (letting go of a child deletes it at the end of the run, which
/// `NestedUpsert` tracks); no required relationship on either side (a context's save checks
/// those); a to-one's fields at paths below it. Mappings into the same entity share its
/// batch when they map the same attributes.
struct GraphShape: Sendable {
    let plans: [NestedPlan]
    /// The entities the nested objects go into, in the order of their first plan.
    let entities: [EntityDescription]
    /// Per plan: its entity's index in `entities`.
    let entityOfPlan: [Int]
    /// Per entity: its objects point at the records (a to-many kept by its inverse to-one;
    /// such an entity is the destination of that one plan only).
    let isChildEntity: [Bool]

    init?(root: EntityDescription, plans: [NestedPlan]) {
        var entities: [EntityDescription] = []
        var entityOfPlan: [Int] = []
        var mappedNames: [[String]] = []
        var isChildEntity: [Bool] = []
        // A required relationship is checked by a context's save (a batch insert does not
        // check relationships): the source's entity and the nested ones have none.
        guard root.relationships.allSatisfy(\.isOptional) else { return nil }
        for plan in plans {
            guard plan.children.isEmpty, plan.relationship.deleteRule != .cascade, !plan.entity.uniquenessConstraint.isEmpty,
                  plan.entity.name != root.name, plan.entity.relationships.allSatisfy(\.isOptional) else { return nil }
            // A to-one's element is told from other values by its fields' paths below it: one
            // mapped from the element itself (".") would take a string for the object.
            guard plan.relationship.isToMany || !plan.mapper.paths.contains(["."]) else { return nil }
            let isChild: Bool
            switch plan.kind {
            case .toOne: isChild = false
            case .joinOwner(_, let ordered): guard !ordered else { return nil }; isChild = false
            case .inverseToOne: isChild = true
            case .joinInverse: return nil
            }
            let names = plan.mapping.fields.keys.sorted()
            if let index = entities.firstIndex(where: { $0.name == plan.entity.name }) {
                guard mappedNames[index] == names, !isChild, !isChildEntity[index] else { return nil }
                entityOfPlan.append(index)
            } else {
                entityOfPlan.append(entities.count)
                entities.append(plan.entity)
                mappedNames.append(names)
                isChildEntity.append(isChild)
            }
        }
        self.plans = plans
        self.entities = entities
        self.entityOfPlan = entityOfPlan
        self.isChildEntity = isChildEntity
    }
}

/// A batch of records with nested objects, as the store will take them: the records'
/// own rows as columns, and per nested entity its objects once each by key (a key met
/// again takes the later values, attribute by attribute: what writing the records in
/// order would leave), with each record's links as positions among them. `GraphWriter`
/// writes the nested objects first, then the records with their links.
struct GraphBatch: Sendable {
    /// The nested objects of one entity, once each by key.
    struct Objects: Sendable {
        /// Values by the store entity's attribute index, and which of them the mappings gave.
        var values: [[StoreValue]] = []
        var mapped: [AttributeMask] = []
        var rowForKey: [[StoreValue]: Int] = [:]

        /// Adds `node` (or overlays the object with its key): its position.
        mutating func add(_ node: MappedNode) -> Int {
            if !node.key.contains(where: \.isNull), let row = rowForKey[node.key] {
                for index in node.mapped {
                    values[row][index] = node.values[index]
                    mapped[row].insert(index)
                }
                return row
            }
            var mask = AttributeMask.empty
            for index in node.mapped { mask.insert(index) }
            if !node.key.contains(where: \.isNull) { rowForKey[node.key] = values.count }
            values.append(node.values)
            mapped.append(mask)
            return values.count - 1
        }
    }

    private(set) var records: ColumnBatch
    private(set) var objects: [Objects]
    /// Per record and plan: the linked objects' positions in `objects[entityOfPlan[plan]]`,
    /// record `r`'s for plan `p` at `links[(r * plans + p)]`'s range of `members`.
    private(set) var linkEnds: [Int] = []
    private(set) var members: [Int] = []
    let plans: Int

    init(recordEntity: EntityDescription, shape: GraphShape, expectedRows: Int) {
        records = ColumnBatch(entity: recordEntity, expectedRows: expectedRows)
        objects = Array(repeating: Objects(), count: shape.entities.count)
        plans = shape.plans.count
    }

    /// Records in the batch.
    var count: Int { records.count }

    /// Adds a record: its own values (as `RecordMapper.map` gives them) and its mapped nested objects.
    mutating func append(_ values: [StoreValue], links: [[MappedNode]?], shape: GraphShape) {
        records.append(values)
        addLinks(links, shape: shape)
    }

    /// Appends attribute `attribute`'s value to the record being read (`ColumnBatch.append(_:at:)`).
    mutating func appendRecordValue(_ value: ColumnBatch.Value, at attribute: Int) {
        records.append(value, at: attribute)
    }

    /// Drops the values appended for the record being read.
    mutating func abandonRecord() {
        records.abandonRow()
    }

    /// Completes the record whose values were appended, with its nested objects.
    mutating func endRecord(links: [[MappedNode]?], shape: GraphShape) {
        records.endRow()
        addLinks(links, shape: shape)
    }

    /// Record `row`'s attribute `attribute`, as the store keeps it (keys, cursors).
    func recordValue(row: Int, attribute: Int) -> StoreValue {
        records.value(row: row, attribute: attribute)
    }

    private mutating func addLinks(_ links: [[MappedNode]?], shape: GraphShape) {
        for (plan, nodes) in links.enumerated() {
            let entity = shape.entityOfPlan[plan]
            for node in nodes ?? [] {
                members.append(objects[entity].add(node))
                // A to-one links its first element only (the mapping gives it one).
                if case .toOne = shape.plans[plan].kind { break }
            }
            linkEnds.append(members.count)
        }
    }

    /// Record `record`'s linked positions for plan `plan`.
    func links(record: Int, plan: Int) -> ArraySlice<Int> {
        let slot = record * plans + plan
        return members[(slot == 0 ? 0 : linkEnds[slot - 1])..<linkEnds[slot]]
    }

    /// The records' own columns, leaving the batch's records empty (take once, when writing).
    mutating func takeRecords() -> BatchColumns {
        records.take()
    }
}
