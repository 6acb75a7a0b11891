import SwellStoreCore

/// Join-table writes (Store guarantees 35): a to-many kept in a join table is an in-memory
/// column of its owner's rows (`JoinTable`); committing the row writes its links.
extension SQLiteCommitter {
    /// Writes the links of the row's join-table to-manys: on insert every listed member;
    /// on update (`replace`) the set of each to-many the change names replaces the stored one.
    package func writeLinks(_ row: PendingRow, _ entity: EntityDescription, owner: Int64, replace: Bool) throws {
        guard entity.joinColumnCount > 0 else { return }
        for index in entity.columnCount..<entity.attributes.count {
            guard let join = entity.attributes[index].join else { continue }
            if replace {
                guard row.mask.contains(index) else { continue }
                try connection.run("DELETE FROM \(quoteIdentifier(join.table)) WHERE \(quoteIdentifier(join.owner)) = ?", [.integer(owner)])
            }
            try insertLinks(join, owner: owner, members: JoinTable.decode(row.values[index]), orderFrom: 0, ignoringExisting: false)
        }
    }

    /// Adds the row's members to `owner`'s (an existing object a new one with its key merged
    /// into): the survivor keeps the union, an ordered one its own order then the newcomers.
    package func addLinks(from row: PendingRow, _ entity: EntityDescription, to owner: Int64) throws {
        guard entity.joinColumnCount > 0 else { return }
        for index in entity.columnCount..<entity.attributes.count {
            guard let join = entity.attributes[index].join, row.kind == .inserted || row.mask.contains(index) else { continue }
            var next: Int64 = 0
            if join.isOrdered,
               case .integer(let last)? = try connection.query(
                   "SELECT max(\"_order\") FROM \(quoteIdentifier(join.table)) WHERE \(quoteIdentifier(join.owner)) = ?", [.integer(owner)]).first?.first {
                next = last + 1
            }
            try insertLinks(join, owner: owner, members: JoinTable.decode(row.values[index]), orderFrom: next, ignoringExisting: true)
        }
    }

    /// Removes every link of `owner` (its row goes).
    package func deleteLinks(_ entity: EntityDescription, owner: Int64) throws {
        guard entity.joinColumnCount > 0 else { return }
        for attribute in entity.attributes {
            guard let join = attribute.join else { continue }
            try connection.run("DELETE FROM \(quoteIdentifier(join.table)) WHERE \(quoteIdentifier(join.owner)) = ?", [.integer(owner)])
        }
    }

    private func insertLinks(_ join: JoinTable, owner: Int64, members: [Int64], orderFrom first: Int64, ignoringExisting: Bool) throws {
        guard !members.isEmpty else { return }
        let verb = ignoringExisting ? "INSERT OR IGNORE" : "INSERT"
        let columns = "\(quoteIdentifier(join.owner)), \(quoteIdentifier(join.relationship))" + (join.isOrdered ? ", \"_order\"" : "")
        let sql = "\(verb) INTO \(quoteIdentifier(join.table)) (\(columns)) VALUES (?, ?\(join.isOrdered ? ", ?" : ""))"
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        var order = first
        for member in members {
            statement.reset()
            try statement.bind(.integer(owner), at: 1)
            try statement.bind(.integer(member), at: 2)
            if join.isOrdered { try statement.bind(.integer(order), at: 3) }
            try statement.run()
            if !ignoringExisting || connection.changes > 0 { order += 1 }
        }
    }
}

extension SQLiteCommitter {
    /// Links per INSERT statement of `writeLinks` (two parameters each).
    package static let linksPerInsert = 256

    /// Sets a batch insert's member lists: for stored owners the old links go first (one
    /// DELETE for all of them), then every listed link goes in INSERTs of many rows each,
    /// prepared once per shape. An owner a key conflict merged into a survivor (another
    /// writer's row, found at the insert) lends the survivor its members, as a merge does.
    package mutating func writeLinks(_ links: LinkWrite) throws {
        guard !links.owners.isEmpty else { return }
        let join = links.join
        let table = quoteIdentifier(join.table), ownerColumn = quoteIdentifier(join.owner), memberColumn = quoteIdentifier(join.relationship)
        let owners = links.owners(following: result.merged)
        if links.replace {
            let list = "[" + owners.map(String.init).joined(separator: ",") + "]"
            try connection.run("DELETE FROM \(table) WHERE \(ownerColumn) IN (SELECT value FROM json_each(?))", [.text(list)])
            let names: Set<String> = [join.relationship]
            for owner in owners { noteUpdate(objectID(links.entity, owner), attributes: names) }
        }
        func sql(_ count: Int) -> String {
            "INSERT OR IGNORE INTO \(table) (\(ownerColumn), \(memberColumn)) VALUES "
                + Array(repeating: "(?, ?)", count: count).joined(separator: ", ")
        }
        let full = try connection.statement(sql(Self.linksPerInsert))
        let single = try connection.statement(sql(1))
        func bind(_ statement: SQLiteStatement, _ slot: Int, _ owner: Int64, _ member: Int64) throws {
            try statement.bind(.integer(owner), at: Int32(2 * slot + 1))
            try statement.bind(.integer(member), at: Int32(2 * slot + 2))
        }
        var pending: [(Int64, Int64)] = []
        pending.reserveCapacity(Self.linksPerInsert)
        for (n, owner) in owners.enumerated() {
            for member in links.members(n) {
                pending.append((owner, member))
                if pending.count == Self.linksPerInsert {
                    for (slot, pair) in pending.enumerated() { try bind(full, slot, pair.0, pair.1) }
                    try full.run()
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        for pair in pending {
            try bind(single, 0, pair.0, pair.1)
            try single.run()
        }
    }
}
