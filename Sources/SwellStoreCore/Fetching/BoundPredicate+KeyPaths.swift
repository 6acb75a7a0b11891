/// Key-path predicates (Store guarantees 33): `spot.name == 'x'` (to-ones, any depth),
/// `ANY tags.name == 'x'`, `ALL …`, `NONE …`, `tags.@count > 2`. In SQL a hop is
/// a correlated subquery on the destination's table; in memory it reads the
/// related objects through a `PredicateResolver` (the context: its own and its
/// parents' unsaved changes over the store), so both give the same answer.
///
/// Every kind of relationship storage is one `PathLink.Kind`: the SQL condition
/// that lists a row's destinations (`linkCondition`) and, in memory, the
/// resolver's `members`. A new storage kind adds a case to both.

/// How a fetch's in-memory evaluation reaches related objects.
package protocol PredicateResolver {
    /// An object's values (by attribute index of the store's entity), nil when it does not exist.
    func row(_ entity: EntityDescription, _ primaryKey: Int64) -> [StoreValue]?
    /// The owners (the other side of a many-to-many) whose `join` to-many, kept in their
    /// column `index`, lists `member`.
    func owners(in join: JoinTable, column index: Int, listing member: Int64) -> [Int64]
    /// The objects of `destination` whose to-one `column` points at `primaryKey`, with their values.
    func objects(of destination: EntityDescription, pointingAt primaryKey: Int64, through column: String) -> [(primaryKey: Int64, values: [StoreValue])]
}

extension PredicateResolver {
    /// The destinations of a `link` of the object (`primaryKey`, `row`), with their values:
    /// every storage kind (`PathLink.Kind`) read through the resolver's three look-ups.
    package func members(_ link: PathLink, of primaryKey: Int64, row: [StoreValue]) -> [(primaryKey: Int64, values: [StoreValue])] {
        let keys: [Int64]
        switch link.kind {
        case .toOne(_, let index):
            guard index < row.count, case .integer(let key) = row[index] else { return [] }
            keys = [key]
        case .joinOwner(_, let index):
            keys = index < row.count ? JoinTable.decode(row[index]) : []
        case .joinInverse(let join, let index):
            keys = owners(in: join, column: index, listing: primaryKey)
        case .inverseToOne(let column):
            return objects(of: link.destination, pointingAt: primaryKey, through: column)
        }
        return keys.compactMap { key in self.row(link.destination, key).map { (key, $0) } }
    }
}

/// One hop of a key path: a relationship from a row to its destinations.
package struct PathLink: Sendable {
    package enum Kind: Sendable {
        /// A to-one: the source row's column `column` (index `index`) holds the destination's ID.
        case toOne(column: String, index: Int)
        /// A to-many read through the destinations' to-one column `column`.
        case inverseToOne(column: String)
        /// A to-many kept in the source's join table (its row's column `index`).
        case joinOwner(JoinTable, index: Int)
        /// The other side of a many-to-many: the destinations' join table (their column `index`).
        case joinInverse(JoinTable, index: Int)
    }

    package let relationship: String
    package let destination: EntityDescription
    package let kind: Kind
}

/// A test on a key path's destinations.
package struct PathNode: Sendable {
    package enum Quantifier: Sendable {
        /// A to-one: the destination (if any) passes.
        case one
        case any, all, none
        /// `@count` compared with a number.
        case count(BoundPredicate.Ordering, Int64)
    }

    package let link: PathLink
    package let quantifier: Quantifier
    /// The test on each destination (nil for `@count`).
    package let inner: BoundPredicate.Node?
    /// For a to-one (`.one`): the answer when there is no destination. NSPredicate reads a key
    /// path through a nil to-one as nil, so this is the inner test on a nil object
    /// (`spot.name != 'x'` holds); under `NilMatching.onlyNilTests` it is false.
    package var whenMissing = false

    package func evaluate(_ row: [StoreValue], primaryKey: Int64, resolver: (any PredicateResolver)?) -> Bool {
        guard let resolver else { return false }
        let members: [(primaryKey: Int64, values: [StoreValue])]
        if case .toOne(_, let index) = link.kind {
            guard index < row.count, case .integer(let key) = row[index], let values = resolver.row(link.destination, key) else { return whenMissing }
            members = [(key, values)]
        } else {
            members = resolver.members(link, of: primaryKey, row: row)
            if case .one = quantifier, members.isEmpty { return whenMissing }
        }
        func passes(_ member: (primaryKey: Int64, values: [StoreValue])) -> Bool {
            inner?.evaluate(member.values, primaryKey: member.primaryKey, resolver: resolver) ?? true
        }
        switch quantifier {
        case .one, .any: return members.contains(where: passes)
        case .all: return members.allSatisfy(passes)
        case .none: return !members.contains(where: passes)
        case .count(let ordering, let number): return ordering.holds(StoreValue.compare(.integer(Int64(members.count)), .integer(number)))
        }
    }

    /// The answer on a nil object (behind a nil to-one, `BoundPredicate.Node.onNilObject`): a
    /// to-one beyond it is nil too, a to-many has no members (`ANY` false, `ALL` and `NONE`
    /// true), and its `@count` is nil, so only `!=` holds.
    package var onNilObject: Bool {
        switch quantifier {
        case .one: whenMissing
        case .any: false
        case .all, .none: true
        case .count(let ordering, _): ordering == .notEqual
        }
    }
}

extension PredicateBinder {
    /// Binds a comparison whose left side is a key path (or has a quantifier).
    package mutating func bindPath(_ comparison: PredicateComparison) throws(FetchPredicateError) -> BoundPredicate.Node {
        let parts = comparison.attribute.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var sawToMany = false
        let node = try bindPath(parts[...], from: entity, comparison, sawToMany: &sawToMany)
        if comparison.quantifier != nil && !sawToMany {
            throw error("ANY, ALL and NONE need a key path through a to-many relationship, but '\(comparison.attribute)' has none",
                        at: comparison.attributeOffset)
        }
        return node
    }

    private func bindPath(_ parts: ArraySlice<String>, from source: EntityDescription, _ comparison: PredicateComparison,
                          sawToMany: inout Bool) throws(FetchPredicateError) -> BoundPredicate.Node {
        let name = parts.first ?? ""
        if parts.count == 1 {
            var last = comparison
            last.attribute = name
            last.quantifier = nil
            let binder = PredicateBinder(entity: source, format: format, entities: entities, nilMatching: nilMatching)
            return .test(try binder.bind(last))
        }
        guard let relationship = source.relationship(named: name), let destination = entities[relationship.destination],
              let link = link(relationship, from: source, to: destination) else {
            throw error("'\(name)' in key path '\(comparison.attribute)' is not a relationship of \(source.name)", at: comparison.attributeOffset)
        }
        let rest = parts.dropFirst()
        guard relationship.isToMany else {
            let inner = try bindPath(rest, from: destination, comparison, sawToMany: &sawToMany)
            let whenMissing = nilMatching == .nsPredicate && inner.onNilObject
            return .path(PathNode(link: link, quantifier: .one, inner: inner, whenMissing: whenMissing))
        }
        guard !sawToMany else {
            throw error("key path '\(comparison.attribute)' goes through two to-many relationships", at: comparison.attributeOffset)
        }
        sawToMany = true
        if rest.first == "@count" {
            guard rest.count == 1, comparison.quantifier == nil, let ordering = Self.ordering(comparison.comparator),
                  case .value(let operand) = comparison.rightSide, case .integer(let number) = operand.value else {
                throw error("@count compares with a whole number (==, !=, <, <=, >, >=) and takes no ANY/ALL/NONE", at: comparison.comparatorOffset)
            }
            return .path(PathNode(link: link, quantifier: .count(ordering, number), inner: nil))
        }
        let inner = try bindPath(rest, from: destination, comparison, sawToMany: &sawToMany)
        let quantifier: PathNode.Quantifier
        switch comparison.quantifier {
        case .all?: quantifier = .all
        case .none?: quantifier = .none
        case .any?, nil: quantifier = .any
        }
        return .path(PathNode(link: link, quantifier: quantifier, inner: inner))
    }

    /// Where `relationship` keeps its links, from the store's entities.
    private func link(_ relationship: RelationshipDescription, from source: EntityDescription,
                      to destination: EntityDescription) -> PathLink? {
        let kind: PathLink.Kind
        if let index = source.attributes.firstIndex(where: { $0.name == relationship.name }) {
            let column = source.attributes[index]
            if column.destination != nil {
                kind = .toOne(column: column.name, index: index)
            } else if let join = column.join {
                kind = .joinOwner(join, index: index)
            } else {
                return nil
            }
        } else if let inverse = relationship.inverse, let index = destination.attributes.firstIndex(where: { $0.name == inverse }) {
            let column = destination.attributes[index]
            if column.destination != nil {
                kind = .inverseToOne(column: inverse)
            } else if let join = column.join {
                kind = .joinInverse(join, index: index)
            } else {
                return nil
            }
        } else {
            return nil
        }
        return PathLink(relationship: relationship.name, destination: destination, kind: kind)
    }

    private static func ordering(_ comparator: PredicateComparator) -> BoundPredicate.Ordering? {
        switch comparator {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .less
        case .lessOrEqual: .lessOrEqual
        case .greater: .greater
        case .greaterOrEqual: .greaterOrEqual
        default: nil
        }
    }
}
