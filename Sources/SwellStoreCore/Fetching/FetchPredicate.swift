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
/// Nil means what it means to NSPredicate (Store guarantees 63, README "What nil means in a
/// predicate"): `x == NIL` is true where `x` is nil, `x != 5` is true where `x` is nil, an
/// ordering comparison (`<`, `BETWEEN`) or a string operator with nil is false, and a key
/// path through a nil to-one reads nil. `SELF == %@` and `SELF IN %@` compare the object
/// itself with objects or object IDs. Strings compare by their UTF-8 bytes. The same
/// predicate gives the same answer in SQL, in memory for unsaved objects, and on every
/// store. (`nilMatching` can choose the older rule pipeline files of versions 1–3 keep.)
/// A predicate is a value; it crosses queues freely.
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    /// What a comparison with nil means (`NilMatching`): NSPredicate's meaning unless
    /// changed. Part of the predicate's value (`==` and `hash` include it).
    public var nilMatching: NilMatching = .nsPredicate
    /// The format the predicate was created with.
    public let format: String
    /// The arguments for the format's placeholders, converted when the predicate was created.
    package let arguments: [PredicateValue]
    /// The parsed format, or why it could not be parsed.
    private let parsed: Result<PredicateExpression, FetchPredicateError>

    /// Creates a predicate from a format and the arguments for its `%@`
    /// placeholders, in order: `String`, any integer type, `Double`, `Float`,
    /// `Bool`, `Date`, nil, an object (`ManagedObject`, a typed `@Entity` object) or an
    /// `ObjectID`, or an array or `Set` of those for `IN` and `BETWEEN`.
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
        case .success(let expression):
            try BoundPredicate(expression: expression, entity: entity, format: format, entities: entities, nilMatching: nilMatching)
        case .failure(let error): throw error
        }
    }

    /// The same predicate with `nilMatching` set to `rule`.
    public func nilMatching(_ rule: NilMatching) -> FetchPredicate {
        var predicate = self
        predicate.nilMatching = rule
        return predicate
    }

    /// Two predicates are equal when their formats, arguments and nil rules are.
    public static func == (lhs: FetchPredicate, rhs: FetchPredicate) -> Bool {
        lhs.format == rhs.format && lhs.arguments == rhs.arguments && lhs.nilMatching == rhs.nilMatching
    }

    /// Hashes the format, the arguments and the nil rule.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(format)
        hasher.combine(arguments)
        hasher.combine(nilMatching)
    }
}

extension FetchPredicate {
    /// What a comparison with nil (an attribute that is nil, a key path through a nil to-one,
    /// a `NIL` or nil argument) means.
    public enum NilMatching: Sendable, Hashable {
        /// NSPredicate's meaning, the default: `nil == nil` is true, `x != value` is true
        /// where `x` is nil, an ordering comparison, `BETWEEN` or a string operator with nil
        /// is false (so its `NOT` is true), and a key path through a nil to-one reads nil —
        /// `spot.name != 'x'` and `spot.name == NIL` hold for an object without a spot, and
        /// a to-many behind a nil to-one has no members.
        case nsPredicate
        /// The rule of pipeline files of versions 1–3: a nil attribute matches only `== NIL`
        /// and `!= NIL` (and `IN` a list holding `NIL`), every other comparison with it is
        /// false (`x != 5` too), a key path through a nil to-one matches nothing, and an
        /// ordering comparison, `BETWEEN` bound or string operator with `NIL` is an error.
        case onlyNilTests
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
        case let object as any PredicateObjectArgument:
            if let id = object.predicateObjectID {
                self = .object(id)
            } else {
                self = .unsupported("a \(type(of: object)) that is in no context (it has no object ID yet)")
            }
        case let id as ObjectID: self = .object(id)
        case let array as [Any?]: self = .list(array.map(PredicateValue.init(argument:)))
        case let set as any PredicateSetArgument: self = .list(set.predicateElements.map(PredicateValue.init(argument:)))
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

/// An object a predicate's `%@` can stand for — a `ManagedObject`, a typed `@Entity` object —
/// which the predicate compares as its object ID (`SELF == %@`, `spot == %@`, `SELF IN %@`).
public protocol PredicateObjectArgument {
    /// The ID the predicate compares; nil for an object that has none yet (a typed object
    /// not inserted into a context), which a predicate cannot use.
    var predicateObjectID: ObjectID? { get }
}

/// Lets `PredicateValue(argument:)` take a `Set` (of objects, IDs or values) as a list.
private protocol PredicateSetArgument {
    var predicateElements: [Any?] { get }
}

extension Set: PredicateSetArgument {
    fileprivate var predicateElements: [Any?] { map { $0 } }
}
