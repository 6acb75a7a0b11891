import CSQLite
import Foundation
import SwellStoreCore

extension SQLiteConnection {
    /// Registers the deterministic SQL functions predicates compile to:
    /// `swell_fold(text, flags)`, `swell_like(value, pattern, flags)` and
    /// `swell_strop(operation, value, operand, flags)`.
    ///
    /// Each returns NULL when its value is not text (NULL included); flags are
    /// `PredicateStringOptions` raw values. They run `PredicateFunctions`, as
    /// in-memory evaluation does. And the one migrations use, `swell_widen(value, from, to)`
    /// (type names): `Widening.apply`, so a widened column's values are those the other stores write.
    package func registerPredicateFunctions() throws(SQLiteError) {
        try createFunction("swell_fold", argumentCount: 2, swellFold)
        try createFunction("swell_like", argumentCount: 3, swellLike)
        try createFunction("swell_strop", argumentCount: 4, swellStringOperation)
        try createFunction("swell_widen", argumentCount: 3, swellWiden)
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

/// `swell_widen(value, from, to)`: the value widened (`Widening.apply`); an unknown widening
/// leaves it as it is.
private func swellWiden(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments else { return sqlite3_result_null(context) }
    let value = arguments[0]
    let stored: StoreValue = switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: .integer(sqlite3_value_int64(value))
    case SQLITE_FLOAT: .real(sqlite3_value_double(value))
    case SQLITE_NULL: .null
    default: .text(text(value) ?? "")
    }
    guard let from = text(arguments[1]).flatMap(AttributeType.init(rawValue:)),
          let to = text(arguments[2]).flatMap(AttributeType.init(rawValue:)),
          let widening = Widening(from: from, to: to) else { return sqlite3_result_value(context, value) }
    switch widening.apply(stored) {
    case .null: sqlite3_result_null(context)
    case .integer(let integer): sqlite3_result_int64(context, integer)
    case .real(let double): sqlite3_result_double(context, double)
    case .text(let string): resultText(context, string)
    }
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
