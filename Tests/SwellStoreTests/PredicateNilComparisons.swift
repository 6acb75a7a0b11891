import Foundation
import SwellStore
import SwellStoreTestSupport

/// The atoms of `NilPredicateGrammar`: one comparison each, with its format, its typed form
/// (where Swift says the same) and its NSPredicate meaning.
enum NilComparisons {
    typealias Typed = (PredicateExpressions.Variable<JournalEntry>) -> any StandardPredicateExpression<Bool>

    private static func embed(_ predicate: Predicate<JournalEntry>) -> Typed {
        { EmbeddedPredicate($0, predicate) }
    }

    /// `rating OP v`; an ordering is written in Swift with a fallback that fails it, as nil does.
    static func rating(_ op: String, _ value: Int?) -> NilPredicateTerm {
        var typed: Predicate<JournalEntry>?
        let (highest, lowest) = (Int.max, Int.min)
        switch (op, value) {
        case ("==", _): typed = #Predicate { $0.rating == value }
        case ("!=", _): typed = #Predicate { $0.rating != value }
        case ("<", let v?): typed = #Predicate { $0.rating ?? highest < v }
        case ("<=", let v?): typed = #Predicate { $0.rating ?? highest <= v }
        case (">", let v?): typed = #Predicate { $0.rating ?? lowest > v }
        case (">=", let v?): typed = #Predicate { $0.rating ?? lowest >= v }
        default: typed = nil
        }
        return NilPredicateTerm(format: "rating \(op) %@", arguments: [value], typed: typed.map(embed),
                                holds: { nsCompare($0.rating, op, value) })
    }

    static func height(_ op: String, _ value: String?) -> NilPredicateTerm {
        let typed: Predicate<JournalEntry> = op == "==" ? #Predicate { $0.height == value } : #Predicate { $0.height != value }
        return NilPredicateTerm(format: "height \(op) %@", arguments: [value], typed: embed(typed),
                                holds: { nsCompare($0.height, op, value) })
    }

    static func heightString(_ op: String, caseInsensitive: Bool, operand: String) -> NilPredicateTerm {
        var typed: Predicate<JournalEntry>?
        if !caseInsensitive && op == "BEGINSWITH" { typed = #Predicate { $0.height?.starts(with: operand) == true } }
        if !caseInsensitive && op == "CONTAINS" { typed = #Predicate { $0.height?.contains(operand) != true } }
        let holds: (JournalEntry) -> Bool = { entry in
            guard var text = entry.height else { return false }
            var operand = operand
            if caseInsensitive { (text, operand) = (text.lowercased(), operand.lowercased()) }
            switch op {
            case "BEGINSWITH": return text.hasPrefix(operand)
            case "CONTAINS": return text.contains(operand)
            case "ENDSWITH": return text.hasSuffix(operand)
            default: return nsLike(text[...], operand[...])
            }
        }
        // The typed CONTAINS is written negated (`!= true`): NOT of a string test of nil is true.
        if op == "CONTAINS" && !caseInsensitive {
            return NilPredicateTerm(format: "NOT (height CONTAINS %@)", arguments: [operand], typed: typed.map(embed), holds: { !holds($0) })
        }
        return NilPredicateTerm(format: "height \(op)\(caseInsensitive ? "[c]" : "") %@", arguments: [operand],
                                typed: typed.map(embed), holds: holds)
    }

    static func heightIn(_ list: [String?]) -> NilPredicateTerm {
        NilPredicateTerm(format: "height IN %@", arguments: [list], typed: embed(#Predicate { list.contains($0.height) }),
                         holds: { list.contains($0.height) })
    }

    static func ratingBetween(_ low: Int, _ high: Int) -> NilPredicateTerm {
        NilPredicateTerm(format: "rating BETWEEN %@", arguments: [[low, high]], typed: nil,
                         holds: { $0.rating.map { low <= $0 && $0 <= high } ?? false })
    }

    static func spotName(_ op: String, _ name: String?) -> NilPredicateTerm {
        switch op {
        case "==":
            return NilPredicateTerm(format: "spot.name == %@", arguments: [name], typed: embed(#Predicate { $0.spot?.name == name }),
                                    holds: { nsCompare($0.spot?.name, op, name) })
        case "!=":
            return NilPredicateTerm(format: "spot.name != %@", arguments: [name], typed: embed(#Predicate { $0.spot?.name != name }),
                                    holds: { nsCompare($0.spot?.name, op, name) })
        default:
            let prefix = name.map { String($0.prefix(3)) } ?? "Pa"
            return NilPredicateTerm(format: "spot.name BEGINSWITH %@", arguments: [prefix],
                                    typed: embed(#Predicate { $0.spot?.name.starts(with: prefix) == true }),
                                    holds: { $0.spot?.name.hasPrefix(prefix) ?? false })
        }
    }

    static func spotLatitude(_ op: String, _ value: Double) -> NilPredicateTerm {
        let (highest, lowest) = (1e9, -1e9)
        let typed: Predicate<JournalEntry>
        switch op {
        case "==": typed = #Predicate { $0.spot?.latitude == value }
        case "!=": typed = #Predicate { $0.spot?.latitude != value }
        case "<": typed = #Predicate { $0.spot?.latitude ?? highest < value }
        case "<=": typed = #Predicate { $0.spot?.latitude ?? highest <= value }
        case ">": typed = #Predicate { $0.spot?.latitude ?? lowest > value }
        default: typed = #Predicate { $0.spot?.latitude ?? lowest >= value }
        }
        return NilPredicateTerm(format: "spot.latitude \(op) %@", arguments: [value], typed: embed(typed),
                                holds: { nsCompare($0.spot?.latitude, op, value) })
    }

    static func spotIsNil(_ isNil: Bool) -> NilPredicateTerm {
        NilPredicateTerm(format: isNil ? "spot == nil" : "spot != NIL", arguments: [],
                         typed: embed(isNil ? #Predicate { $0.spot == nil } : #Predicate { $0.spot != nil }),
                         holds: { ($0.spot == nil) == isNil })
    }

    /// `ANY|ALL|NONE tags.label ==|!= l`.
    static func tags(_ quantifier: String, label: String, notEqual: Bool) -> NilPredicateTerm {
        let op = notEqual ? "!=" : "=="
        let typed: Predicate<JournalEntry>
        switch (quantifier, notEqual) {
        case ("ANY", false): typed = #Predicate { $0.tags.contains { $0.label == label } }
        case ("ANY", true): typed = #Predicate { $0.tags.contains { $0.label != label } }
        case ("ALL", false): typed = #Predicate { $0.tags.allSatisfy { $0.label == label } }
        case ("ALL", true): typed = #Predicate { $0.tags.allSatisfy { $0.label != label } }
        case (_, false): typed = #Predicate { !$0.tags.contains { $0.label == label } }
        case (_, true): typed = #Predicate { !$0.tags.contains { $0.label != label } }
        }
        return NilPredicateTerm(format: "\(quantifier) tags.label \(op) %@", arguments: [label], typed: embed(typed),
                                holds: { quantified(quantifier, $0.tags) { nsCompare($0.label, op, label) } })
    }

    /// `ANY|ALL|NONE tags.all ==|!= v`, `v` sometimes nil (`all` is optional and named like a keyword).
    static func tagsAll(_ quantifier: String, equal: Bool, _ value: Int?) -> NilPredicateTerm {
        let op = equal ? "==" : "!="
        let typed: Predicate<JournalEntry>
        switch (quantifier, equal) {
        case ("ANY", true): typed = #Predicate { $0.tags.contains { $0.all == value } }
        case ("ANY", false): typed = #Predicate { $0.tags.contains { $0.all != value } }
        case ("ALL", true): typed = #Predicate { $0.tags.allSatisfy { $0.all == value } }
        case ("ALL", false): typed = #Predicate { $0.tags.allSatisfy { $0.all != value } }
        case (_, true): typed = #Predicate { !$0.tags.contains { $0.all == value } }
        case (_, false): typed = #Predicate { !$0.tags.contains { $0.all != value } }
        }
        return NilPredicateTerm(format: "\(quantifier) tags.all \(op) %@", arguments: [value], typed: embed(typed),
                                holds: { quantified(quantifier, $0.tags) { nsCompare($0.all, op, value) } })
    }

    static func tagCount(_ op: String, _ count: Int) -> NilPredicateTerm {
        let typed: Predicate<JournalEntry>
        switch op {
        case "==": typed = #Predicate { $0.tags.count == count }
        case "!=": typed = #Predicate { $0.tags.count != count }
        case "<": typed = #Predicate { $0.tags.count < count }
        case "<=": typed = #Predicate { $0.tags.count <= count }
        case ">": typed = #Predicate { $0.tags.count > count }
        default: typed = #Predicate { $0.tags.count >= count }
        }
        return NilPredicateTerm(format: "tags.@count \(op) %@", arguments: [count], typed: embed(typed),
                                holds: { nsCompare($0.tags.count, op, count) })
    }

    /// `ANY|ALL spot.entries.rating == r`: a to-many behind the sometimes-nil to-one.
    static func spotEntries(_ quantifier: String, rating: Int) -> NilPredicateTerm {
        // Swift's `allSatisfy` of a nil spot is nil, not NSPredicate's vacuous true: no typed ALL.
        let typed: Predicate<JournalEntry>? = quantifier == "ANY" ? #Predicate { $0.spot?.entries.contains { $0.rating == rating } == true } : nil
        return NilPredicateTerm(format: "\(quantifier) spot.entries.rating == %@", arguments: [rating], typed: typed.map(embed),
                                holds: { entry in
                                    guard let spot = entry.spot else { return quantifier == "ALL" }
                                    return quantified(quantifier, spot.entries) { $0.rating == rating }
                                })
    }

    /// `rating < NIL`: false for every object.
    static func orderingWithNil(_ op: String) -> NilPredicateTerm {
        NilPredicateTerm(format: "rating \(op) NIL", arguments: [], typed: nil, holds: { _ in false })
    }

    /// `SELF == %@`, `SELF != %@` or `SELF IN %@`, with typed objects, managed objects or object IDs.
    static func identity(_ kind: Int, _ chosen: [JournalEntry], form: Int) -> NilPredicateTerm {
        func argument(_ entry: JournalEntry) -> Any? {
            switch form {
            case 0: entry
            case 1: entry.managedObject
            default: entry.objectID
            }
        }
        guard kind == 2 else {
            guard let target = chosen.first else { return NilPredicateTerm(format: "SELF == nil", arguments: [], typed: nil, holds: { _ in false }) }
            let equal = kind == 0
            return NilPredicateTerm(format: equal ? "SELF == %@" : "SELF != %@", arguments: [argument(target)], typed: nil,
                                    holds: { ($0 === target) == equal })
        }
        let list: Any = form == 1 ? Set(chosen.compactMap(\.managedObject)) as Any : chosen.map(argument)
        return NilPredicateTerm(format: "SELF IN %@", arguments: [list], typed: nil, holds: { entry in chosen.contains { $0 === entry } })
    }

    private static func quantified<S: Sequence>(_ quantifier: String, _ members: S, _ test: (S.Element) -> Bool) -> Bool {
        switch quantifier {
        case "ANY": members.contains(where: test)
        case "ALL": members.allSatisfy(test)
        default: !members.contains(where: test)
        }
    }
}
