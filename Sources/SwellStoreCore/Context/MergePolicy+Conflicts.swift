/// Optimistic locking (Store guarantees 61, README "Conflicts between writers"): what a save does
/// with a change whose object changed since the saving context read it.
///
/// A change carries the values it was based on (`PendingRow.base`: the object's snapshot when it
/// was first changed, or last refreshed). A save compares them with the object's values now, at
/// the receiving level — the store's, inside the commit's transaction, for a root; the parent's,
/// for a child — attribute by attribute: the row's version is its values. This extension is the
/// one place the rules live; `CommitDriver` (every store) and the contexts' `ChangeResolver` apply
/// what it decides.
extension MergePolicy {
    /// What becomes of one change checked against the object's values now.
    package enum VersionOutcome {
        /// No conflict: the change lands as it is.
        case unchanged
        /// A conflict the policy resolved: this change lands instead (a narrower or wider update,
        /// or the delete).
        case write(PendingRow)
        /// A conflict the policy resolved by dropping the change: the current state stays.
        case drop
        /// A conflict the policy does not resolve (`.error`; an edit to an object that is gone).
        case conflict(MergeConflict)
    }

    /// Checks `row` (an update or delete with a `base`) of `entity`'s object `id` against
    /// `current`, the object's values now (nil: it is gone).
    package func resolveVersion(of row: PendingRow, id: ObjectID, entity: EntityDescription,
                                current: [StoreValue]?) -> VersionOutcome {
        guard let base = row.base, row.kind != .inserted else { return .unchanged }
        let conflict = { (theirChanges: AttributeMask) in
            MergeConflict(objectID: id, entity: entity, changed: row.mask, theirChanges: theirChanges,
                          isDeletion: row.kind == .deleted, ours: row.values, theirs: current)
        }
        guard let current else {
            // Deleted meanwhile: a delete has nothing left to do; an edit cannot land (only
            // `.rollback` gives it up quietly: the store's state, the deletion, stays).
            if row.kind == .deleted { return .drop }
            return self == .rollback ? .drop : .conflict(conflict(.empty))
        }
        let theirChanges = Self.differences(base, current, entity: entity)
        if theirChanges.isEmpty { return .unchanged }
        switch self {
        case .error:
            return .conflict(conflict(theirChanges))
        case .rollback:
            return .drop
        case .mergeByPropertyObjectTrump:
            // The context's changed attributes win; the rest keep the current values.
            return .write(row)
        case .mergeByPropertyStoreTrump:
            guard row.kind == .updated else { return .write(row) }
            // The current values win where both changed; the context's other changes land.
            var narrowed = row
            for index in row.mask.indices(below: entity.attributes.count) where theirChanges.contains(index) {
                narrowed.mask.remove(index)
            }
            return narrowed.mask.isEmpty ? .drop : .write(narrowed)
        case .overwrite:
            guard row.kind == .updated else { return .write(row) }
            // The context's whole state of the object: what it read, with its changes on top.
            var whole = row
            var values = base
            row.mask.overlay(row.values, onto: &values)
            whole.values = values
            for index in entity.versionedAttributeIndices { whole.mask.insert(index) }
            return .write(whole)
        }
    }

    /// The attributes whose values differ between `base` and `current` (table columns only: a
    /// join-table to-many is its own rows). Dates compare to the microsecond, what PostgreSQL keeps.
    package static func differences(_ base: [StoreValue], _ current: [StoreValue], entity: EntityDescription) -> AttributeMask {
        var mask = AttributeMask.empty
        for index in entity.versionedAttributeIndices where index < base.count && index < current.count {
            let old = base[index]
            let new = current[index]
            if old == new { continue }
            if entity.attributes[index].type == .date, case .real(let a) = old, case .real(let b) = new, abs(a - b) < 0.000_001 { continue }
            mask.insert(index)
        }
        return mask
    }
}

extension EntityDescription {
    /// The attributes a save's version check compares: the table's columns (own attributes and
    /// to-one IDs), not the join-table to-manys.
    package var versionedAttributeIndices: Range<Int> { 0..<columnCount }
}
