/// A value read through relationships for each row of a query (pipeline exports'
/// key-path columns, store.md 35's tables): `author.login` through to-ones, or
/// `labels.name` through one to-many, its values joined by `separator` (in the
/// relationship's order when ordered, otherwise sorted by value).
package struct KeyPathColumn: Sendable, Hashable {
    /// The relationship names, then an attribute of the last destination.
    package var path: [String]
    /// For a path through a to-many: what its values are joined with.
    package var separator: String?

    package init(path: [String], separator: String?) {
        self.path = path
        self.separator = separator
    }
}

/// Builds the SQL expression that reads a `KeyPathColumn` for a row of `entity`'s
/// table (named as itself in the outer query): correlated subqueries through the
/// to-one columns and join tables, so a whole export stays one streamed statement.
struct KeyPathSQL {
    let entities: [String: EntityDescription]

    /// The expression, or why the path does not fit the model.
    func expression(_ column: KeyPathColumn, from entity: EntityDescription) throws(StoreError) -> String {
        var depth = 0
        return try value(column.path[...], entity: entity, alias: quoteIdentifier(entity.name), separator: column.separator,
                         depth: &depth, aggregated: false)
    }

    private func value(_ path: ArraySlice<String>, entity: EntityDescription, alias: String, separator: String?,
                       depth: inout Int, aggregated: Bool) throws(StoreError) -> String {
        guard let name = path.first else { throw StoreError.invalidSortKey(entity: entity.name, key: "") }
        let rest = path.dropFirst()
        if rest.isEmpty {
            guard let attribute = entity.attributes.first(where: { $0.name == name && $0.destination == nil && $0.join == nil }) else {
                throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
            }
            return "\(alias).\(quoteIdentifier(attribute.name))"
        }
        guard let relationship = entity.relationship(named: name), let destination = entities[relationship.destination] else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        depth += 1
        let inner = quoteIdentifier("swell_k\(depth)")
        let table = quoteIdentifier(destination.name)
        let innerValue = try value(rest, entity: destination, alias: inner, separator: separator, depth: &depth,
                                   aggregated: aggregated || relationship.isToMany)
        if !relationship.isToMany {
            return "(SELECT \(innerValue) FROM \(table) AS \(inner) WHERE \(inner).\"_pk\" = \(alias).\(quoteIdentifier(name)))"
        }
        guard !aggregated else { throw StoreError.invalidSortKey(entity: entity.name, key: path.joined(separator: ".")) }
        let joined = "group_concat(swell_v, \(Self.literal(separator ?? "|")))"
        let ordered = relationship.isOrdered
        if let column = entity.attributes.first(where: { $0.name == name })?.join {
            // Kept in this entity's join table.
            let link = quoteIdentifier("swell_j\(depth)")
            let order = ordered ? "\(link).\"_order\"" : "swell_v"
            return "(SELECT \(joined) FROM (SELECT \(innerValue) AS swell_v FROM \(quoteIdentifier(column.table)) AS \(link) JOIN \(table) AS \(inner) ON \(inner).\"_pk\" = \(link).\(quoteIdentifier(column.relationship)) WHERE \(link).\(quoteIdentifier(column.owner)) = \(alias).\"_pk\" ORDER BY \(order)))"
        }
        guard let inverse = relationship.inverse, let inverseColumn = destination.attributes.first(where: { $0.name == inverse }) else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        if let join = inverseColumn.join {
            // The other side of a many-to-many: the destination's join table.
            let link = quoteIdentifier("swell_j\(depth)")
            return "(SELECT \(joined) FROM (SELECT \(innerValue) AS swell_v FROM \(quoteIdentifier(join.table)) AS \(link) JOIN \(table) AS \(inner) ON \(inner).\"_pk\" = \(link).\(quoteIdentifier(join.owner)) WHERE \(link).\(quoteIdentifier(join.relationship)) = \(alias).\"_pk\" ORDER BY swell_v))"
        }
        // Through the destinations' to-one column (ordered: by their hidden position column).
        let order = ordered ? "\(inner).\(quoteIdentifier(ManagedObjectModel.orderColumn(of: inverse))), \(inner).\"_pk\"" : "swell_v"
        return "(SELECT \(joined) FROM (SELECT \(innerValue) AS swell_v FROM \(table) AS \(inner) WHERE \(inner).\(quoteIdentifier(inverse)) = \(alias).\"_pk\" ORDER BY \(order)))"
    }

    /// A string literal for SQL.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
