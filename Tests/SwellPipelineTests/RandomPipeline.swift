import SwellContexts
import SwellTestSupport
import SwellPipelineTestSupport

/// A random version-2 pipeline for the differential test: entities with a key and
/// optional attributes, relationships between them (to-one, to-many, ordered or not,
/// with or without an inverse, nullify / cascade / no_action), a source `main` that
/// maps the first entity's records with nested mappings (two levels deep, some of
/// them mapping only part of their entity's attributes), and a source `side` of one
/// nested entity, run after it: flat, or with nested mappings of its own.
///
/// Shapes the contract leaves open are kept out on purpose: an entity a cascade
/// relationship owns is reached only through it and always mapped whole (so a
/// deleted and re-listed child is the same whether the delete happened or not), a
/// many-to-many is ordered on one side at most, a to-one's inverse is unordered.
struct RandomPipeline {
    /// An attribute (every one optional except the key).
    struct Attribute { let name: String; let isText: Bool }

    /// A relationship as declared on `entity`; `inverse` is declared on the destination.
    struct Relationship {
        let name: String
        let entity: Int
        let destination: Int
        let toMany: Bool
        let ordered: Bool
        let inverse: String?
        let inverseToMany: Bool
        let rule: String
        /// A to-one inverse of a `cascade` to-many may be required: an owned child never goes without its parent.
        var inverseRequired = false
    }

    struct Entity {
        let name: String
        let textKey: Bool
        let attributes: [Attribute]
    }

    /// A nested mapping: a relationship, the destination's attributes it maps (the key
    /// always), and its own nested mappings.
    struct Plan {
        let relationship: Relationship
        let mapped: [String]
        let children: [Plan]
    }

    var entities: [Entity] = []
    var relationships: [Relationship] = []
    var plans: [Plan] = []
    /// The entity of the source `side`, if the pipeline has one, and its nested mappings (often none: a flat source).
    var side: Int?
    var sidePlans: [Plan] = []
    /// Only shapes the batch path writes (see `init`).
    let shallow: Bool

    /// `shallow`: only the shapes the batch path writes (`GraphShape`): mappings one level
    /// deep, to-ones, unordered to-manys (a to-one's inverse, if any, a to-many) and to-manys
    /// whose inverse is a to-one (ordered or not: their objects point at the records), no `cascade`.
    init(using random: inout SeededGenerator, shallow: Bool = false) {
        self.shallow = shallow
        let names = ["Account", "Bin", "Card", "Deck", "Item", "Post", "Zone", "Lane"].shuffled(using: &random)
        let count = Int.random(in: 3...5, using: &random)
        for index in 0..<count {
            let attributes = (1...Int.random(in: 1...3, using: &random)).map { Attribute(name: "a\($0)", isText: Bool.random(using: &random)) }
            entities.append(Entity(name: names[index], textKey: Bool.random(using: &random), attributes: attributes))
        }
        // Forward relationships go from an entity to a later one; an owned (cascade) destination has only that one.
        var owned = Set<Int>()
        var targeted = Set<Int>()
        var number = 0
        for source in 0..<count {
            for destination in (source + 1)..<max(source + 1, count) where Int.random(in: 0..<3, using: &random) > 0 {
                guard !owned.contains(destination) else { continue }
                number += 1
                let toMany = Int.random(in: 0..<3, using: &random) > 0
                var inverseKind = Int.random(in: 0..<3, using: &random)   // 0: none, 1: a to-one (of a to-many), 2: a to-many
                if shallow && (toMany ? inverseKind == 2 : inverseKind == 1) { inverseKind = 0 }
                let hasInverse = inverseKind != 0
                let inverseToMany = toMany ? inverseKind == 2 : true
                let ordered = toMany && (!shallow || inverseKind == 1) && Bool.random(using: &random)
                var rule = "nullify"
                if !shallow && !targeted.contains(destination) && source < destination && Int.random(in: 0..<3, using: &random) == 0 {
                    rule = "cascade"
                } else if !hasInverse && Int.random(in: 0..<4, using: &random) == 0 {
                    rule = "no_action"
                }
                if rule == "cascade" { owned.insert(destination) }
                targeted.insert(destination)
                var relationship = Relationship(name: "r\(number)", entity: source, destination: destination, toMany: toMany, ordered: ordered,
                                                inverse: hasInverse ? "back\(number)" : nil, inverseToMany: inverseToMany, rule: rule)
                relationship.inverseRequired = rule == "cascade" && toMany && hasInverse && !inverseToMany && Bool.random(using: &random)
                relationships.append(relationship)
            }
        }
        plans = makePlans(of: 0, depth: 0, owned: owned, using: &random)
        let sharable = Set(planned(plans)).subtracting(owned)
        side = sharable.sorted().randomElement(using: &random)
        if let side, Bool.random(using: &random) { sidePlans = makePlans(of: side, depth: 1, owned: owned, using: &random) }
    }

    private func makePlans(of entity: Int, depth: Int, owned: Set<Int>, using random: inout SeededGenerator) -> [Plan] {
        guard depth < (shallow ? 1 : 2) else { return [] }
        return relationships.filter { $0.entity == entity && Int.random(in: 0..<5, using: &random) > 0 }.map { relationship in
            let destination = entities[relationship.destination]
            let mapped = owned.contains(relationship.destination)
                ? destination.attributes.map(\.name)
                : destination.attributes.map(\.name).filter { _ in Int.random(in: 0..<3, using: &random) > 0 }
            return Plan(relationship: relationship, mapped: ["id"] + mapped,
                        children: makePlans(of: relationship.destination, depth: depth + 1, owned: owned, using: &random))
        }
    }

    private func planned(_ plans: [Plan]) -> [Int] {
        plans.flatMap { [$0.relationship.destination] + planned($0.children) }
    }

    /// The pipeline file; pages come from `base` (`<base>/main/1`, `<base>/side/1`).
    func yaml(base: String) -> String {
        var lines = ["version: 2", "name: differential", "entities:"]
        for (index, entity) in entities.enumerated() {
            lines.append("  \(entity.name):")
            lines.append("    key: [id]")
            let attributes = ["id: \(entity.textKey ? "string" : "integer")"] + entity.attributes.map { "\($0.name): \($0.isText ? "string" : "integer")?" }
            lines.append("    attributes: { \(attributes.joined(separator: ", ")) }")
            var declared: [String] = []
            for relationship in relationships where relationship.entity == index {
                var parts = ["to: \(entities[relationship.destination].name)"]
                if relationship.toMany { parts.append("many: true") }
                if relationship.ordered { parts.append("ordered: true") }
                if let inverse = relationship.inverse { parts.append("inverse: \(inverse)") }
                if relationship.rule != "nullify" { parts.append("delete: \(relationship.rule)") }
                declared.append("\(relationship.name): { \(parts.joined(separator: ", ")) }")
            }
            for relationship in relationships where relationship.destination == index {
                guard let inverse = relationship.inverse else { continue }
                var parts = ["to: \(entities[relationship.entity].name)", "inverse: \(relationship.name)"]
                if relationship.inverseToMany { parts.append("many: true") }
                if relationship.inverseRequired { parts.append("required: true") }
                declared.append("\(inverse): { \(parts.joined(separator: ", ")) }")
            }
            if !declared.isEmpty { lines.append("    relationships: { \(declared.joined(separator: ", ")) }") }
        }
        lines.append("sources:")
        func source(_ name: String, entity: Int, plans: [Plan]) {
            lines.append("  - name: \(name)")
            lines.append("    entity: \(entities[entity].name)")
            lines.append("    url: \"\(base)/\(name)/1\"")
            lines.append("    records: data")
            lines.append("    paginate: { next: next }")
            if !plans.isEmpty {
                lines.append("    fields:")
                for plan in plans { lines.append("      \(plan.relationship.name): \(mapping(plan))") }
            }
        }
        source("main", entity: 0, plans: plans)
        if let side { source("side", entity: side, plans: sidePlans) }
        return lines.joined(separator: "\n") + "\n"
    }

    private func mapping(_ plan: Plan) -> String {
        let fields = plan.mapped.map { "\($0): \($0)" } + plan.children.map { "\($0.relationship.name): \(mapping($0))" }
        return "{ path: \(plan.relationship.name), fields: { \(fields.joined(separator: ", ")) } }"
    }

    /// The text of key number `number` of `entity`, as JSON.
    func key(_ entity: Int, _ number: Int) -> JSON {
        entities[entity].textKey ? .text("k\(number)") : .integer(number)
    }
}

/// A JSON value the test writes out itself, member order kept.
indirect enum JSON: Equatable {
    case null
    case integer(Int)
    case text(String)
    case array([JSON])
    case object([(String, JSON)])

    static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.text == rhs.text }

    var text: String {
        switch self {
        case .null: "null"
        case .integer(let value): "\(value)"
        case .text(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { "\"\($0.0)\":\($0.1.text)" }.joined(separator: ",") + "}"
        }
    }

    /// The value as the store graph describes it.
    var described: String {
        switch self {
        case .null, .array, .object: "nil"
        case .integer(let value): "\(value)"
        case .text(let value): "'\(value)'"
        }
    }

    func member(_ name: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == name }?.1
    }
}
