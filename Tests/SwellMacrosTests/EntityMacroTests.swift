import SwellMacros
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

/// `@Unique` and `#Unique` share a name; the compiler tells them apart by role, the test
/// expansion system by name only, so one type plays both here.
private enum UniqueMarker: PeerMacro, DeclarationMacro {
    static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                          in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
    static func expansion(of node: some FreestandingMacroExpansionSyntax,
                          in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}

/// What `@Entity` generates, and what it refuses at compile time with the line it names.
@Suite struct EntityMacroTests {
    private static let macros: [String: MacroSpec] = [
        "Entity": MacroSpec(type: EntityMacro.self, conformances: ["PersistentModel"]),
        "_EntityProperty": MacroSpec(type: EntityPropertyMacro.self),
        "Unique": MacroSpec(type: UniqueMarker.self),
        "Relationship": MacroSpec(type: EntityMarkerMacro.self),
        "Transient": MacroSpec(type: EntityMarkerMacro.self),
        "Validated": MacroSpec(type: EntityMarkerMacro.self),
        "Renamed": MacroSpec(type: EntityMarkerMacro.self),
    ]

    /// The expanded source, and the diagnostics as "line: message".
    private func expand(_ source: String) -> (source: String, diagnostics: [String]) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext(sourceFiles: [file: .init(moduleName: "Journal", fullFilePath: "Journal.swift")])
        let expanded = file.expand(macroSpecs: Self.macros, contextGenerator: { _ in context }, indentationWidth: .spaces(4))
        let converter = SourceLocationConverter(fileName: "Journal.swift", tree: file)
        let diagnostics = context.diagnostics.map { "\($0.location(converter: converter).line): \($0.message)" }
        return (expanded.description, diagnostics)
    }

    @Test func anEntityGetsItsDescriptionAccessorsAndConformance() {
        let (source, diagnostics) = expand("""
            @Entity final class JournalEntry {
                @Unique var id: Int
                var date: Date
                var rating: Int?
                var isFavourite: Bool = false
                @Relationship(inverse: "entries", deleteRule: .cascade) var spot: Spot?
                @Relationship(inverse: "entries") var tags: [Tag] = []
                @Transient var scratch: Float = 0
                var computed: Int { id * 2 }
                init(id: Int, date: Date) { self.id = id; self.date = date }
            }
            """)
        #expect(diagnostics == [])
        for generated in [
            "let _$backing = SwellStore.EntityBacking()",
            "static let entityDescription = SwellStore.EntityDescription(",
            #"SwellStore.AttributeDescription(name: "id", type: .integer, isOptional: false)"#,
            #"SwellStore.AttributeDescription(name: "date", type: .date, isOptional: false)"#,
            #"SwellStore.AttributeDescription(name: "rating", type: .integer, isOptional: true)"#,
            #"SwellStore.AttributeDescription(name: "isFavourite", type: .boolean, isOptional: false, defaultValue: false)"#,
            #"SwellStore.RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries", deleteRule: .cascade)"#,
            #"SwellStore.RelationshipDescription(name: "tags", destination: "Tag", toMany: true, isOrdered: true, inverse: "entries", deleteRule: .nullify)"#,
            #"uniquenessConstraint: ["id"]"#,
            "init(backing object: SwellStore.ManagedObject)",
            "init(context: SwellStore.ManagedObjectContext)",
            // Non-optional attributes without an initial value: the compiler checks initialisers set them.
            "@storageRestrictions(initializes: _$set_date, accesses: _$backing)",
            "private var _$set_date: SwellStore._EntityValueSet",
            "@storageRestrictions(accesses: _$backing)",
            #"_$backing.attribute(forKey: "rating", as: (Int?).self)"#,
            #"_$backing.toOne(forKey: "spot", as: Spot.self)"#,
            #"_$backing.orderedToMany(forKey: "tags", as: Tag.self)"#,
            #"if keyPath == \JournalEntry.rating as AnyKeyPath {"#,
            "extension JournalEntry: SwellStore.PersistentModel {",
        ] {
            #expect(source.contains(generated), "\(generated)")
        }
        #expect(!source.contains(#"name: "scratch""#) && !source.contains(#"name: "computed""#))
        #expect(!source.contains("_$set_isFavourite"), "an attribute with an initial value needs no initialisation check")
        #expect(!source.contains("init() {"), "the class declares its own initialiser")
    }

    @Test func aClassWithOnlyOptionalValuesAndNoInitialiserGetsAnEmptyOne() {
        let (source, diagnostics) = expand("""
            @Entity public final class Note {
                var text: String?
            }
            """)
        #expect(diagnostics == [])
        #expect(source.contains("public init() {"))
        #expect(source.contains("public static let entityDescription"))
    }

    @Test(arguments: [
        ("@Entity struct Spot { var name: String }", "1: @Entity applies to a final class"),
        ("@Entity class Spot {\n    var name: String\n}", "1: @Entity class 'Spot' must be final"),
        ("@Entity final class Spot {\n    var colour: Float\n}", "2: 'colour' has type 'Float', which cannot be stored"),
        ("@Entity final class Spot {\n    var name: String\n    var labels: [String] = []\n}", "3: 'labels' is '[String]': a collection of values cannot be stored"),
        ("@Entity final class Spot {\n    var name: String\n    var region: Region\n}", "3: 'region' is 'Region': a to-one relationship must be optional"),
        ("@Entity final class Spot {\n    var name: String\n    @Relationship(inverse: \"home\") var home: Region?\n    var away: Region?\n}",
         "4: relationship 'away' to 'Region' needs its inverse named (2 relationships lead to Region)"),
        ("@Entity final class Spot {\n    var name: String\n    var parent: Spot?\n}", "3: relationship 'parent' to 'Spot' needs its inverse named (it leads to its own class)"),
        ("@Entity final class Spot {\n    var name: String\n    @Relationship(inverse: \"spot\") var visits: Set<Visit>?\n}", "3: 'visits' is 'Set<Visit>?': a to-many relationship is never nil"),
        ("@Entity final class Spot {\n    let name: String\n}", "2: 'name' is a 'let'"),
        ("@Entity final class Spot {\n    var name = \"\"\n}", "2: 'name' needs a type annotation"),
        ("@Entity final class Spot {\n    @Unique var name: String\n    @Unique var code: Int\n}", "3: 'Spot' has one uniqueness constraint already"),
        ("@Entity final class Spot {\n    var name: String\n    #Unique<Spot>([\\.nope])\n}", "1: #Unique names 'nope', which is not a stored attribute"),
        ("@Entity final class Spot {\n    @Relationship(inverse: \"x\") var name: String\n}", "2: 'name' is an attribute: @Relationship applies"),
        ("@Entity final class Spot {\n    @Relationship(inverse: name) var region: Region?\n    var name: String\n}", "2: the inverse of 'region' must be a string literal"),
        ("@Entity final class Spot {\n    @Transient var cache: [String: Int] = [:]\n}", "1: @Entity class 'Spot' has no stored attributes"),
        ("@Entity final class Spot {\n    var name: String\n    var token: UUID?\n}", "3: 'token' has type 'UUID?', which cannot be stored"),
        ("@Entity final class Spot {\n    var name: String {\n        didSet { print(name) }\n    }\n}", "2: 'name' has willSet/didSet"),
        ("@Entity final class Spot {\n    lazy var name: String = \"\"\n}", "2: 'name' is lazy"),
        ("@Entity final class Spot {\n    @Clamped var rating: Int = 0\n}", "2: 'rating' has @Clamped"),
        ("@Entity final class Spot {\n    var name: String\n    @Transient var cache: [Int]\n}", "3: @Transient 'cache' needs an initial value"),
        ("@Entity final class Spot<T> {\n    var name: String\n}", "1: @Entity class 'Spot' cannot be generic"),
        ("@Entity final class Spot {\n    var _name: String\n}", "2: '_name' cannot be stored under this name"),
        ("@Entity final class Spot {\n    var url: String\n    var URL: String\n}", "3: 'url' and 'URL' differ only in case"),
        ("@Entity final class Spot {\n    @Renamed(from: oldName) var title: String\n}", "2: @Renamed on 'title' takes the property's earlier name"),
    ])
    func whatCannotBeStoredIsACompileError(source: String, expected: String) {
        let diagnostics = expand(source).diagnostics
        #expect(diagnostics.count == 1 && diagnostics.first?.hasPrefix(expected) == true, "\(diagnostics)")
    }

    /// Statement 57 in the typed layer: renaming identifiers and literal initial values as defaults.
    @Test func renamesAndLiteralDefaultsReachTheDescription() {
        let source = expand("""
            @Entity(renamedFrom: "Place") final class Spot {
                @Renamed(from: "title") var name: String
                var rating: Int = -2
                var note: String? = "none"
                var seen: Date = Date()
                @Renamed(from: "visits") @Relationship(inverse: "spot") var trips: Set<Visit> = []
            }
            """).source
        #expect(source.contains(#"SwellStore.AttributeDescription(name: "name", type: .string, isOptional: false, renamingIdentifier: "title")"#), "\(source)")
        #expect(source.contains(#"SwellStore.AttributeDescription(name: "rating", type: .integer, isOptional: false, defaultValue: -2)"#), "\(source)")
        #expect(source.contains(#"SwellStore.AttributeDescription(name: "note", type: .string, isOptional: true, defaultValue: "none")"#), "\(source)")
        // Not a literal: evaluated per object by the initial value, never a stored default.
        #expect(source.contains(#"SwellStore.AttributeDescription(name: "seen", type: .date, isOptional: false)"#), "\(source)")
        #expect(source.contains(#"deleteRule: .nullify, renamingIdentifier: "visits")"#), "\(source)")
        #expect(source.contains(#"renamingIdentifier: "Place""#), "\(source)")
    }

    @Test func spelledOutStandardTypesAndNestedDestinationsAreRead() {
        let (source, diagnostics) = expand("""
            @Entity final class Visit {
                var rating: Swift.Optional<Int>
                var count: Int!
                var `when`: Foundation.Date
                @Relationship(inverse: "visits") var spot: Beach.Spot?
                @Relationship(inverse: "visit") var notes: Swift.Set<Beach.Note> = []
                init(when: Date) { self.when = when }
            }
            """)
        #expect(diagnostics == [])
        for generated in [
            #"SwellStore.AttributeDescription(name: "rating", type: .integer, isOptional: true)"#,
            #"SwellStore.AttributeDescription(name: "count", type: .integer, isOptional: true)"#,
            #"_$backing.attribute(forKey: "count", as: (Int?).self)"#,
            #"SwellStore.AttributeDescription(name: "when", type: .date, isOptional: false)"#,
            #"SwellStore.RelationshipDescription(name: "spot", destination: "Spot", inverse: "visits", deleteRule: .nullify)"#,
            #"_$backing.toOne(forKey: "spot", as: Beach.Spot.self)"#,
            #"_$backing.toMany(forKey: "notes", as: Beach.Note.self)"#,
        ] {
            #expect(source.contains(generated), "\(generated)")
        }
    }

    @Test func rulesCountsAndTheClassValidationGoIntoTheDescription() {
        let (source, diagnostics) = expand("""
            @Entity final class Product {
                @Validated(.pattern("[A-Z]+"), .maxLength(8)) var sku: String
                @Validated(.minValue(1), .maxValue(5)) var rating: Int?
                @Relationship(inverse: "product", minimumModelCount: 2, maximumModelCount: 3) var parts: Set<Part> = []
                init(sku: String) { self.sku = sku }
                static func validateForInsert(_ product: Product) throws {}
                static func validateForDelete(_ product: Product) throws {}
                static func validateForUpdate() {}
            }
            """)
        #expect(diagnostics == [])
        for generated in [
            #"SwellStore.AttributeDescription(name: "sku", type: .string, isOptional: false, validation: [.pattern("[A-Z]+"), .maxLength(8)])"#,
            #"SwellStore.AttributeDescription(name: "rating", type: .integer, isOptional: true, validation: [.minValue(1), .maxValue(5)])"#,
            #"toMany: true, isOrdered: false, inverse: "product", deleteRule: .nullify, minCount: 2, maxCount: 3)"#,
            "description.validateForInsert = { object in",
            "try Product.validateForInsert(object.model(as: Product.self)!)",
            "description.validateForDelete = { object in",
            "try Product.validateForDelete(object.model(as: Product.self)!)",
        ] {
            #expect(source.contains(generated), "missing: \(generated)")
        }
        #expect(!source.contains("description.validateForUpdate"), "a method of another shape is not the entity's validation")
        let refused = expand("""
            @Entity final class Part {
                var label: String
                @Validated(.minValue(1)) @Relationship(inverse: "parts") var product: Product?
            }
            """)
        #expect(refused.diagnostics == ["3: 'product' is a relationship: @Validated applies to attributes (bound a to-many with @Relationship(minimumModelCount:maximumModelCount:))"])
    }

    @Test func aRelationshipMayLeaveItsInverseToTheOtherSide() {
        let (source, diagnostics) = expand("""
            @Entity final class Spot {
                var name: String
                var region: Region?
                var visits: Set<Visit>
                init(name: String) { self.name = name }
            }
            """)
        #expect(diagnostics == [])
        #expect(source.contains(#"SwellStore.RelationshipDescription(name: "region", destination: "Region", inverse: nil, deleteRule: .nullify)"#))
        // A to-many without an initial value gets no init accessor: initialisers need not set it.
        #expect(source.contains(#"get {\#n            _$backing.toMany(forKey: "visits", as: Visit.self)"#)
                || source.contains(#"_$backing.toMany(forKey: "visits", as: Visit.self)"#))
        #expect(!source.contains("_$set_visits"))
    }

    @Test func aTransientPropertyOfAnyTypeIsFine() {
        let (_, diagnostics) = expand("""
            @Entity final class Spot {
                var name: String
                @Transient var cache: [String: Int] = [:]
                init(name: String) { self.name = name }
            }
            """)
        #expect(diagnostics == [])
    }
}
