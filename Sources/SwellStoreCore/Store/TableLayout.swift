/// How an entity's table keeps its rows' object IDs (store format 2), and the
/// SQL that follows from it.
///
/// An entity whose key is one required integer attribute keeps that attribute
/// as the table's `INTEGER PRIMARY KEY` (the shape `sqlite3 .import` and
/// `sqlite-utils --pk` give), so a row is one b-tree entry, found by its key
/// without an index. Its object ID is its key while `_pk` is NULL; an object
/// whose ID differs from its key (inserted through the API, which gives it an
/// ID before its key is known, or whose key changed) keeps its ID in `_pk`,
/// under a partial unique index. Every other entity keeps its IDs in `_pk`, the
/// rowid, and its key under a unique index.
package struct TableLayout: Sendable {
    /// The quoted table name.
    package let table: String
    /// The index of the key attribute that is the table's rowid, or nil when `_pk` is.
    package let rowidKeyIndex: Int?
    /// That attribute's quoted column name.
    package let rowidKey: String?

    package init(_ entity: EntityDescription) {
        table = quoteIdentifier(entity.name)
        rowidKeyIndex = entity.rowidKeyIndex
        rowidKey = rowidKeyIndex.map { quoteIdentifier(entity.attributes[$0].name) }
    }

    /// The object ID of a row, as an SQL expression.
    package var id: String {
        guard let rowidKey else { return "\"_pk\"" }
        return "coalesce(\"_pk\", \(rowidKey))"
    }

    /// A condition: the row's object ID is parameter `?n` (answered from the rowid and `_pk`'s index, no scan).
    package func idEquals(parameter n: Int) -> String {
        guard let rowidKey else { return "\"_pk\" = ?\(n)" }
        return "((\(rowidKey) = ?\(n) AND \"_pk\" IS NULL) OR \"_pk\" = ?\(n))"
    }

    /// A condition: the row's object ID is in the JSON array parameter `?n`.
    package func idIn(jsonParameter n: Int) -> String {
        let list = "(SELECT value FROM json_each(?\(n)))"
        guard let rowidKey else { return "\"_pk\" IN \(list)" }
        return "((\(rowidKey) IN \(list) AND \"_pk\" IS NULL) OR \"_pk\" IN \(list))"
    }

    /// What breaks ties when rows are sorted: the key where it is the rowid (unique, and
    /// in the table's order: sorting by it needs no sort step), otherwise the ID.
    package var tieBreak: String { rowidKey ?? "\"_pk\"" }
}

extension EntityDescription {
    /// Every attribute's value as SQL select expressions, in attribute order: a column, or for
    /// a to-many kept in a join table, its members read from that table (`JoinTable.selectExpression`).
    package var selectedValues: String {
        attributes.map { $0.join?.selectExpression ?? quoteIdentifier($0.name) }.joined(separator: ", ")
    }

    /// The index of the attribute kept as the table's rowid: the key, when the
    /// uniqueness constraint is exactly one required integer attribute (a rowid
    /// cannot be NULL) and no to-one relationship points at the entity (a
    /// `REFERENCES` names `_pk`, the rowid, then); nil otherwise.
    package var rowidKeyIndex: Int? {
        guard !isRelationshipDestination, uniquenessConstraint.count == 1,
              let index = attributes.firstIndex(where: { $0.name == uniquenessConstraint[0] }),
              attributes[index].type == .integer, !attributes[index].isOptional else { return nil }
        return index
    }
}
