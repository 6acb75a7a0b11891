import Foundation
import SwellContexts
import SwellStoreCore

// Foundation's `#Predicate` builds a tree of `PredicateExpressions` values. Swell turns that
// tree into the format string that says the same thing, so a typed predicate is parsed,
// checked, compiled to SQL and evaluated in memory by the one predicate implementation
// the format strings use: the same SQL, and the same results for unsaved objects.

extension FetchPredicate {
    /// The format predicate that says what a `#Predicate` over an `@Entity` class says.
    ///
    /// Supported: `==` `!=` `<` `<=` `>` `>=` between a property and a value (either side),
    /// `&&` `||` `!`, `??` with a constant, optional chaining through to-one relationships
    /// (`$0.spot?.name`), `contains` and `starts(with:)` on strings,
    /// `[values].contains($0.x)` (IN), `.count` and `.isEmpty` of a to-many, and
    /// `$0.tags.contains { … }` / `allSatisfy { … }` with one comparison inside (ANY / ALL).
    /// It means what Swift says: format predicates take NSPredicate's meaning of nil (Store
    /// guarantees 63), which is Swift's for what a `#Predicate` can say — `$0.rating != 3`
    /// matches a nil rating, `$0.spot?.name == nil` an entry without a spot — so the typed
    /// and the format predicate that say the same give the same results.
    ///
    /// - Throws: `StoreError.invalidPredicate` naming the expression Swell cannot compile.
    public init<T: PersistentModel>(_ predicate: Predicate<T>) throws {
        var scope = PredicateScope()
        scope.variables[predicate.variable.key] = ScopedKeyPath(path: "")
        let description = "#Predicate<\(T.entityDescription.name)>"
        do {
            let piece = try scope.term(of: predicate.expression).condition()
            self.init(format: piece.format, argumentArray: piece.arguments)
        } catch let error as UnsupportedPredicate {
            throw StoreError.invalidPredicate(FetchPredicateError(message: error.reason, offset: 0, format: description))
        }
        if let formatError { throw StoreError.invalidPredicate(formatError) }
    }
}

extension FetchSortDescriptor {
    /// The sort a `SortDescriptor` over an `@Entity` class's stored property says. Strings
    /// sort by their UTF-8 bytes whatever its comparator, as every Swell sort does.
    ///
    /// - Throws: `StoreError.invalidSortKey` for a key path that is not a stored property.
    public init<T: PersistentModel>(_ sort: SortDescriptor<T>) throws {
        guard let keyPath = sort.keyPath, let name = T._$storedName(for: keyPath) else {
            throw StoreError.invalidSortKey(entity: T.entityDescription.name, key: "a key path that is not a stored property")
        }
        self.init(key: name, ascending: sort.order == .forward)
    }
}

/// Why a `#Predicate` cannot be compiled.
struct UnsupportedPredicate: Error {
    var reason: String
}

/// A key path reached from a predicate's variable.
struct ScopedKeyPath {
    var path: String
    /// The to-one relationships optional chaining went through (`spot` in `$0.spot?.name`).
    var optionalHops: [String] = []
    /// Whether the path ends in `@count` (never nil itself).
    var isCount = false

    func appending(_ name: String) -> ScopedKeyPath {
        ScopedKeyPath(path: path.isEmpty ? name : "\(path).\(name)", optionalHops: optionalHops)
    }

    /// The key path as a format writes it: escaped, so a property named like a keyword
    /// (`contains`, `all`, `no`) is still a name.
    var format: String { "#" + path }

    /// When the Swift expression is nil. A key path through a nil to-one reads nil in a format
    /// predicate, so the value's own `== NIL` says it; a `@count` is nil when the to-one before it is.
    var isNilFormat: String {
        guard isCount else { return "\(format) == NIL" }
        return optionalHops.last.map { "#\($0) == NIL" } ?? "FALSEPREDICATE"
    }
}

/// A piece of format with its arguments.
struct FormatPiece {
    var format: String
    var arguments: [Any?]
    /// One comparison of one key path (what `ANY` and `ALL` can quantify).
    var isComparison = false

    static var truePredicate: FormatPiece { FormatPiece(format: "TRUEPREDICATE", arguments: []) }
    static var falsePredicate: FormatPiece { FormatPiece(format: "FALSEPREDICATE", arguments: []) }
}

/// What one node of the expression tree stands for.
enum PredicateTerm {
    case keyPath(ScopedKeyPath)
    case value(Any?)
    /// `keyPath ?? fallback`.
    case coalesced(ScopedKeyPath, fallback: Any?)
    case condition(FormatPiece)

    /// The term as a condition: a Bool property or value compares with true.
    func condition() throws -> FormatPiece {
        switch self {
        case .condition(let piece): return piece
        case .keyPath(let keyPath): return FormatPiece(format: "\(keyPath.format) == %@", arguments: [true], isComparison: true)
        case .value(let value as Bool): return value ? .truePredicate : .falsePredicate
        case .coalesced(let keyPath, let fallback as Bool):
            let equal = FormatPiece(format: "\(keyPath.format) == %@", arguments: [true], isComparison: true)
            return fallback ? FormatPiece(format: "(\(keyPath.format) == %@ OR \(keyPath.isNilFormat))", arguments: [true]) : equal
        default: throw UnsupportedPredicate(reason: "a value that is not a condition is used as one")
        }
    }
}

/// The variables in scope while converting: the predicate's own, and those `flatMap`,
/// `contains(where:)` and `allSatisfy` bind.
struct PredicateScope {
    var variables: [PredicateExpressions.VariableID: ScopedKeyPath] = [:]

    mutating func term(of expression: Any) throws -> PredicateTerm {
        guard let convertible = expression as? any TypedPredicateExpression else {
            let name = String(describing: type(of: expression))
            throw UnsupportedPredicate(reason: "Swell cannot compile \(name.prefix { $0 != "<" }) in a #Predicate")
        }
        return try convertible.term(in: &self)
    }
}

/// A node of Foundation's predicate tree Swell can compile.
protocol TypedPredicateExpression {
    func term(in scope: inout PredicateScope) throws -> PredicateTerm
}

/// Unwraps an optional boxed in `Any`, and turns typed objects and JSON text into what a
/// format argument takes.
func formatArgument(_ value: Any?) throws -> Any? {
    guard let value else { return nil }
    if let optional = value as? any OptionalBox { return try formatArgument(optional.unboxed) }
    if let model = value as? any PersistentModel {
        guard let object = model.managedObject else {
            throw UnsupportedPredicate(reason: "a \(type(of: model).entityDescription.name) compared in a #Predicate is in no context")
        }
        return object
    }
    if let json = value as? JSONText { return json.text }
    if let models = value as? any Sequence, !(value is String) {
        return try models.map { try formatArgument($0) }
    }
    return value
}

/// An `Optional` seen through `Any`: its value, and (as a type) that it is optional.
protocol OptionalBox {
    var unboxed: Any? { get }
}

extension Optional: OptionalBox {
    var unboxed: Any? { self.map { $0 as Any } }
}
