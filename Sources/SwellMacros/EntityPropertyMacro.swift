import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@_EntityProperty`, which `@Entity` puts on each stored property: accessors that read and
/// write the managed object's value (or, before the object is inserted, keep it for the insert),
/// and for a non-optional attribute without an initial value a zero-size placeholder the init
/// accessor initialises, so the compiler checks that every initialiser sets it.
public struct EntityPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              let property = PropertyReader.read(variable, in: NoDiagnostics()) else { return [] }
        let key = "\"\(property.name)\""
        let restrictions = property.needsInitialisationCheck
            ? "@storageRestrictions(initializes: _$set_\(property.name), accesses: _$backing)"
            : "@storageRestrictions(accesses: _$backing)"
        let mark = property.needsInitialisationCheck ? "\n_$set_\(property.name) = SwellStore._EntityValueSet()" : ""
        let (getter, setter): (String, String)
        let destination = property.destinationType ?? ""
        switch property.kind {
        case .attribute:
            getter = "_$backing.attribute(forKey: \(key), as: (\(property.typeText)).self)"
            setter = "_$backing.setAttribute(newValue, forKey: \(key))"
        case .toOne:
            getter = "_$backing.toOne(forKey: \(key), as: \(destination).self)"
            setter = "_$backing.setToOne(newValue, forKey: \(key))"
        case .toMany(_, false):
            getter = "_$backing.toMany(forKey: \(key), as: \(destination).self)"
            setter = "_$backing.setToMany(newValue, forKey: \(key))"
        case .toMany(_, true):
            getter = "_$backing.orderedToMany(forKey: \(key), as: \(destination).self)"
            setter = "_$backing.setOrderedToMany(newValue, forKey: \(key))"
        }
        // A to-many declared without an initial value starts empty: no init accessor, so
        // initialisers need not set it (an init accessor would make the compiler insist).
        if case .toMany = property.kind, !property.hasInitialValue {
            return ["get { \(raw: getter) }", "set { \(raw: setter) }"]
        }
        return [
            """
            \(raw: restrictions)
            init(initialValue) {
            _$backing.setInitialValue(initialValue, forKey: \(raw: key))\(raw: mark)
            }
            """,
            "get { \(raw: getter) }",
            "set { \(raw: setter) }",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              let property = PropertyReader.read(variable, in: NoDiagnostics()),
              property.needsInitialisationCheck else { return [] }
        return ["private var _$set_\(raw: property.name): SwellStore._EntityValueSet"]
    }
}

/// `@Unique`, `@Relationship`, `@Transient`: markers `@Entity` reads; they add nothing themselves.
public struct EntityMarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

/// `#Unique<T>([\.a, \.b])`: a marker `@Entity` reads; the compiler checks the key paths.
public struct UniqueConstraintMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}
