import SwellStoreCore
/// The rows of a linked insert that point at its records by a to-one (`LinkedChildren`):
/// the record each carried row points at, the stored rows to unlink (they point at one of
/// the records and no request carries them), and the records whose set of such rows changed.
struct ChildLinks {
    /// Per entity: each carried row's primary key and the record it points at (nil: none).
    private var carried: [String: [Int64: Int64?]] = [:]
    /// Per entity: the name of the records' to-many its to-one is the inverse of.
    private var inverses: [String: String] = [:]
    /// Records whose rows moved away or were unlinked (known before the commit), with the
    /// name of their to-many.
    private var touched: [Int64: String] = [:]
    /// Stored rows that no longer point at a record: their to-one set to nil.
    private(set) var unlinks: [StoreChangeSet.Operation] = []
    /// Their primary keys, per entity.
    private var unlinked: [String: Set<Int64>] = [:]

    /// Stored rows looked for in one query per this many owners (a placeholder each).
    private static let ownersPerQuery = 5_000

    /// Plans `group`'s requests with `planning` (which returns each row's primary key), and
    /// finds the stored rows that point at its owners (`matching` makes a fetch a store query).
    ///
    /// `newOwners`: the records new in this batch, which no stored row can point at yet.
    mutating func plan(_ group: LinkedChildren, newOwners: Set<Int64>, store: any PersistentStore, entities: [String: EntityDescription],
                       planning: (BatchInsertRequest) throws -> [Int64], matching: (FetchRequest) throws -> StoreQuery) throws {
        let name = group.entity
        guard let entity = entities[name], group.requests.allSatisfy({ $0.entityName == name }),
              let column = entity.attributes.firstIndex(where: { $0.name == group.relationship }) else {
            throw StoreError.unsupported(store: "Swell", what: "linked children without a to-one \(group.relationship)")
        }
        var rows = carried[name, default: [:]]
        for request in group.requests {
            guard case .columns(let columns) = request.rows, let reference = columns.attributeNames.firstIndex(of: group.relationship) else {
                throw StoreError.unsupported(store: "Swell", what: "linked children without a column \(group.relationship)")
            }
            for (row, key) in try planning(request).enumerated() where key >= 0 {
                if case .integer(let owner) = columns.value(row: row, column: reference) { rows[key] = owner } else { rows[key] = .some(nil) }
            }
        }
        carried[name] = rows
        inverses[name] = group.inverse
        let owners = Set(group.owners).subtracting(newOwners).sorted()
        var mask = AttributeMask.empty
        mask.insert(column)
        // Its place in the ordered to-many it leaves goes with it.
        if let order = entity.attributes.firstIndex(where: { $0.orderOf == group.relationship }) { mask.insert(order) }
        let cleared = PendingRow(kind: .updated, values: Array(repeating: .null, count: entity.attributes.count), mask: mask, sequence: 0)
        for start in stride(from: 0, to: owners.count, by: Self.ownersPerQuery) {
            var request = FetchRequest(entityName: name)
            request.predicate = FetchPredicate(format: "%K IN %@", group.relationship, Array(owners[start..<min(start + Self.ownersPerQuery, owners.count)]))
            var query = try matching(request)
            query.anyOrder = true
            // Read in place: only each row's ID and to-one are used.
            var found: [(row: Int64, owner: Int64)] = []
            try store.read { reader in
                try reader.forEachRowCursor(query) { cursor in
                    if case .integer(let owner) = cursor.withField(column, { $0 }) { found.append((cursor.primaryKey, owner)) }
                }
            }
            for (row, owner) in found {
                if let now = rows[row] {
                    if now != owner { touched[owner] = group.inverse }
                    continue
                }
                unlinks.append(StoreChangeSet.Operation(entity: name, primaryKey: row, row: cleared))
                unlinked[name, default: []].insert(row)
                touched[owner] = group.inverse
            }
        }
    }

    /// Whether a request carried row `primaryKey` of `entity`, or unlinked it: a row the batch
    /// changed itself (its to-one is its own column), which counts as updated when it changed.
    func concerns(_ primaryKey: Int64, of entity: String) -> Bool {
        carried[entity]?[primaryKey] != nil || unlinked[entity]?.contains(primaryKey) == true
    }

    /// The records whose rows changed, with the name of their to-many: those found before
    /// the commit, and those a carried row that was inserted or changed points at.
    func touchedOwners(after result: StoreCommitResult) -> [Int64: String] {
        guard !carried.isEmpty else { return touched }
        var owners = touched
        func note(_ id: ObjectID) {
            guard let inverse = inverses[id.entityName], case let owner?? = carried[id.entityName]?[id.primaryKey] else { return }
            owners[owner] = inverse
        }
        for id in result.inserted { note(id) }
        for id in result.updated.keys { note(id) }
        return owners
    }
}
