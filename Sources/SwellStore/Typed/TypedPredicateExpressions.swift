import Foundation
import SwellContexts
import SwellStoreCore

// The `PredicateExpressions` nodes Swell compiles, each as the format it stands for.

extension PredicateExpressions.Variable: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        guard let keyPath = scope.variables[key] else { throw UnsupportedPredicate(reason: "a variable out of scope") }
        return .keyPath(keyPath)
    }
}

extension PredicateExpressions.KeyPath: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        guard case .keyPath(let base) = try scope.term(of: root) else {
            throw UnsupportedPredicate(reason: "a key path applied to a value that is not a property")
        }
        if let model = Root.Output.self as? any PersistentModel.Type {
            guard let name = model._$storedName(for: keyPath) else {
                throw UnsupportedPredicate(reason: "\(model.entityDescription.name) has no stored property at this key path "
                    + "(a @Transient or computed property cannot be fetched by)")
            }
            return .keyPath(base.appending(name))
        }
        if Root.Output.self is any Collection.Type, !base.path.isEmpty {
            let count = ScopedKeyPath(path: "\(base.path).@count", optionalHops: base.optionalHops, isCount: true)
            if Output.self == Int.self { return .keyPath(count) }
            if Output.self == Bool.self { return .condition(FormatPiece(format: "\(count.format) == 0", arguments: [])) }
        }
        throw UnsupportedPredicate(reason: "Swell cannot compile a key path on \(Root.Output.self) in a #Predicate")
    }
}

extension PredicateExpressions.Value: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm { .value(try formatArgument(value)) }
}

extension PredicateExpressions.NilLiteral: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm { .value(nil) }
}

extension PredicateExpressions.Conjunction: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let left = try scope.term(of: lhs).condition(), right = try scope.term(of: rhs).condition()
        return .condition(FormatPiece(format: "(\(left.format)) AND (\(right.format))", arguments: left.arguments + right.arguments))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let left = try scope.term(of: lhs).condition(), right = try scope.term(of: rhs).condition()
        return .condition(FormatPiece(format: "(\(left.format)) OR (\(right.format))", arguments: left.arguments + right.arguments))
    }
}

extension PredicateExpressions.Negation: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let inner = try scope.term(of: wrapped).condition()
        return .condition(FormatPiece(format: "NOT (\(inner.format))", arguments: inner.arguments))
    }
}

extension PredicateExpressions.Equal: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try ComparisonBuilder.compare(scope.term(of: lhs), .equal, scope.term(of: rhs))
    }
}

extension PredicateExpressions.NotEqual: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try ComparisonBuilder.compare(scope.term(of: lhs), .notEqual, scope.term(of: rhs))
    }
}

extension PredicateExpressions.Comparison: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let comparator: ComparisonBuilder.Operator = switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        }
        return try ComparisonBuilder.compare(scope.term(of: lhs), comparator, scope.term(of: rhs))
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        guard case .keyPath(let base) = try scope.term(of: wrapped) else {
            throw UnsupportedPredicate(reason: "optional chaining on a value that is not a property")
        }
        scope.variables[variable.key] = ScopedKeyPath(path: base.path, optionalHops: base.optionalHops + [base.path])
        return try scope.term(of: transform)
    }
}

extension PredicateExpressions.NilCoalesce: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let left = try scope.term(of: lhs), right = try scope.term(of: rhs)
        // `$0.height?.contains("2") ?? false`: nil is false, as a null matches no comparison.
        if case .condition(let piece) = left, case .value(false as Bool) = right { return .condition(piece) }
        guard case .keyPath(let keyPath) = left, case .value(let fallback) = right else {
            throw UnsupportedPredicate(reason: "'??' is compiled with a property on the left and a constant on the right")
        }
        return .coalesced(keyPath, fallback: fallback)
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm { try scope.term(of: inner) }
}

extension PredicateExpressions.SequenceContains: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        let list = try scope.term(of: sequence), item = try scope.term(of: element)
        switch (list, item) {
        case (.value(let values), .keyPath(let keyPath)):
            // `[nil, "x"].contains($0.height)` matches a nil height, as IN a list holding nil does.
            return .condition(FormatPiece(format: "\(keyPath.format) IN %@", arguments: [values], isComparison: true))
        default:
            throw UnsupportedPredicate(reason: "contains(_:) is compiled for a list of constants and a property "
                + "(for a to-many, write contains { $0.name == … })")
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try QuantifierBuilder.quantify("ANY", sequence: sequence, variable: variable.key, test: test, in: &scope)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try QuantifierBuilder.quantify("ALL", sequence: sequence, variable: variable.key, test: test, in: &scope)
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try StringOperationBuilder.build("BEGINSWITH", scope.term(of: base), scope.term(of: prefix))
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        try StringOperationBuilder.build("CONTAINS", scope.term(of: base), scope.term(of: other))
    }
}

enum StringOperationBuilder {
    static func build(_ operation: String, _ base: PredicateTerm, _ other: PredicateTerm) throws -> PredicateTerm {
        guard case .keyPath(let keyPath) = base, case .value(let value) = other else {
            throw UnsupportedPredicate(reason: "\(operation) is compiled for a property and a constant")
        }
        return .condition(FormatPiece(format: "\(keyPath.format) \(operation) %@", arguments: [value], isComparison: true))
    }
}

enum QuantifierBuilder {
    static func quantify(_ quantifier: String, sequence: Any, variable: PredicateExpressions.VariableID, test: Any,
                         in scope: inout PredicateScope) throws -> PredicateTerm {
        guard case .keyPath(let members) = try scope.term(of: sequence) else {
            throw UnsupportedPredicate(reason: "contains(where:) and allSatisfy are compiled over a to-many relationship")
        }
        scope.variables[variable] = members
        let inner = try scope.term(of: test).condition()
        guard inner.isComparison else {
            throw UnsupportedPredicate(reason: "contains(where:) and allSatisfy are compiled with one comparison inside")
        }
        let quantified = "\(quantifier) \(inner.format)"
        // `$0.spot?.entries.allSatisfy { … }` is nil without a spot, where ALL of no members is true.
        guard let hop = members.optionalHops.last else { return .condition(FormatPiece(format: quantified, arguments: inner.arguments)) }
        return .condition(FormatPiece(format: "(#\(hop) != NIL AND \(quantified))", arguments: inner.arguments))
    }
}

/// Comparisons between a property and a constant: Swift's meaning of nil is the format's.
enum ComparisonBuilder {
    enum Operator: String {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

        var flipped: Operator {
            switch self {
            case .equal, .notEqual: self
            case .less: .greater
            case .lessOrEqual: .greaterOrEqual
            case .greater: .less
            case .greaterOrEqual: .lessOrEqual
            }
        }
    }

    static func compare(_ lhs: PredicateTerm, _ op: Operator, _ rhs: PredicateTerm) throws -> PredicateTerm {
        switch (lhs, rhs) {
        case (.value, .keyPath), (.value, .coalesced): return try compare(rhs, op.flipped, lhs)
        case (.keyPath(let keyPath), .value(let value)):
            // In Swift nil != 3 and `$0.spot?.name == nil` holds without a spot: so it does in a
            // format predicate. Only a `@count` behind an optional to-one has no NIL of its own.
            if value == nil, keyPath.isCount, op == .equal || op == .notEqual {
                return .condition(FormatPiece(format: op == .equal ? keyPath.isNilFormat : "NOT (\(keyPath.isNilFormat))", arguments: []))
            }
            return .condition(FormatPiece(format: "\(keyPath.format) \(op.rawValue) %@", arguments: [value], isComparison: true))
        case (.coalesced(let keyPath, let fallback), .value(let value)):
            let piece = FormatPiece(format: "\(keyPath.format) \(op.rawValue) %@", arguments: [value], isComparison: true)
            guard try constant(fallback, op, value) else { return .condition(piece) }
            return .condition(FormatPiece(format: "(\(piece.format) OR \(keyPath.isNilFormat))", arguments: piece.arguments))
        case (.value, .condition): return try compare(rhs, op.flipped, lhs)
        case (.condition(let piece), .value(true as Bool)) where op == .equal || op == .notEqual:
            // `$0.height?.contains("2") == true`: nil is not true, and a null matches no comparison.
            return .condition(op == .equal ? piece : FormatPiece(format: "NOT (\(piece.format))", arguments: piece.arguments))
        case (.value(let left), .value(let right)):
            return .condition(try constant(left, op, right) ? .truePredicate : .falsePredicate)
        default:
            throw UnsupportedPredicate(reason: "comparisons are compiled between a property and a constant (not two properties)")
        }
    }

    /// Compares two constants as Swift does.
    static func constant(_ left: Any?, _ op: Operator, _ right: Any?) throws -> Bool {
        guard let left, let right else {
            switch op {
            case .equal: return (left == nil) == (right == nil)
            case .notEqual: return (left == nil) != (right == nil)
            default: throw UnsupportedPredicate(reason: "an ordering comparison with nil")
            }
        }
        let order: ComparisonResult
        switch (left, right) {
        case (let a as Int, let b as Int): order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (let a as Double, let b as Double): order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (let a as String, let b as String): order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (let a as Date, let b as Date): order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (let a as Bool, let b as Bool):
            guard op == .equal || op == .notEqual else { throw UnsupportedPredicate(reason: "an ordering comparison of Bools") }
            order = a == b ? .orderedSame : .orderedAscending
        default: throw UnsupportedPredicate(reason: "comparing \(type(of: left)) with \(type(of: right))")
        }
        switch op {
        case .equal: return order == .orderedSame
        case .notEqual: return order != .orderedSame
        case .less: return order == .orderedAscending
        case .lessOrEqual: return order != .orderedDescending
        case .greater: return order == .orderedDescending
        case .greaterOrEqual: return order != .orderedAscending
        }
    }
}
