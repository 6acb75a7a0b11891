/// Join-table writes (store.md 35): a to-many kept in a join table is an in-memory
/// column of its owner's rows (`JoinTable`); committing the row writes its links.
extension SQLiteCommitter {
    /// Writes the links of the row's join-table to-manys: on insert every listed member;
    /// on update (`replace`) the set of each to-many the change names replaces the stored one.
    func writeLinks(_ row: PendingRow, _ entity: EntityDescription, owner: Int64, replace: Bool) throws {
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
    func addLinks(from row: PendingRow, _ entity: EntityDescription, to owner: Int64) throws {
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
    func deleteLinks(_ entity: EntityDescription, owner: Int64) throws {
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
