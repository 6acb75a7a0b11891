import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// What the entity macros refuse, said where the declaration is.
enum EntityDiagnostic: DiagnosticMessage {
    case notAClass
    case notFinal(String)
    case genericClass(String)
    case invalidName(String)
    case sameNameTwice(String, String)
    case lazyProperty(String)
    case propertyWrapper(String, attribute: String)
    case observers(String)
    case transientWithoutValue(String)
    case oneNamePerDeclaration
    case letProperty(String)
    case missingType(String)
    case unsupportedType(String, type: String)
    case collectionOfValues(String, type: String)
    case optionalToMany(String, type: String)
    case nonOptionalToOne(String, type: String)
    case missingInverse(String, destination: String, reason: String)
    case inverseNotAName(String)
    case renamedNotAName(String)
    case relationshipOnAttribute(String)
    case uniqueRelationship(String)
    case validatedRelationship(String)
    case uniqueTwice(String)
    case uniqueNotAnAttribute(String)
    case uniqueArguments
    case noAttributes(String)

    var message: String {
        switch self {
        case .renamedNotAName(let name):
            "@Renamed on '\(name)' takes the property's earlier name as a string literal: @Renamed(from: \"oldName\")"
        case .notAClass:
            "@Entity applies to a final class"
        case .notFinal(let name):
            "@Entity class '\(name)' must be final"
        case .genericClass(let name):
            "@Entity class '\(name)' cannot be generic: an entity has one description"
        case .invalidName(let name):
            "'\(name)' cannot be stored under this name: a stored name matches [A-Za-z_][A-Za-z0-9_]* and does not "
                + "start with '_', 'swell_' or 'sqlite_' (rename it, or mark it @Transient)"
        case .sameNameTwice(let first, let second):
            "'\(first)' and '\(second)' differ only in case: the store's names compare without case"
        case .lazyProperty(let name):
            "'\(name)' is lazy: a stored property of an entity cannot be (mark it @Transient)"
        case .propertyWrapper(let name, let attribute):
            "'\(name)' has @\(attribute): a stored property of an entity cannot have a property wrapper (mark it @Transient)"
        case .observers(let name):
            "'\(name)' has willSet/didSet: the entity's accessors replace them; observe the context's changes instead"
        case .transientWithoutValue(let name):
            "@Transient '\(name)' needs an initial value: objects fetched from the store are made without your initialiser"
        case .oneNamePerDeclaration:
            "declare one stored property per 'var' in an @Entity class"
        case .letProperty(let name):
            "'\(name)' is a 'let': a stored property of an entity is a 'var' (or mark it @Transient)"
        case .missingType(let name):
            "'\(name)' needs a type annotation to be stored"
        case .unsupportedType(let name, let type):
            "'\(name)' has type '\(type)', which cannot be stored: use String, Int, Double, Bool, Date or JSONText "
                + "(or an optional of one), an optional @Entity class, a Set or array of one, or mark it @Transient"
        case .collectionOfValues(let name, let type):
            "'\(name)' is '\(type)': a collection of values cannot be stored; use a to-many relationship to an "
                + "@Entity class, JSONText, or mark it @Transient"
        case .optionalToMany(let name, let type):
            "'\(name)' is '\(type)': a to-many relationship is never nil; declare it without '?' (an empty collection)"
        case .nonOptionalToOne(let name, let type):
            "'\(name)' is '\(type)': a to-one relationship must be optional ('\(type)?'); if '\(type)' is not an "
                + "@Entity class it cannot be stored (mark it @Transient)"
        case .missingInverse(let name, let destination, let reason):
            "relationship '\(name)' to '\(destination)' needs its inverse named (\(reason)): write "
                + "@Relationship(inverse: \"<property of \(destination)>\")"
        case .inverseNotAName(let name):
            "the inverse of '\(name)' must be a string literal naming the destination's property"
        case .relationshipOnAttribute(let name):
            "'\(name)' is an attribute: @Relationship applies to a property whose type is an @Entity class or a collection of one"
        case .uniqueRelationship(let name):
            "'\(name)' is a relationship: @Unique applies to attributes"
        case .validatedRelationship(let name):
            "'\(name)' is a relationship: @Validated applies to attributes (bound a to-many with @Relationship(minimumModelCount:maximumModelCount:))"
        case .uniqueTwice(let name):
            "'\(name)' has one uniqueness constraint already: an entity has one (several attributes together: "
                + "#Unique<\(name)>([\\.a, \\.b]))"
        case .uniqueNotAnAttribute(let name):
            "#Unique names '\(name)', which is not a stored attribute of this entity"
        case .uniqueArguments:
            "#Unique takes one array of key paths: #Unique<Entity>([\\.a, \\.b])"
        case .noAttributes(let name):
            "@Entity class '\(name)' has no stored attributes"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "SwellMacros", id: "\(self)".prefix { $0 != "(" }.description) }
    var severity: DiagnosticSeverity { .error }
}

/// Where reading a declaration reports what it refuses.
protocol DiagnosticSink {
    func report(_ message: EntityDiagnostic, at node: Syntax)
}

/// Reports to the compiler, through the macro's expansion context.
struct CompilerDiagnostics<Context: MacroExpansionContext>: DiagnosticSink {
    let context: Context
    func report(_ message: EntityDiagnostic, at node: Syntax) {
        context.diagnose(Diagnostic(node: node, message: message))
    }
}

/// Drops what it is told: for the property macro, whose declaration `@Entity` already checked.
struct NoDiagnostics: DiagnosticSink {
    func report(_ message: EntityDiagnostic, at node: Syntax) {}
}
