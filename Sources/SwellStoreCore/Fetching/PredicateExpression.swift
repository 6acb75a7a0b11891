/// A value written in a predicate's format or passed for a `%@`, before it is
/// typed against an attribute.
package enum PredicateValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    /// A `Date` argument, as Unix seconds.
    case date(Double)
    case null
    /// An object (a `ManagedObject`, a typed entity object) or an `ObjectID` argument: it
    /// compares with `SELF` and with to-one relationships as its ID.
    case object(ObjectID)
    /// An array argument, for `IN %@` and `BETWEEN %@`.
    case list([PredicateValue])
    /// An argument of a type predicates cannot use, described for the error.
    case unsupported(String)

    /// How an error message names the value.
    package var phrase: String {
        switch self {
        case .string(let string): "the string '\(string)'"
        case .integer(let int): "the number \(int)"
        case .double(let double): "the number \(double)"
        case .bool(let bool): bool ? "TRUE" : "FALSE"
        case .date: "a Date"
        case .null: "NIL"
        case .object(let id): "the \(id.entityName) object \(id)"
        case .list: "a list"
        case .unsupported(let description): description
        }
    }
}

/// A value and the character offset in the format where it was written.
package struct PredicateOperand: Sendable, Hashable {
    package var value: PredicateValue
    package var offset: Int
}

/// The right side of a comparison: one value, or a list for `IN` and `BETWEEN`.
package enum PredicateRightSide: Sendable, Hashable {
    case value(PredicateOperand)
    case list([PredicateOperand], offset: Int)
}

/// A predicate's operators.
package enum PredicateComparator: Sendable, Hashable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    case beginsWith, endsWith, contains, like
    case `in`, between

    /// The operator with its sides swapped (`5 < x` is `x > 5`), for the six comparisons.
    package var flipped: PredicateComparator? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .beginsWith, .endsWith, .contains, .like, .in, .between: nil
        }
    }

    /// How error messages name the operator.
    package var spelling: String {
        switch self {
        case .equal: "=="
        case .notEqual: "!="
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .contains: "CONTAINS"
        case .like: "LIKE"
        case .in: "IN"
        case .between: "BETWEEN"
        }
    }
}

/// `ANY`/`SOME`, `ALL` or `NONE` before a key path through a to-many.
package enum PredicateQuantifier: String, Sendable, Hashable {
    case any, all, none
}

/// One comparison of an attribute with a value or a list, normalised so the
/// attribute is on the left.
package struct PredicateComparison: Sendable, Hashable {
    /// An attribute, or a key path through relationships (`spot.name`, `tags.@count`).
    package var attribute: String
    package var attributeOffset: Int
    package var comparator: PredicateComparator
    package var comparatorOffset: Int
    package var options: PredicateStringOptions
    package var rightSide: PredicateRightSide
    /// The quantifier written before the key path, if any.
    package var quantifier: PredicateQuantifier? = nil
    /// Whether the left side is `SELF`, the object itself (`attribute` is then "SELF").
    package var isSelf = false
}

/// A parsed predicate. `AND` and `OR` chains are flat lists, so depth grows
/// only with parentheses and `NOT`.
package indirect enum PredicateExpression: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    case comparison(PredicateComparison)
    case not(PredicateExpression)
    case and([PredicateExpression])
    case or([PredicateExpression])
}
