import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entity`: the entity description, the backing object, the initialisers and the
/// key-path table of a final class, and `@_EntityProperty` on each stored property.
public struct EntityMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let sink = CompilerDiagnostics(context: context)
        guard let entity = EntityReader.read(declaration, attribute: node, sink: sink) else { return [] }
        return EntityMembers(entity: entity).declarations
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
              variable.isStoredInstanceProperty, !variable.hasAttribute(named: "Transient"),
              !variable.hasAttribute(named: "_EntityProperty"),
              PropertyReader.read(variable, in: NoDiagnostics()) != nil else { return [] }
        return ["@_EntityProperty"]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): SwellStore.PersistentModel {}")]
    }
}

/// An `@Entity` class as read: its name, access level, stored properties and key.
struct EntityDeclaration {
    var name: String
    /// `public ` when the class is public or open, `package ` when package, else empty.
    var access: String
    var properties: [EntityProperty]
    var uniquenessConstraint: [String]
    var declaresInitialiser: Bool
    /// The entity validation the class declares: `static func validateForInsert(_:)` and its siblings.
    var validators: [String] = []
    /// `@Entity(renamedFrom:)`: the entity's name in the model before (its `renamingIdentifier`).
    var renamedFrom: String?
}

enum EntityReader {
    static func read(_ declaration: some DeclGroupSyntax, attribute: AttributeSyntax, sink: some DiagnosticSink) -> EntityDeclaration? {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            sink.report(.notAClass, at: Syntax(attribute))
            return nil
        }
        let name = classDecl.name.trimmedDescription
        let modifiers = classDecl.modifiers.map(\.name.text)
        guard modifiers.contains("final") else {
            sink.report(.notFinal(name), at: Syntax(classDecl.classKeyword))
            return nil
        }
        if classDecl.genericParameterClause != nil {
            sink.report(.genericClass(name), at: Syntax(classDecl.name))
            return nil
        }
        guard PropertyReader.isValidStoredName(name) else {
            sink.report(.invalidName(name), at: Syntax(classDecl.name))
            return nil
        }
        var properties: [EntityProperty] = []
        var valid = true
        var uniqueFromMacro: [String]?
        var declaresInitialiser = false
        var validators: [String] = []
        for member in classDecl.memberBlock.members {
            if member.decl.is(InitializerDeclSyntax.self) { declaresInitialiser = true }
            if let function = member.decl.as(FunctionDeclSyntax.self),
               function.modifiers.contains(where: { ["static", "class"].contains($0.name.text) }),
               ["validateForInsert", "validateForUpdate", "validateForDelete"].contains(function.name.text),
               function.signature.parameterClause.parameters.count == 1 {
                validators.append(function.name.text)
            }
            if let expansion = member.decl.as(MacroExpansionDeclSyntax.self), expansion.macroName.text == "Unique" {
                guard uniqueFromMacro == nil else {
                    sink.report(.uniqueTwice(name), at: Syntax(expansion))
                    valid = false
                    continue
                }
                guard let names = uniqueKeyPaths(expansion) else {
                    sink.report(.uniqueArguments, at: Syntax(expansion))
                    valid = false
                    continue
                }
                uniqueFromMacro = names
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self), variable.isStoredInstanceProperty else { continue }
            if variable.hasAttribute(named: "Transient") {
                if let binding = variable.bindings.first, binding.initializer == nil,
                   let type = binding.typeAnnotation?.type, PropertyReader.optionalWrapped(type) == nil {
                    sink.report(.transientWithoutValue(binding.pattern.trimmedDescription), at: Syntax(variable))
                    valid = false
                }
                continue
            }
            if let property = PropertyReader.read(variable, in: sink) { properties.append(property) } else { valid = false }
        }
        let marked = properties.filter(\.isUnique)
        if marked.count > 1 || (!marked.isEmpty && uniqueFromMacro != nil) {
            sink.report(.uniqueTwice(name), at: Syntax(marked.last!.node))
            valid = false
        }
        // The model pairs a relationship without a named inverse with the one relationship
        // back; the macro sees this class only, so it refuses what could not be paired that way:
        // two relationships to one destination, or one to this class, without an inverse.
        let relationships = properties.filter { !$0.kind.isAttribute }
        for property in relationships where property.inverse == nil {
            let destination = property.kind.destination ?? ""
            let siblings = relationships.filter { $0.kind.destination == destination }.count
            if destination == name || siblings > 1 {
                sink.report(.missingInverse(property.name, destination: destination, reason: destination == name
                    ? "it leads to its own class" : "\(siblings) relationships lead to \(destination)"), at: Syntax(property.node))
                valid = false
            }
        }
        var seen: [String: String] = [:]
        for property in properties {
            if let earlier = seen[property.name.lowercased()] {
                sink.report(.sameNameTwice(earlier, property.name), at: Syntax(property.node))
                valid = false
            }
            seen[property.name.lowercased()] = property.name
        }
        let attributeNames = Set(properties.filter(\.kind.isAttribute).map(\.name))
        for unique in uniqueFromMacro ?? [] where !attributeNames.contains(unique) {
            sink.report(.uniqueNotAnAttribute(unique), at: Syntax(classDecl.name))
            valid = false
        }
        if valid, attributeNames.isEmpty {
            sink.report(.noAttributes(name), at: Syntax(classDecl.name))
            valid = false
        }
        var renamedFrom: String?
        for argument in attribute.arguments?.as(LabeledExprListSyntax.self) ?? [] where argument.label?.text == "renamedFrom" {
            if argument.expression.is(NilLiteralExprSyntax.self) { continue }
            guard let literal = argument.expression.as(StringLiteralExprSyntax.self),
                  let text = literal.representedLiteralValue, !text.isEmpty else {
                sink.report(.renamedNotAName(name), at: Syntax(argument.expression))
                return nil
            }
            renamedFrom = text
        }
        guard valid else { return nil }
        let access = modifiers.contains("public") || modifiers.contains("open") ? "public " : modifiers.contains("package") ? "package " : ""
        return EntityDeclaration(name: name, access: access, properties: properties,
                                 uniquenessConstraint: uniqueFromMacro ?? marked.map(\.name),
                                 declaresInitialiser: declaresInitialiser, validators: validators, renamedFrom: renamedFrom)
    }

    /// `#Unique<T>([\.a, \.b])`: the property names, or nil when the arguments are not that shape.
    static func uniqueKeyPaths(_ expansion: MacroExpansionDeclSyntax) -> [String]? {
        guard expansion.arguments.count == 1, let array = expansion.arguments.first?.expression.as(ArrayExprSyntax.self),
              !array.elements.isEmpty else { return nil }
        var names: [String] = []
        for element in array.elements {
            guard let keyPath = element.expression.as(KeyPathExprSyntax.self), keyPath.components.count == 1,
                  let property = keyPath.components.first?.component.as(KeyPathPropertyComponentSyntax.self) else { return nil }
            names.append(property.declName.baseName.text)
        }
        return names
    }
}

/// The members `@Entity` adds.
struct EntityMembers {
    let entity: EntityDeclaration

    var declarations: [DeclSyntax] {
        let access = entity.access
        let placeholders = entity.properties.filter(\.needsInitialisationCheck)
            .map { "self._$set_\($0.name) = SwellStore._EntityValueSet()\n" }.joined()
        var result: [DeclSyntax] = [
            "\(raw: access)let _$backing = SwellStore.EntityBacking()",
            "\(raw: access)static let entityDescription = \(raw: descriptionExpression)",
            """
            /// Wraps a managed object of this entity; `ManagedObjectContext` calls it for fetched objects.
            \(raw: access)init(backing object: SwellStore.ManagedObject) {
            \(raw: placeholders)_$backing.attach(object, to: self)
            }
            """,
            """
            /// Creates an object of this entity inserted into `context`: properties with an
            /// initial value have it, other attributes are unset.
            \(raw: access)init(context: SwellStore.ManagedObjectContext) {
            \(raw: placeholders)context.insert(self)
            }
            """,
            """
            \(raw: access)static func _$storedName(for keyPath: AnyKeyPath) -> String? {
            \(raw: entity.properties.map { "if keyPath == \\\(entity.name).\($0.name) as AnyKeyPath { return \"\($0.name)\" }\n" }.joined())return nil
            }
            """,
        ]
        if !entity.declaresInitialiser, placeholders.isEmpty {
            result.append("\(raw: access)init() {}")
        }
        return result
    }

    /// `, renamingIdentifier: "old"` for a relationship marked `@Renamed(from: "old")`.
    private func renamed(_ property: EntityProperty) -> String {
        property.renamedFrom.map { ", renamingIdentifier: \"\($0)\"" } ?? ""
    }

    var descriptionExpression: String {
        let attributes = entity.properties.compactMap { property -> String? in
            guard case .attribute(let type, let isOptional) = property.kind else { return nil }
            let rules = property.validation.map { ", validation: [\($0)]" } ?? ""
            let renamed = property.renamedFrom.map { ", renamingIdentifier: \"\($0)\"" } ?? ""
            let value = property.defaultLiteral.map { ", defaultValue: \($0)" } ?? ""
            return "SwellStore.AttributeDescription(name: \"\(property.name)\", type: .\(type), isOptional: \(isOptional)\(rules)\(renamed)\(value))"
        }
        let relationships = entity.properties.compactMap { property -> String? in
            let rule = property.deleteRule ?? "nullify"
            let inverse = property.inverse.map { "\"\($0)\"" } ?? "nil"
            switch property.kind {
            case .attribute: return nil
            case .toOne(let destination):
                // Counts on a to-one are passed on for the model to refuse with its reason.
                let counts = (property.minCount.map { ", minCount: \($0)" } ?? "") + (property.maxCount.map { ", maxCount: \($0)" } ?? "")
                return "SwellStore.RelationshipDescription(name: \"\(property.name)\", destination: \"\(destination)\", "
                    + "inverse: \(inverse), deleteRule: .\(rule)\(counts)\(renamed(property)))"
            case .toMany(let destination, let isOrdered):
                let counts = (property.minCount.map { ", minCount: \($0)" } ?? "") + (property.maxCount.map { ", maxCount: \($0)" } ?? "")
                return "SwellStore.RelationshipDescription(name: \"\(property.name)\", destination: \"\(destination)\", "
                    + "toMany: true, isOrdered: \(isOrdered), inverse: \(inverse), deleteRule: .\(rule)\(counts)\(renamed(property)))"
            }
        }
        let unique = entity.uniquenessConstraint.map { "\"\($0)\"" }.joined(separator: ", ")
        let description = """
            SwellStore.EntityDescription(
            name: "\(entity.name)",
            attributes: [\(attributes.map { "\n\($0)," }.joined())
            ],
            relationships: [\(relationships.map { "\n\($0)," }.joined())
            ],
            uniquenessConstraint: [\(unique)]\(entity.renamedFrom.map { ",\nrenamingIdentifier: \"\($0)\"" } ?? "")
            )
            """
        guard !entity.validators.isEmpty else { return description }
        // The class's own validation, called with the typed object.
        let settings = entity.validators.map {
            "description.\($0) = { object in try \(entity.name).\($0)(object.model(as: \(entity.name).self)!) }\n"
        }.joined()
        return "{\nvar description = \(description)\n\(settings)return description\n}()"
    }
}
