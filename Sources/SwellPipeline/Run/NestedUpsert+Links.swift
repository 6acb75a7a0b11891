import SwellContexts

/// Unlinking what a record no longer lists, and deleting at the end of the run what
/// `cascade` relationships let go of (Pipeline file reference: "elements no longer listed are
/// unlinked, and deleted only when the relationship's delete rule is `cascade`").
extension NestedUpsert {
    /// Members of `plan`'s relationship that a record took out: remembered by key when
    /// the relationship cascades (the parent's own column or join table unlinks them).
    mutating func release(_ members: [Int64], from plan: NestedPlan, of parent: EntityDescription, in context: ManagedObjectContext) {
        guard plan.relationship.deleteRule == .cascade else { return }
        for member in members {
            let values = BulkSession(context).currentValues(entity: plan.entity, primaryKey: member)
            let key = plan.entity.keyIndices.map { values[$0] }
            guard !key.contains(where: \.isNull) else { continue }
            released.insert(Released(parent: parent.name, relationship: plan.relationship.name, key: key))
        }
    }

    /// The children whose to-one names `parent` and that the record no longer lists: their
    /// to-one (and position) cleared. Under a `cascade` relationship they stay linked until
    /// `finish` deletes them (a child whose to-one is required is never left without one),
    /// unless a record lists them again first. Returns whether there were any.
    mutating func unlinkMembers(of parent: Int64, plan: NestedPlan, parent entity: EntityDescription, column: Int, order: Int?,
                                keeping listed: Set<Int64>, in context: ManagedObjectContext) throws -> Bool {
        var request = FetchRequest(entityName: plan.entity.name)
        request.predicate = FetchPredicate(format: "%K == %@", plan.entity.attributes[column].name, parent)
        var gone: [(Int64, [StoreValue])] = []
        try BulkSession(context).enumerateRows(request) { primaryKey, values in
            if !listed.contains(primaryKey) { gone.append((primaryKey, values)) }
        }
        for (member, values) in gone {
            if plan.relationship.deleteRule == .cascade {
                released.insert(Released(parent: entity.name, relationship: plan.relationship.name, key: plan.entity.keyIndices.map { values[$0] }))
                continue
            }
            var cleared = values
            cleared[column] = .null
            var indices = [column]
            if let order {
                cleared[order] = .null
                indices.append(order)
            }
            BulkSession(context).updateRow(entity: plan.entity, primaryKey: member, values: cleared, indices: indices)
            note(member, values: cleared, entity: plan.entity)
        }
        return !gone.isEmpty
    }

    /// The other side of a many-to-many: adds `parent` to (or removes it from) the child's
    /// join-table column. Returns whether the column changed.
    mutating func setLink(_ parent: Int64, in child: Int64, plan: NestedPlan, column: Int, linked: Bool,
                          in context: ManagedObjectContext) -> Bool {
        guard let join = plan.entity.attributes[column].join else { return false }
        var values = current(child, entity: plan.entity, in: context)
        var members = JoinTable.decode(values[column])
        if linked {
            guard !members.contains(parent) else { return false }
            members.append(parent)
        } else {
            guard members.contains(parent) else { return false }
            members.removeAll { $0 == parent }
        }
        values[column] = JoinTable.encode(members, ordered: join.isOrdered)
        BulkSession(context).updateRow(entity: plan.entity, primaryKey: child, values: values, indices: [column])
        note(child, values: values, entity: plan.entity)
        return true
    }

    /// A row's values as this batch has them.
    private func current(_ id: Int64, entity: EntityDescription, in context: ManagedObjectContext) -> [StoreValue] {
        BulkSession(context).currentValues(entity: entity, primaryKey: id)
    }

    /// At the end of the run: deletes the objects records took out of a `cascade`
    /// relationship, did not list in it again, and that no object holds through it any
    /// more (what they own in turn goes with them when the delete is saved). Returns how
    /// many it deleted.
    mutating func finish(in context: ManagedObjectContext) throws -> Int {
        guard !released.isEmpty else { return 0 }
        let candidates = released
        released.removeAll()
        var deleted = 0
        for candidate in candidates {
            guard let (plan, parent) = plan(named: candidate.relationship, of: candidate.parent) else { continue }
            var id = existing(candidate.key, entity: plan.entity)?.id
            if id == nil { id = try BulkSession(context).storedRows(forKeys: [candidate.key], entity: plan.entity)[candidate.key]?.primaryKey }
            guard let id, try !isHeld(id, through: plan, of: parent, in: context) else { continue }
            BulkSession(context).deleteRows(entity: plan.entity.name, primaryKeys: [id])
            batchRows[plan.entity.name]?[candidate.key] = nil
            deleted += 1
        }
        return deleted
    }

    /// Whether some object holds `member` through `plan`'s relationship.
    private func isHeld(_ member: Int64, through plan: NestedPlan, of parent: EntityDescription, in context: ManagedObjectContext) throws -> Bool {
        switch plan.kind {
        case .toOne(let column):
            var request = FetchRequest(entityName: parent.name)
            request.predicate = FetchPredicate(format: "%K == %@", parent.attributes[column].name, member)
            var held = false
            try BulkSession(context).enumerateRows(request) { _, _ in held = true }
            return held
        case .joinOwner(let column, _):
            guard let join = parent.attributes[column].join else { return false }
            return !BulkSession(context).owners(in: join, column: column, listing: member).isEmpty
        case .inverseToOne:
            // Its to-one still names the parent that let go of it: no record listed it since.
            return false
        case .joinInverse(let column):
            return !JoinTable.decode(current(member, entity: plan.entity, in: context)[column]).isEmpty
        }
    }

    /// The plan of relationship `name` of entity `parent`, and that entity, anywhere in the tree.
    private func plan(named name: String, of parent: String) -> (NestedPlan, EntityDescription)? {
        func search(_ plans: [NestedPlan], under entity: EntityDescription) -> (NestedPlan, EntityDescription)? {
            for plan in plans {
                if entity.name == parent && plan.relationship.name == name { return (plan, entity) }
                if let found = search(plan.children, under: plan.entity) { return found }
            }
            return nil
        }
        return search(plans, under: root)
    }
}
