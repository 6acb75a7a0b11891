import Foundation

/// The `[c]` and `[d]` modifiers of a predicate's string comparisons, with the
/// flag values the SQL functions take.
package struct PredicateStringOptions: OptionSet, Sendable, Hashable {
    package let rawValue: Int

    package init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: compare case-insensitively.
    package static let caseInsensitive = PredicateStringOptions(rawValue: 1)
    /// `[d]`: compare diacritic-insensitively.
    package static let diacriticInsensitive = PredicateStringOptions(rawValue: 2)

    /// The modifier as written in a format: `[c]`, `[d]` or `[cd]`.
    package var spelling: String {
        "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}

/// The string functions of predicates, shared by SQL and in-memory evaluation.
///
/// The SQL functions `swell_fold`, `swell_like` and `swell_strop` call these
/// very functions, so a predicate selects the same rows in SQLite as in memory.
package enum PredicateFunctions {
    /// `BEGINSWITH`, `ENDSWITH` and `CONTAINS`, with their codes in `swell_strop`.
    package enum StringOperation: Int64, Sendable {
        case beginsWith = 1
        case endsWith = 2
        case contains = 3
    }

    /// Folds `string` for the options: case and/or diacritics removed
    /// (Foundation's `folding(options:locale:)` with no locale).
    package static func fold(_ string: String, _ options: PredicateStringOptions) -> String {
        var foldingOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldingOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldingOptions.insert(.diacriticInsensitive) }
        return foldingOptions.isEmpty ? string : string.folding(options: foldingOptions, locale: nil)
    }

    /// `BEGINSWITH`, `ENDSWITH` or `CONTAINS` on the UTF-8 bytes of both strings
    /// after folding. An empty operand is found in every string.
    package static func stringOperation(
        _ operation: StringOperation, _ value: String, _ operand: String, _ options: PredicateStringOptions
    ) -> Bool {
        let value = fold(value, options)
        let operand = fold(operand, options)
        switch operation {
        case .beginsWith:
            return value.utf8.starts(with: operand.utf8)
        case .endsWith:
            return value.utf8.reversed().starts(with: operand.utf8.reversed())
        case .contains:
            return operand.isEmpty || value.utf8.firstRange(of: operand.utf8) != nil
        }
    }

    /// NSPredicate's `LIKE`: the whole of `value` matches `pattern`, where `*`
    /// matches any run of characters (also none), `?` exactly one `Character`,
    /// and every other character itself (compared by its UTF-8 bytes), after folding.
    package static func like(_ value: String, _ pattern: String, _ options: PredicateStringOptions) -> Bool {
        let value = Array(fold(value, options))
        let pattern = Array(fold(pattern, options))
        var valueIndex = 0
        var patternIndex = 0
        // Where the last `*` was and how much of the value it has consumed, to backtrack to.
        var star: (pattern: Int, value: Int)?
        while valueIndex < value.count {
            if patternIndex < pattern.count, isWildcard(pattern[patternIndex], "*") {
                star = (patternIndex, valueIndex)
                patternIndex += 1
            } else if patternIndex < pattern.count,
                isWildcard(pattern[patternIndex], "?") || pattern[patternIndex].utf8.elementsEqual(value[valueIndex].utf8)
            {
                patternIndex += 1
                valueIndex += 1
            } else if let last = star {
                star = (last.pattern, last.value + 1)
                patternIndex = last.pattern + 1
                valueIndex = last.value + 1
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, isWildcard(pattern[patternIndex], "*") {
            patternIndex += 1
        }
        return patternIndex == pattern.count
    }

    private static func isWildcard(_ character: Character, _ wildcard: Unicode.Scalar) -> Bool {
        character.unicodeScalars.count == 1 && character.unicodeScalars.first == wildcard
    }
}
