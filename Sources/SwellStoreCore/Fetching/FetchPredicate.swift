import Foundation

/// NSPredicate-style filter for fetch requests and exports.
///
/// The format is the subset of NSPredicate's syntax described in
/// Pipeline file reference: comparisons (`== = != <> < <= > >=`), `BEGINSWITH`,
/// `ENDSWITH`, `CONTAINS`, `LIKE` (with `*` and `?`), each optionally with
/// `[c]`, `[d]` or `[cd]`, `IN {a, b}`, `BETWEEN {low, high}`, `AND` `OR` `NOT`
/// (`&&` `||` `!`), parentheses, and literals: numbers, quoted strings,
/// `TRUE` `FALSE` `YES` `NO` `NIL` `NULL`. Placeholders take the arguments in
/// order, as in Core Data: `%@` a value, `%K` an attribute name (or key path),
/// `%d` `%i` `%u` and their C length forms (`%ld`, `%lld`, …) an integer, `%f`
/// (`%e`, `%g`, `%lf`) a number. An unknown placeholder (`%s`, `%x`) is refused
/// when the predicate is made: `parse(format:arguments:)` throws it, and
/// `formatError` holds it for the non-throwing initialiser (whose fetches throw it).
///
/// ```swift
/// FetchPredicate(format: "rating >= %@ AND location CONTAINS[c] %@", 3, "beach")
/// ```
///
/// A null attribute matches only `== NIL` and `!= NIL`: any other comparison
/// with it is false (so `NOT (x == 5)` is true when `x` is null). Strings
/// compare by their UTF-8 bytes. A predicate is a value; it crosses queues freely.
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The format the predicate was created with.
    public let format: String
    /// The arguments for the format's placeholders, converted when the predicate was created.
    package let arguments: [PredicateValue]
    /// The parsed format, or why it could not be parsed.
    private let parsed: Result<PredicateExpression, FetchPredicateError>

    /// Creates a predicate from a format and the arguments for its `%@`
    /// placeholders, in order: `String`, any integer type, `Double`, `Float`,
    /// `Bool`, `Date`, nil, or an array of those for `IN` and `BETWEEN`.
    ///
    /// Never traps: the format is parsed here, and a malformed one or an unusable argument
    /// is kept in `formatError` and thrown by `validate(against:)` (and so by the fetch
    /// that uses it). `parse(format:arguments:)` throws it instead.
    public init(format: String, _ arguments: Any?...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Creates a predicate from a format and an array of arguments for its
    /// placeholders; see `init(format:_:)`.
    public init(format: String, argumentArray: [Any?]) {
        self.format = format
        let arguments = argumentArray.map(PredicateValue.init(argument:))
        self.arguments = arguments
        do {
            parsed = .success(try PredicateParser.parse(format: format, arguments: arguments))
        } catch {
            parsed = .failure(error)
        }
    }

    /// Why the format cannot be used, found when the predicate was made: a syntax error, an
    /// unknown placeholder, a missing, extra or unusable argument. Nil when it parsed.
    /// (Core Data raises at `NSPredicate(format:)`; Swell never traps on bad input, so the
    /// initialisers keep Core Data's non-throwing shape and this tells at once.)
    public var formatError: FetchPredicateError? {
        if case .failure(let error) = parsed { return error }
        return nil
    }

    /// Creates a predicate, throwing when the format is malformed or an
    /// argument cannot be used (attributes are checked by `validate(against:)`).
    public static func parse(format: String, arguments: [Any?] = []) throws(FetchPredicateError) -> FetchPredicate {
        let predicate = FetchPredicate(format: format, argumentArray: arguments)
        if case .failure(let error) = predicate.parsed { throw error }
        return predicate
    }

    /// The format.
    public var description: String { format }

    /// Checks the syntax, and that every attribute exists in `entity` and is
    /// compared with values of its type.
    ///
    /// - Throws: `FetchPredicateError` with the offset of the problem in the format.
    public func validate(against entity: EntityDescription) throws(FetchPredicateError) {
        _ = try bind(to: entity)
    }

    /// Checks the predicate against the entity named `entity` of `model`, key paths
    /// through its relationships included (Store guarantees 33).
    public func validate(against entity: String, in model: ManagedObjectModel) throws(FetchPredicateError) {
        let entities = model.storageModel.entitiesByName
        guard let stored = entities[entity] else {
            throw FetchPredicateError(message: "no entity named '\(entity)' in the model", offset: 0, format: format)
        }
        _ = try bind(to: stored, entities: entities)
    }

    /// The predicate typed against `entity`, ready to compile to SQL or evaluate in memory.
    package func bind(to entity: EntityDescription, entities: [String: EntityDescription] = [:]) throws(FetchPredicateError) -> BoundPredicate {
        switch parsed {
        case .success(let expression): try BoundPredicate(expression: expression, entity: entity, format: format, entities: entities)
        case .failure(let error): throw error
        }
    }

    /// Two predicates are equal when their formats and arguments are.
    public static func == (lhs: FetchPredicate, rhs: FetchPredicate) -> Bool {
        lhs.format == rhs.format && lhs.arguments == rhs.arguments
    }

    /// Hashes the format and the arguments.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(format)
        hasher.combine(arguments)
    }
}

/// Why a predicate cannot be used: a syntax error, an unknown attribute, a
/// value of the wrong type, or an unusable argument, with where it is.
public struct FetchPredicateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "unknown attribute 'ratng' of JournalEntry".
    public let message: String
    /// The 0-based offset, in `Character`s, in the format where the problem is.
    public let offset: Int
    /// The predicate's format.
    public let format: String

    /// Creates an error.
    public init(message: String, offset: Int, format: String) {
        self.message = message
        self.offset = offset
        self.format = format
    }

    /// The 1-based column of the problem in the format.
    public var column: Int { offset + 1 }

    /// The message, the column and the format.
    public var description: String {
        "\(message) at column \(column) of predicate \"\(format)\""
    }
}

extension PredicateValue {
    /// Converts a caller's argument; a type predicates cannot use becomes `.unsupported`.
    package init(argument: Any?) {
        guard let argument else {
            self = .null
            return
        }
        switch argument {
        case let optional as any PredicateOptional where optional.isNilArgument: self = .null
        case let string as String: self = .string(string)
        case let substring as Substring: self = .string(String(substring))
        case let bool as Bool: self = .bool(bool)
        case let int as any BinaryInteger:
            if let exact = Int64(exactly: int) {
                self = .integer(exact)
            } else {
                self = .unsupported("the integer \(int), which does not fit in 64 bits")
            }
        case let double as Double: self = .double(double)
        case let float as Float: self = .double(Double(float))
        case let date as Date: self = .date(date.timeIntervalSince1970)
        case let object as any PredicateObjectArgument: self = .integer(object.predicateObjectID.primaryKey)
        case let id as ObjectID: self = .integer(id.primaryKey)
        case let array as [Any?]: self = .list(array.map(PredicateValue.init(argument:)))
        default: self = .unsupported("a value of type \(type(of: argument)) (\(argument))")
        }
    }
}

/// Lets `PredicateValue(argument:)` see a nil boxed in `Any`.
private protocol PredicateOptional {
    var isNilArgument: Bool { get }
}

extension Optional: PredicateOptional {
    fileprivate var isNilArgument: Bool { self == nil }
}

/// An object a predicate's argument can be (a `ManagedObject`): it stands for its ID.
package protocol PredicateObjectArgument {
    /// The ID the predicate compares.
    var predicateObjectID: ObjectID { get }
}
