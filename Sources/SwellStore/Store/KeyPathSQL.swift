/// A value read through relationships for each row of a query (pipeline exports'
/// key-path columns, Store guarantees 35's tables): `author.login` through to-ones, or
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
package struct KeyPathSQL<Dialect: PredicateSQLDialect> {
    let entities: [String: EntityDescription]
    let dialect: Dialect

    package init(entities: [String: EntityDescription], dialect: Dialect) {
        self.entities = entities
        self.dialect = dialect
    }

    /// The expression, or why the path does not fit the model.
    package func expression(_ column: KeyPathColumn, from entity: EntityDescription) throws(StoreError) -> String {
        var depth = 0
        return try value(column.path[...], entity: entity, alias: dialect.quote(entity.name), separator: column.separator,
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
            return dialect.value(ofColumn: "\(alias).\(dialect.quote(attribute.name))", type: attribute.type)
        }
        guard let relationship = entity.relationship(named: name), let destination = entities[relationship.destination] else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        depth += 1
        let inner = dialect.quote("swell_k\(depth)")
        let table = dialect.quote(destination.name)
        let innerValue = try value(rest, entity: destination, alias: inner, separator: separator, depth: &depth,
                                   aggregated: aggregated || relationship.isToMany)
        if !relationship.isToMany {
            return "(SELECT \(innerValue) FROM \(table) AS \(inner) WHERE \(inner).\"_pk\" = \(alias).\(dialect.quote(name)))"
        }
        guard !aggregated else { throw StoreError.invalidSortKey(entity: entity.name, key: path.joined(separator: ".")) }
        let joinSeparator = separator ?? "|"
        let ordered = relationship.isOrdered
        if let column = entity.attributes.first(where: { $0.name == name })?.join {
            // Kept in this entity's join table.
            let link = dialect.quote("swell_j\(depth)")
            return dialect.joined(innerValue, separator: joinSeparator, orderedBy: ordered ? "\(link).\"_order\"" : nil,
                                  from: "\(dialect.quote(column.table)) AS \(link) JOIN \(table) AS \(inner) ON \(inner).\"_pk\" = \(link).\(dialect.quote(column.relationship)) WHERE \(link).\(dialect.quote(column.owner)) = \(alias).\"_pk\"")
        }
        guard let inverse = relationship.inverse, let inverseColumn = destination.attributes.first(where: { $0.name == inverse }) else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        if let join = inverseColumn.join {
            // The other side of a many-to-many: the destination's join table.
            let link = dialect.quote("swell_j\(depth)")
            return dialect.joined(innerValue, separator: joinSeparator, orderedBy: nil,
                                  from: "\(dialect.quote(join.table)) AS \(link) JOIN \(table) AS \(inner) ON \(inner).\"_pk\" = \(link).\(dialect.quote(join.owner)) WHERE \(link).\(dialect.quote(join.relationship)) = \(alias).\"_pk\"")
        }
        // Through the destinations' to-one column (ordered: by their hidden position column).
        return dialect.joined(innerValue, separator: joinSeparator,
                              orderedBy: ordered ? "\(inner).\(dialect.quote(ManagedObjectModel.orderColumn(of: inverse))), \(inner).\"_pk\"" : nil,
                              from: "\(table) AS \(inner) WHERE \(inner).\(dialect.quote(inverse)) = \(alias).\"_pk\"")
    }

    /// A string literal for SQL.
}
