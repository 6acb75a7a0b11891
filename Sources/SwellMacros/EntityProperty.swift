import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// What a stored property of an `@Entity` class becomes in the entity's description.
enum PropertyKind: Equatable {
    /// An attribute: its `AttributeType` case name, and whether nil is allowed.
    case attribute(type: String, isOptional: Bool)
    /// A to-one relationship to the named entity (always optional).
    case toOne(destination: String)
    /// A to-many relationship: a `Set` of the destination, or an array when ordered.
    case toMany(destination: String, isOrdered: Bool)
}

/// One stored property of an `@Entity` class, read from its declaration.
struct EntityProperty {
    var name: String
    /// The type as written, trimmed.
    var typeText: String
    var kind: PropertyKind
    /// A relationship's destination type as written (`Beach.Spot`), for the accessors.
    var destinationType: String?
    /// Whether the declaration gives an initial value (`var tags: Set<Tag> = []`).
    var hasInitialValue: Bool
    var isUnique: Bool
    /// `@Relationship(inverse:deleteRule:)`'s arguments, when written.
    var inverse: String?
    var deleteRule: String?
    /// `@Relationship(minimumModelCount:maximumModelCount:)`, as written.
    var minCount: String?
    var maxCount: String?
    /// `@Validated(…)`'s rules, as written (`.minValue(1), .maxValue(5)`).
    var validation: String?
    /// `@Renamed(from:)`'s name: the property's name in the model before (its `renamingIdentifier`).
    var renamedFrom: String?
    /// An attribute's initial value when it is a literal (`= 3`, `= "x"`, `= true`, `= -1.5`):
    /// its `defaultValue`, what a migration fills and a new object starts with.
    var defaultLiteral: String?
    var node: VariableDeclSyntax

    /// Non-optional attributes without an initial value must be set by every initialiser:
    /// a zero-size placeholder the init accessor initialises lets the compiler check it.
    var needsInitialisationCheck: Bool {
        if hasInitialValue { return false }
        if case .attribute(_, false) = kind { return true }
        return false
    }
}

/// Swift types an attribute can have, and the `AttributeType` each is stored as.
let attributeTypes: [String: String] = [
    "String": "string", "Swift.String": "string",
    "Int": "integer", "Swift.Int": "integer",
    "Double": "double", "Swift.Double": "double",
    "Bool": "boolean", "Swift.Bool": "boolean",
    "Date": "date", "Foundation.Date": "date",
    "JSONText": "json", "SwellStore.JSONText": "json",
]

extension VariableDeclSyntax {
    /// Whether the declaration is a stored instance property (no accessors, not static).
    var isStoredInstanceProperty: Bool {
        if modifiers.contains(where: { ["static", "class"].contains($0.name.text) }) { return false }
        guard bindings.count == 1, let binding = bindings.first else { return true }
        switch binding.accessorBlock?.accessors {
        case nil: return true
        case .getter: return false
        case .accessors(let accessors):
            // willSet/didSet observers keep a property stored.
            return accessors.allSatisfy { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }
        }
    }

    /// An attribute that is not one of the entity macros' own (a property wrapper, another macro).
    var foreignAttribute: String? {
        let ours: Set<String> = ["Unique", "Relationship", "Transient", "Validated", "Renamed", "_EntityProperty"]
        for element in attributes {
            guard case .attribute(let attribute) = element else { continue }
            let name = attribute.attributeName.trimmedDescription
            let last = name.split(separator: ".").last.map(String.init) ?? name
            if ours.contains(last) { continue }
            if last.first?.isUppercase == true { return name }
        }
        return nil
    }

    func hasAttribute(named name: String) -> Bool {
        attribute(named: name) != nil
    }

    func attribute(named name: String) -> AttributeSyntax? {
        for element in attributes {
            if case .attribute(let attribute) = element,
               attribute.attributeName.trimmedDescription == name || attribute.attributeName.trimmedDescription == "SwellStore.\(name)" {
                return attribute
            }
        }
        return nil
    }
}

/// Reads a stored property, or reports why it cannot be stored.
enum PropertyReader {
    static func read(_ variable: VariableDeclSyntax, in context: some DiagnosticSink) -> EntityProperty? {
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
            context.report(.oneNamePerDeclaration, at: Syntax(variable))
            return nil
        }
        let name = identifier.identifier.identifier?.name ?? identifier.identifier.trimmedDescription
        guard isValidStoredName(name) else {
            context.report(.invalidName(name), at: Syntax(identifier))
            return nil
        }
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            context.report(.lazyProperty(name), at: Syntax(variable))
            return nil
        }
        if let wrapper = variable.foreignAttribute {
            context.report(.propertyWrapper(name, attribute: wrapper), at: Syntax(variable))
            return nil
        }
        if binding.accessorBlock != nil {
            context.report(.observers(name), at: Syntax(binding))
            return nil
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            context.report(.letProperty(name), at: Syntax(variable.bindingSpecifier))
            return nil
        }
        guard let type = binding.typeAnnotation?.type else {
            context.report(.missingType(name), at: Syntax(binding))
            return nil
        }
        guard let kind = classify(type, name: name, in: context) else { return nil }
        var typeText = type.trimmedDescription
        if case .attribute(_, true) = kind, let wrapped = optionalWrapped(type) { typeText = "\(wrapped.trimmedDescription)?" }
        var property = EntityProperty(name: name, typeText: typeText, kind: kind, destinationType: destinationType(of: type),
                                      hasInitialValue: binding.initializer != nil,
                                      isUnique: variable.hasAttribute(named: "Unique"), node: variable)
        if let relationship = variable.attribute(named: "Relationship") {
            guard !kind.isAttribute else {
                context.report(.relationshipOnAttribute(name), at: Syntax(relationship))
                return nil
            }
            for argument in relationship.arguments?.as(LabeledExprListSyntax.self) ?? [] {
                switch argument.label?.text {
                case "inverse":
                    if argument.expression.is(NilLiteralExprSyntax.self) { continue }
                    guard let literal = argument.expression.as(StringLiteralExprSyntax.self),
                          let text = literal.representedLiteralValue, !text.isEmpty else {
                        context.report(.inverseNotAName(name), at: Syntax(argument.expression))
                        return nil
                    }
                    property.inverse = text
                case "deleteRule":
                    property.deleteRule = argument.expression.trimmedDescription
                        .split(separator: ".").last.map(String.init)
                case "minimumModelCount": property.minCount = argument.expression.trimmedDescription
                case "maximumModelCount": property.maxCount = argument.expression.trimmedDescription
                default: break
                }
            }
        }
        if let validated = variable.attribute(named: "Validated") {
            guard kind.isAttribute else {
                context.report(.validatedRelationship(name), at: Syntax(validated))
                return nil
            }
            let rules = validated.arguments?.as(LabeledExprListSyntax.self)?.map(\.expression.trimmedDescription) ?? []
            property.validation = rules.joined(separator: ", ")
        }
        if let renamed = variable.attribute(named: "Renamed") {
            guard let argument = renamed.arguments?.as(LabeledExprListSyntax.self)?.first,
                  let literal = argument.expression.as(StringLiteralExprSyntax.self),
                  let text = literal.representedLiteralValue, !text.isEmpty else {
                context.report(.renamedNotAName(name), at: Syntax(renamed))
                return nil
            }
            property.renamedFrom = text
        }
        if kind.isAttribute, let initializer = binding.initializer?.value, isLiteral(initializer) {
            property.defaultLiteral = initializer.trimmedDescription
        }
        if property.isUnique, !kind.isAttribute {
            context.report(.uniqueRelationship(name), at: Syntax(variable))
            return nil
        }
        return property
    }

    /// Whether an initial value is a plain literal (a number, possibly negative, a string
    /// without interpolation, a boolean): what can be an attribute's `defaultValue`.
    static func isLiteral(_ expression: ExprSyntax) -> Bool {
        if expression.is(IntegerLiteralExprSyntax.self) || expression.is(FloatLiteralExprSyntax.self)
            || expression.is(BooleanLiteralExprSyntax.self) { return true }
        if let string = expression.as(StringLiteralExprSyntax.self) { return string.representedLiteralValue != nil }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return prefix.expression.is(IntegerLiteralExprSyntax.self) || prefix.expression.is(FloatLiteralExprSyntax.self)
        }
        return false
    }

    /// The kind a declared type stands for, or nil after reporting why it cannot be stored.
    static func classify(_ type: TypeSyntax, name: String, in context: some DiagnosticSink) -> PropertyKind? {
        if let wrapped = optionalWrapped(type) {
            let text = wrapped.trimmedDescription
            if let attribute = attributeTypes[text] { return .attribute(type: attribute, isOptional: true) }
            if knownValueTypes.contains(lastComponent(text)) {
                context.report(.unsupportedType(name, type: type.trimmedDescription), at: Syntax(type))
                return nil
            }
            if collectionElement(wrapped) != nil {
                context.report(.optionalToMany(name, type: type.trimmedDescription), at: Syntax(type))
                return nil
            }
            if isPlainTypeName(wrapped) { return .toOne(destination: lastComponent(text)) }
            context.report(.unsupportedType(name, type: type.trimmedDescription), at: Syntax(type))
            return nil
        }
        let text = type.trimmedDescription
        if let attribute = attributeTypes[text] { return .attribute(type: attribute, isOptional: false) }
        if let (element, isOrdered) = collectionElement(type) {
            let elementText = element.trimmedDescription
            guard isPlainTypeName(element), attributeTypes[elementText] == nil else {
                context.report(.collectionOfValues(name, type: text), at: Syntax(type))
                return nil
            }
            return .toMany(destination: lastComponent(elementText), isOrdered: isOrdered)
        }
        if isPlainTypeName(type), !knownValueTypes.contains(lastComponent(text)) {
            context.report(.nonOptionalToOne(name, type: text), at: Syntax(type))
            return nil
        }
        context.report(.unsupportedType(name, type: text), at: Syntax(type))
        return nil
    }

    /// Value types a user might expect to store that Swell does not: named in the error rather
    /// than taken for an entity.
    static let knownValueTypes: Set<String> = [
        "Float", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "Data", "Decimal", "URL", "UUID", "Character", "Float80", "CGFloat",
    ]

    static func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
        if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return implicit.wrappedType }
        if let (name, argument) = genericStandardType(type), name == "Optional" { return argument }
        return nil
    }

    /// The element of `Set<X>` (unordered) or `[X]` / `Array<X>` (ordered).
    static func collectionElement(_ type: TypeSyntax) -> (TypeSyntax, Bool)? {
        if let array = type.as(ArrayTypeSyntax.self) { return (array.element, true) }
        if let (name, element) = genericStandardType(type), name == "Set" || name == "Array" { return (element, name == "Array") }
        return nil
    }

    /// `Optional<X>`, `Set<X>`, `Array<X>`, also written `Swift.Optional<X>`: the name and X.
    static func genericStandardType(_ type: TypeSyntax) -> (String, TypeSyntax)? {
        let name: String, clause: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            (name, clause) = (identifier.name.text, identifier.genericArgumentClause)
        } else if let member = type.as(MemberTypeSyntax.self), member.baseType.trimmedDescription == "Swift" {
            (name, clause) = (member.name.text, member.genericArgumentClause)
        } else {
            return nil
        }
        guard ["Optional", "Set", "Array"].contains(name), let clause, clause.arguments.count == 1,
              let argument = clause.arguments.first?.argument.as(TypeSyntax.self) else { return nil }
        return (name, argument)
    }

    /// A relationship's destination type as written, for the typed accessors.
    static func destinationType(of type: TypeSyntax) -> String? {
        if let wrapped = optionalWrapped(type) { return wrapped.trimmedDescription }
        return collectionElement(type)?.0.trimmedDescription
    }

    /// What the store takes as an attribute or relationship name: `[A-Za-z_][A-Za-z0-9_]*`, not
    /// starting with `_`, `swell_` or `sqlite_` (the rule `ManagedObjectModel.isValidName` checks
    /// at run time; told here at compile time).
    static func isValidStoredName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else { return false }
        let lowered = name.lowercased()
        return !lowered.hasPrefix("swell_") && !lowered.hasPrefix("sqlite_")
    }

    static func isPlainTypeName(_ type: TypeSyntax) -> Bool {
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.genericArgumentClause == nil }
        if let member = type.as(MemberTypeSyntax.self) { return member.genericArgumentClause == nil }
        return false
    }

    static func lastComponent(_ text: String) -> String {
        text.split(separator: ".").last.map(String.init) ?? text
    }
}

extension PropertyKind {
    var isAttribute: Bool {
        if case .attribute = self { return true }
        return false
    }

    var destination: String? {
        switch self {
        case .attribute: nil
        case .toOne(let destination), .toMany(let destination, _): destination
        }
    }
}
