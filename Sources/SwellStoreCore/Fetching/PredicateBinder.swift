import SwellCalendar

/// Types a parsed predicate against an entity.
package struct PredicateBinder {
    package let entity: EntityDescription
    package let format: String
    /// The store's entities by name, for key paths.
    package let entities: [String: EntityDescription]
    /// What a comparison with nil means.
    package let nilMatching: FetchPredicate.NilMatching
    private let columns: [String: Int]

    package init(entity: EntityDescription, format: String, entities: [String: EntityDescription] = [:],
                 nilMatching: FetchPredicate.NilMatching = .nsPredicate) {
        self.entity = entity
        self.format = format
        self.entities = entities
        self.nilMatching = nilMatching
        var columns: [String: Int] = [:]
        for (index, attribute) in entity.attributes.enumerated() where columns[attribute.name] == nil {
            columns[attribute.name] = index
        }
        self.columns = columns
    }

    package func error(_ message: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(message: message, offset: offset, format: format)
    }

    package mutating func bind(_ expression: PredicateExpression) throws(FetchPredicateError) -> BoundPredicate.Node {
        switch expression {
        case .constant(let value):
            return .constant(value)
        case .not(let operand):
            // NOT NOT x is x (the logic is two-valued); fewer levels keep the SQL shallow.
            let bound = try bind(operand)
            if case .not(let inner) = bound { return inner }
            return .not(bound)
        case .and(let terms):
            var bound: [BoundPredicate.Node] = []
            for term in terms {
                // (a AND b) AND c is one chain.
                switch try bind(term) {
                case .and(let inner): bound.append(contentsOf: inner)
                case let other: bound.append(other)
                }
            }
            return .and(bound)
        case .or(let terms):
            var bound: [BoundPredicate.Node] = []
            for term in terms {
                switch try bind(term) {
                case .or(let inner): bound.append(contentsOf: inner)
                case let other: bound.append(other)
                }
            }
            return .or(bound)
        case .comparison(let comparison):
            if comparison.isSelf { return .identity(try bindIdentity(comparison)) }
            if comparison.attribute.contains(".") || comparison.quantifier != nil { return try bindPath(comparison) }
            return .test(try bind(comparison))
        }
    }

    package func bind(_ comparison: PredicateComparison) throws(FetchPredicateError) -> BoundPredicate.Test {
        guard let column = columns[comparison.attribute] else {
            throw error("unknown attribute '\(comparison.attribute)' of \(entity.name)", at: comparison.attributeOffset)
        }
        let attribute = entity.attributes[column]
        let options = comparison.options
        let comparator = comparison.comparator
        if !options.isEmpty, attribute.type != .string {
            throw error(
                "\(options.spelling) applies only to string attributes, but '\(attribute.name)' of \(entity.name) is \(attribute.type.phrase)",
                at: comparison.comparatorOffset)
        }
        func test(_ kind: BoundPredicate.Test.Kind) -> BoundPredicate.Test {
            BoundPredicate.Test(attribute: attribute.name, column: column, kind: kind)
        }

        switch (comparator, comparison.rightSide) {
        case (.in, .list(let elements, _)):
            var values: [StoreValue] = []
            var includesNull = false
            for element in elements {
                let value = try storeValue(element, for: attribute, options: options)
                if value.isNull { includesNull = true } else { values.append(value) }
            }
            return test(.oneOf(values, includesNull: includesNull, options))
        case (.between, .list(let elements, let offset)):
            guard elements.count == 2 else {
                throw error("BETWEEN needs exactly two values {low, high}, found \(elements.count)", at: offset)
            }
            var bounds: [StoreValue] = []
            for element in elements {
                let value = try storeValue(element, for: attribute, options: options)
                if value.isNull {
                    // NSPredicate: an ordering comparison with nil is false.
                    guard nilMatching == .nsPredicate else { throw error("BETWEEN cannot take NIL as a bound", at: element.offset) }
                    return test(.never)
                }
                bounds.append(value)
            }
            return test(.between(bounds[0], bounds[1], options))
        case (.in, .value(let operand)), (.between, .value(let operand)):
            throw error(
                "\(comparator.spelling) needs a list {…} or an array argument, found \(operand.value.phrase)",
                at: operand.offset)
        case (_, .list(_, let offset)):
            throw error("a list can only be used with IN or BETWEEN, not \(comparator.spelling)", at: offset)
        case (.beginsWith, .value(let operand)), (.endsWith, .value(let operand)), (.contains, .value(let operand)),
            (.like, .value(let operand)):
            guard attribute.type == .string else {
                throw error(
                    "\(comparator.spelling) needs a string attribute, but '\(attribute.name)' of \(entity.name) is \(attribute.type.phrase)",
                    at: comparison.comparatorOffset)
            }
            if operand.value == .null, nilMatching == .nsPredicate { return test(.never) }
            guard case .string(let string) = operand.value else {
                throw error("\(comparator.spelling) needs a string, found \(operand.value.phrase)", at: operand.offset)
            }
            switch comparator {
            case .beginsWith: return test(.string(.beginsWith, string, options))
            case .endsWith: return test(.string(.endsWith, string, options))
            case .contains: return test(.string(.contains, string, options))
            default: return test(.like(string, options))
            }
        case (_, .value(let operand)):
            let value = try storeValue(operand, for: attribute, options: options)
            let ordering: BoundPredicate.Ordering
            switch comparator {
            case .equal: ordering = .equal
            case .notEqual: ordering = .notEqual
            case .less: ordering = .less
            case .lessOrEqual: ordering = .lessOrEqual
            case .greater: ordering = .greater
            default: ordering = .greaterOrEqual
            }
            if value.isNull {
                switch ordering {
                case .equal: return test(.isNull(true))
                case .notEqual: return test(.isNull(false))
                default:
                    // NSPredicate: an ordering comparison with nil is false.
                    guard nilMatching == .nsPredicate else { throw error("NIL can only be compared with == or !=", at: operand.offset) }
                    return test(.never)
                }
            }
            if ordering == .notEqual, nilMatching == .nsPredicate { return test(.distinct(value, options)) }
            return test(.compare(ordering, value, options))
        }
    }

    /// The store's representation of a literal compared with `attribute`
    /// (folded for the options), `.null` for NIL.
    private func storeValue(
        _ operand: PredicateOperand, for attribute: AttributeDescription, options: PredicateStringOptions
    ) throws(FetchPredicateError) -> StoreValue {
        let converted: StoreValue?
        switch (attribute.type, operand.value) {
        case (_, .null): converted = .null
        case (_, .list): throw error("a list cannot contain a list", at: operand.offset)
        case (.integer, .object(let id)) where attribute.destination == nil || attribute.destination == id.entityName:
            converted = .integer(id.primaryKey)
        case (_, .double(let double)) where double.isNaN, (_, .date(let double)) where double.isNaN:
            throw error("NaN cannot be compared with '\(attribute.name)'", at: operand.offset)
        case (.string, .string(let string)), (.json, .string(let string)): converted = .text(PredicateFunctions.fold(string, options))
        case (.integer, .integer(let int)), (.double, .integer(let int)), (.date, .integer(let int)):
            converted = .integer(int)
        case (.integer, .double(let double)), (.double, .double(let double)), (.date, .double(let double)),
            (.date, .date(let double)):
            converted = .real(double)
        case (.boolean, .bool(let bool)): converted = .integer(bool ? 1 : 0)
        case (.boolean, .integer(let int)) where int == 0 || int == 1: converted = .integer(int)
        case (.date, .string(let string)):
            guard let seconds = ISODate.seconds(from: string) else {
                throw error(
                    "'\(string)' is not an ISO-8601 date (like 2024-05-01T06:30:00Z or 2024-05-01) for date attribute '\(attribute.name)' of \(entity.name)",
                    at: operand.offset)
            }
            converted = .real(seconds)
        default: converted = nil
        }
        guard let converted else {
            throw error(
                "attribute '\(attribute.name)' of \(entity.name) is \(attribute.type.phrase): expected \(attribute.type.expectedLiteral), found \(operand.value.phrase)",
                at: operand.offset)
        }
        return converted
    }
}

extension PredicateBinder {
    /// `SELF == %@`, `SELF != %@`, `SELF IN %@` with objects or object IDs (or NIL, which no
    /// object is): the IDs of this entity among them.
    fileprivate func bindIdentity(_ comparison: PredicateComparison) throws(FetchPredicateError) -> IdentityTest {
        let operands: [PredicateOperand]
        switch (comparison.comparator, comparison.rightSide) {
        case (.equal, .value(let operand)), (.notEqual, .value(let operand)): operands = [operand]
        case (.in, .list(let elements, _)): operands = elements
        default:
            throw error("SELF compares with ==, != or IN, not \(comparison.comparator.spelling)", at: comparison.comparatorOffset)
        }
        if comparison.quantifier != nil || !comparison.options.isEmpty {
            throw error("SELF takes no ANY, ALL, NONE or [c]/[d]", at: comparison.attributeOffset)
        }
        var keys: [Int64] = []
        for operand in operands {
            switch operand.value {
            case .object(let id): if id.entityName == entity.name { keys.append(id.primaryKey) }
            case .null: break
            default:
                throw error("SELF compares with an object or an object ID, found \(operand.value.phrase)", at: operand.offset)
            }
        }
        return IdentityTest(primaryKeys: keys, negated: comparison.comparator == .notEqual)
    }
}

extension AttributeType {
    /// The type with its article, for error messages.
    fileprivate var phrase: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .double: "a double"
        case .boolean: "a boolean"
        case .date: "a date"
        case .json: "a JSON text"
        }
    }

    /// The literals an attribute of this type compares with, for error messages.
    fileprivate var expectedLiteral: String {
        switch self {
        case .string: "a quoted string"
        case .integer, .double: "a number"
        case .boolean: "TRUE, FALSE, YES, NO, 0 or 1"
        case .date: "an ISO-8601 date string, Unix seconds or a Date"
        case .json: "a quoted string (the compact JSON text)"
        }
    }
}
