import CSQLite
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
    var spelling: String {
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
    static func fold(_ string: String, _ options: PredicateStringOptions) -> String {
        var foldingOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldingOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldingOptions.insert(.diacriticInsensitive) }
        return foldingOptions.isEmpty ? string : string.folding(options: foldingOptions, locale: nil)
    }

    /// `BEGINSWITH`, `ENDSWITH` or `CONTAINS` on the UTF-8 bytes of both strings
    /// after folding. An empty operand is found in every string.
    static func stringOperation(
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
    static func like(_ value: String, _ pattern: String, _ options: PredicateStringOptions) -> Bool {
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

extension SQLiteConnection {
    /// Registers the deterministic SQL functions predicates compile to:
    /// `swell_fold(text, flags)`, `swell_like(value, pattern, flags)` and
    /// `swell_strop(operation, value, operand, flags)`.
    ///
    /// Each returns NULL when its value is not text (NULL included); flags are
    /// `PredicateStringOptions` raw values. They run `PredicateFunctions`, as
    /// in-memory evaluation does.
    func registerPredicateFunctions() throws(SQLiteError) {
        try createFunction("swell_fold", argumentCount: 2, swellFold)
        try createFunction("swell_like", argumentCount: 3, swellLike)
        try createFunction("swell_strop", argumentCount: 4, swellStringOperation)
    }

    private func createFunction(
        _ name: String, argumentCount: Int32, _ function: @escaping SQLiteScalarFunction
    ) throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let database = try handle
        let code = sqlite3_create_function_v2(database, name, argumentCount, flags, nil, function, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, handle: database) }
    }
}

/// A scalar SQL function's C entry point: context, argument count, arguments.
private typealias SQLiteScalarFunction = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

/// `swell_fold(text, flags)`.
private func swellFold(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let value = text(arguments[0]) else { return sqlite3_result_null(context) }
    resultText(context, PredicateFunctions.fold(value, options(arguments[1])))
}

/// `swell_like(value, pattern, flags)`.
private func swellLike(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let value = text(arguments[0]), let pattern = text(arguments[1]) else {
        return sqlite3_result_null(context)
    }
    sqlite3_result_int(context, PredicateFunctions.like(value, pattern, options(arguments[2])) ? 1 : 0)
}

/// `swell_strop(operation, value, operand, flags)`; an unknown operation is NULL.
private func swellStringOperation(
    _ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let arguments,
        let operation = PredicateFunctions.StringOperation(rawValue: sqlite3_value_int64(arguments[0])),
        let value = text(arguments[1]), let operand = text(arguments[2])
    else { return sqlite3_result_null(context) }
    let result = PredicateFunctions.stringOperation(operation, value, operand, options(arguments[3]))
    sqlite3_result_int(context, result ? 1 : 0)
}

/// The text of an SQL value, or nil when it is not text.
private func text(_ value: OpaquePointer?) -> String? {
    guard sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

private func options(_ value: OpaquePointer?) -> PredicateStringOptions {
    PredicateStringOptions(rawValue: Int(truncatingIfNeeded: sqlite3_value_int64(value)))
        .intersection([.caseInsensitive, .diacriticInsensitive])
}

private func resultText(_ context: OpaquePointer?, _ string: String) {
    var string = string
    string.withUTF8 { buffer in
        buffer.withMemoryRebound(to: CChar.self) { chars in
            guard let base = chars.baseAddress else {
                return sqlite3_result_text64(context, "", 0, swell_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
            sqlite3_result_text64(context, base, UInt64(chars.count), swell_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }
}
