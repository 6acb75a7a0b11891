import Foundation
import SwellStoreCore
@testable import SwellStore
import SwellTestSupport
import SwellStoreTestSupport

/// Random predicates over the typed journal (`TypedEntityModel.swift`) for the nil
/// differential test (store guarantee 63): each drawn term carries its format string and
/// arguments, its `#Predicate` equivalent where Swift can say the same, and its meaning by
/// NSPredicate's rules for nil, written here apart from Swell's predicate code:
///
/// - `x == v` is true only when `x` equals `v`, and `nil == nil` is true;
/// - `x != v` is `NOT (x == v)`, so it is true where `x` is nil and `v` is not;
/// - an ordering comparison, `BETWEEN` or a string operator with nil on either side is false;
/// - `x IN list` is true when some element of the list equals `x` (`nil` matches a nil `x`);
/// - a key path through a nil to-one reads nil (`spot.name != 'x'` holds without a spot), and
///   a to-many behind it has no members (`ANY` false, `ALL` and `NONE` true);
/// - `SELF` is the object itself.
struct NilPredicateTerm {
    var format: String
    var arguments: [Any?]
    /// Builds the typed form on the outer predicate's variable; nil when Swift cannot say it.
    var typed: ((PredicateExpressions.Variable<JournalEntry>) -> any StandardPredicateExpression<Bool>)?
    var holds: (JournalEntry) -> Bool
}

/// Draws `NilPredicateTerm`s: comparisons (`!=` and ordering included) of optional attributes,
/// `IN` with and without nil, string operators, key paths through the sometimes-nil `spot`,
/// quantifiers and `@count` on `tags`, `SELF`, and `NOT` / `AND` / `OR` over them.
struct NilPredicateGrammar {
    /// The journal entries, for `SELF` arguments.
    var entries: [JournalEntry]
    let labels: [String]
    let heights: [String]
    let spotNames: [String]

    func term(depth: Int, using random: inout SeededGenerator) -> NilPredicateTerm {
        guard depth > 0, Int.random(in: 0..<3, using: &random) == 0 else { return atom(using: &random) }
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let inner = term(depth: depth - 1, using: &random)
            return NilPredicateTerm(format: "NOT (\(inner.format))", arguments: inner.arguments,
                                    typed: inner.typed.map { typed in { negation(typed($0)) } }, holds: { !inner.holds($0) })
        default:
            let isAnd = Bool.random(using: &random)
            let left = term(depth: depth - 1, using: &random), right = term(depth: depth - 1, using: &random)
            var typed: ((PredicateExpressions.Variable<JournalEntry>) -> any StandardPredicateExpression<Bool>)?
            if let l = left.typed, let r = right.typed { typed = { isAnd ? conjunction(l($0), r($0)) : disjunction(l($0), r($0)) } }
            return NilPredicateTerm(format: "(\(left.format)) \(isAnd ? "AND" : "OR") (\(right.format))",
                                    arguments: left.arguments + right.arguments, typed: typed,
                                    holds: { isAnd ? left.holds($0) && right.holds($0) : left.holds($0) || right.holds($0) })
        }
    }

    private func atom(using random: inout SeededGenerator) -> NilPredicateTerm {
        let rating: Int? = Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0...5, using: &random)
        let height: String? = Int.random(in: 0..<4, using: &random) == 0 ? nil : heights.randomElement(using: &random)!
        switch Int.random(in: 0..<14, using: &random) {
        case 0: return NilComparisons.rating(Self.operators.randomElement(using: &random)!, rating)
        case 1: return NilComparisons.height(["==", "!="].randomElement(using: &random)!, height)
        case 2: return NilComparisons.heightString(["BEGINSWITH", "CONTAINS", "ENDSWITH", "LIKE"].randomElement(using: &random)!,
                                                   caseInsensitive: Bool.random(using: &random),
                                                   operand: ["1", "2 F", "ft", "?", "*t"].randomElement(using: &random)!)
        case 3:
            var list: [String?] = heights.filter { _ in Bool.random(using: &random) }
            if Bool.random(using: &random) { list.append(nil) }
            return NilComparisons.heightIn(list)
        case 4: return NilComparisons.ratingBetween(Int.random(in: 0...2, using: &random), Int.random(in: 2...5, using: &random))
        case 5:
            let name: String? = Int.random(in: 0..<4, using: &random) == 0 ? nil : spotNames.randomElement(using: &random)!
            return NilComparisons.spotName(["==", "!=", "BEGINSWITH"].randomElement(using: &random)!, name)
        case 6: return NilComparisons.spotLatitude(Self.operators.randomElement(using: &random)!, Double.random(in: 0...3, using: &random))
        case 7: return NilComparisons.spotIsNil(Bool.random(using: &random))
        case 8: return NilComparisons.tags(["ANY", "ALL", "NONE"].randomElement(using: &random)!, label: labels.randomElement(using: &random)!,
                                           notEqual: Bool.random(using: &random))
        case 9: return NilComparisons.tagsAll(["ANY", "ALL", "NONE"].randomElement(using: &random)!, equal: Bool.random(using: &random),
                                              rating)
        case 10: return NilComparisons.tagCount(Self.operators.randomElement(using: &random)!, Int.random(in: 0...3, using: &random))
        case 11: return NilComparisons.spotEntries(["ANY", "ALL"].randomElement(using: &random)!, rating: rating ?? 3)
        case 12: return NilComparisons.orderingWithNil(Self.operators.dropFirst(2).randomElement(using: &random)!)
        default:
            let chosen = entries.filter { _ in Int.random(in: 0..<5, using: &random) == 0 }
            return NilComparisons.identity(Int.random(in: 0..<3, using: &random), chosen, form: Int.random(in: 0..<3, using: &random))
        }
    }

    static let operators = ["==", "!=", "<", "<=", ">", ">="]
}

/// NSPredicate's meaning of a comparison of two optional values (the rules above).
func nsCompare<T: Comparable>(_ left: T?, _ op: String, _ right: T?) -> Bool {
    switch op {
    case "==": return left == right
    case "!=": return left != right
    default:
        guard let left, let right else { return false }
        switch op {
        case "<": return left < right
        case "<=": return left <= right
        case ">": return left > right
        default: return left >= right
        }
    }
}

/// `LIKE` with `*` (any run) and `?` (one character), as NSPredicate matches it.
func nsLike(_ text: Substring, _ pattern: Substring) -> Bool {
    guard let first = pattern.first else { return text.isEmpty }
    switch first {
    case "*": return nsLike(text, pattern.dropFirst()) || (!text.isEmpty && nsLike(text.dropFirst(), pattern))
    case "?": return !text.isEmpty && nsLike(text.dropFirst(), pattern.dropFirst())
    default: return text.first == first && nsLike(text.dropFirst(), pattern.dropFirst())
    }
}

// Foundation's nodes over terms whose types are known only at run time: the existentials are
// opened where a node is made.

func conjunction(_ left: any StandardPredicateExpression<Bool>, _ right: any StandardPredicateExpression<Bool>) -> any StandardPredicateExpression<Bool> {
    func make<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.Conjunction(lhs: l, rhs: r)
    }
    return make(left, right)
}

func disjunction(_ left: any StandardPredicateExpression<Bool>, _ right: any StandardPredicateExpression<Bool>) -> any StandardPredicateExpression<Bool> {
    func make<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.Disjunction(lhs: l, rhs: r)
    }
    return make(left, right)
}

func negation(_ operand: any StandardPredicateExpression<Bool>) -> any StandardPredicateExpression<Bool> {
    func make<E: StandardPredicateExpression<Bool>>(_ e: E) -> any StandardPredicateExpression<Bool> { PredicateExpressions.Negation(e) }
    return make(operand)
}

/// A `#Predicate` written on its own, evaluated on the variable of the predicate it is part of.
struct EmbeddedPredicate: StandardPredicateExpression {
    typealias Output = Bool
    let outer: PredicateExpressions.Variable<JournalEntry>
    let inner: Predicate<JournalEntry>

    init(_ outer: PredicateExpressions.Variable<JournalEntry>, _ inner: Predicate<JournalEntry>) {
        self.outer = outer
        self.inner = inner
    }

    func evaluate(_ bindings: PredicateBindings) throws -> Bool {
        guard let entry = bindings[outer] else { throw UnencodableExpression() }
        return try inner.evaluate(entry)
    }

    init(from decoder: any Decoder) throws { throw UnencodableExpression() }
    func encode(to encoder: any Encoder) throws { throw UnencodableExpression() }
}

extension EmbeddedPredicate: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm {
        scope.variables[inner.variable.key] = scope.variables[outer.key]
        return try scope.term(of: inner.expression)
    }
}

/// A predicate's whole body, of a type known only at run time.
struct ErasedPredicateBody: StandardPredicateExpression {
    typealias Output = Bool
    let base: any StandardPredicateExpression<Bool>

    func evaluate(_ bindings: PredicateBindings) throws -> Bool { try base.evaluate(bindings) }
    init(_ base: any StandardPredicateExpression<Bool>) { self.base = base }
    init(from decoder: any Decoder) throws { throw UnencodableExpression() }
    func encode(to encoder: any Encoder) throws { throw UnencodableExpression() }
}

extension ErasedPredicateBody: TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm { try scope.term(of: base) }
}

/// The test's composed expressions are never encoded.
struct UnencodableExpression: Error {}
