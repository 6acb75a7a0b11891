/// A value read through relationships for each row of a query (pipeline exports'
/// key-path columns, Store guarantees 35's tables): `author.login` through to-ones, or
/// `labels.name` through one to-many, its values joined by `separator` (in the
/// relationship's order when ordered, otherwise sorted by value).
public struct KeyPathColumn: Sendable, Hashable {
    /// The relationship names, then an attribute of the last destination.
    public var path: [String]
    /// For a path through a to-many: what its values are joined with.
    public var separator: String?

    public init(path: [String], separator: String?) {
        self.path = path
        self.separator = separator
    }
}

/// A `KeyPathColumn` checked against the model: each relationship it goes through, how
/// that relationship is kept, and the attribute it ends at. The one place the rules of a
/// key path live (to-ones, then at most one to-many, ending at an attribute); the SQL of
/// each store's dialect is rendered from this (`KeyPathSQL`), and a context checks a path
/// with it before any store reads.
package struct ResolvedKeyPath: Sendable {
    /// One relationship on the way, and where its links are kept.
    package enum Hop: Sendable {
        /// A to-one: the source's column `name` holds the destination's `_pk`.
        case toOne(name: String, destination: EntityDescription)
        /// A to-many kept in the source entity's own join table.
        case joinTable(JoinTable, destination: EntityDescription, ordered: Bool)
        /// The other side of a many-to-many: the destination's join table.
        case inverseJoinTable(JoinTable, destination: EntityDescription)
        /// A to-many whose destinations point back through their to-one column `inverse`.
        case inverseColumn(inverse: String, destination: EntityDescription, ordered: Bool)
    }

    /// The relationships in order, from the source entity.
    package var hops: [Hop]
    /// The attribute of the last destination the path reads.
    package var attribute: AttributeDescription

    /// Resolves `column` from `entity`, or throws why it does not fit the model: an unknown
    /// name (`.unknownAttribute`), a path through two to-manys or an empty one (`.invalidSortKey`).
    package init(_ column: KeyPathColumn, from entity: EntityDescription,
                 entities: [String: EntityDescription]) throws(StoreError) {
        var hops: [Hop] = []
        attribute = try Self.resolve(column.path[...], entity: entity, entities: entities, aggregated: false, hops: &hops)
        self.hops = hops.reversed()
    }

    /// Checked from the end inward (a deeper unknown name is reported before a second
    /// to-many), so `hops` is filled last hop first.
    private static func resolve(_ path: ArraySlice<String>, entity: EntityDescription, entities: [String: EntityDescription],
                                aggregated: Bool, hops: inout [Hop]) throws(StoreError) -> AttributeDescription {
        guard let name = path.first else { throw StoreError.invalidSortKey(entity: entity.name, key: "") }
        let rest = path.dropFirst()
        if rest.isEmpty {
            guard let attribute = entity.attributes.first(where: { $0.name == name && $0.destination == nil && $0.join == nil }) else {
                throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
            }
            return attribute
        }
        guard let relationship = entity.relationship(named: name), let destination = entities[relationship.destination] else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        let attribute = try resolve(rest, entity: destination, entities: entities,
                                    aggregated: aggregated || relationship.isToMany, hops: &hops)
        if !relationship.isToMany {
            hops.append(.toOne(name: name, destination: destination))
            return attribute
        }
        guard !aggregated else { throw StoreError.invalidSortKey(entity: entity.name, key: path.joined(separator: ".")) }
        if let join = entity.attributes.first(where: { $0.name == name })?.join {
            hops.append(.joinTable(join, destination: destination, ordered: relationship.isOrdered))
            return attribute
        }
        guard let inverse = relationship.inverse, let inverseColumn = destination.attributes.first(where: { $0.name == inverse }) else {
            throw StoreError.unknownAttribute(entity: entity.name, attribute: name)
        }
        if let join = inverseColumn.join {
            hops.append(.inverseJoinTable(join, destination: destination))
        } else {
            hops.append(.inverseColumn(inverse: inverse, destination: destination, ordered: relationship.isOrdered))
        }
        return attribute
    }
}

/// Builds the SQL expression that reads a `KeyPathColumn` for a row of `entity`'s
/// table (named as itself in the outer query): correlated subqueries through the
/// to-one columns and join tables, so a whole export stays one streamed statement.
package struct KeyPathSQL<Dialect: PredicateSQLDialect> {
    package let entities: [String: EntityDescription]
    package let dialect: Dialect

    package init(entities: [String: EntityDescription], dialect: Dialect) {
        self.entities = entities
        self.dialect = dialect
    }

    /// The expression, or why the path does not fit the model (`ResolvedKeyPath`).
    package func expression(_ column: KeyPathColumn, from entity: EntityDescription) throws(StoreError) -> String {
        let resolved = try ResolvedKeyPath(column, from: entity, entities: entities)
        return value(resolved.hops[...], attribute: resolved.attribute, alias: dialect.quote(entity.name),
                     separator: column.separator ?? "|", depth: 1)
    }

    /// The value of `attribute` read through `hops` from the row named `alias`; the hop
    /// at `depth` names its aliases `swell_k<depth>` and `swell_j<depth>`.
    private func value(_ hops: ArraySlice<ResolvedKeyPath.Hop>, attribute: AttributeDescription, alias: String,
                       separator: String, depth: Int) -> String {
        guard let hop = hops.first else {
            return dialect.value(ofColumn: "\(alias).\(dialect.quote(attribute.name))", type: attribute.type)
        }
        let inner = dialect.quote("swell_k\(depth)")
        let link = dialect.quote("swell_j\(depth)")
        let innerValue = value(hops.dropFirst(), attribute: attribute, alias: inner, separator: separator, depth: depth + 1)
        switch hop {
        case .toOne(let name, let destination):
            return "(SELECT \(innerValue) FROM \(dialect.quote(destination.name)) AS \(inner) WHERE \(inner).\"_pk\" = \(alias).\(dialect.quote(name)))"
        case .joinTable(let join, let destination, let ordered):
            // Kept in this entity's join table.
            return dialect.joined(innerValue, separator: separator, orderedBy: ordered ? "\(link).\"_order\"" : nil,
                                  from: "\(dialect.quote(join.table)) AS \(link) JOIN \(dialect.quote(destination.name)) AS \(inner) ON \(inner).\"_pk\" = \(link).\(dialect.quote(join.relationship)) WHERE \(link).\(dialect.quote(join.owner)) = \(alias).\"_pk\"")
        case .inverseJoinTable(let join, let destination):
            return dialect.joined(innerValue, separator: separator, orderedBy: nil,
                                  from: "\(dialect.quote(join.table)) AS \(link) JOIN \(dialect.quote(destination.name)) AS \(inner) ON \(inner).\"_pk\" = \(link).\(dialect.quote(join.owner)) WHERE \(link).\(dialect.quote(join.relationship)) = \(alias).\"_pk\"")
        case .inverseColumn(let inverse, let destination, let ordered):
            // Through the destinations' to-one column (ordered: by their hidden position column).
            return dialect.joined(innerValue, separator: separator,
                                  orderedBy: ordered ? "\(inner).\(dialect.quote(ManagedObjectModel.orderColumn(of: inverse))), \(inner).\"_pk\"" : nil,
                                  from: "\(dialect.quote(destination.name)) AS \(inner) WHERE \(inner).\(dialect.quote(inverse)) = \(alias).\"_pk\"")
        }
    }
}
