import SwellPipelineTestSupport

/// What the store of a `RandomPipeline` should hold, computed from the records alone
/// by the contract's rules, as plainly as possible (no store, no pipeline code):
///
/// - a record or nested object upserts its entity by key: the attributes its mapping
///   maps take the record's values (absent or null: nil), the others keep theirs;
/// - each mapped relationship then holds exactly the elements listed (in order;
///   null or absent: none); the inverse follows, and an object put in a to-many
///   whose inverse is a to-one leaves its previous owner;
/// - at the end of a source's run, an object removed from a `cascade` relationship
///   that no object holds through it any more is deleted, with what it owns through
///   its own cascade relationships; a deleted object leaves every relationship.
struct GraphModel {
    struct Object {
        var attributes: [String: String]
        var links: [String: [String]]
    }

    let pipeline: RandomPipeline
    /// Entity index → key → object.
    private(set) var objects: [Int: [String: Object]] = [:]
    /// Relationships removed from during this source's run: (relationship index, member key).
    private var removed: [(Int, String)] = []

    init(pipeline: RandomPipeline) {
        self.pipeline = pipeline
    }

    /// Applies `main`'s records in order, then its cascade deletions.
    mutating func applyMain(_ records: [JSON]) {
        apply(records, entity: 0, plans: pipeline.plans)
    }

    /// Applies `side`'s records (every attribute of its entity, and its own nested mappings).
    mutating func applySide(_ records: [JSON]) {
        guard let entity = pipeline.side else { return }
        apply(records, entity: entity, plans: pipeline.sidePlans)
    }

    /// One source's run: its records in order (a source maps every attribute of its own
    /// entity), then the deletions of what its cascade relationships let go of.
    private mutating func apply(_ records: [JSON], entity: Int, plans: [RandomPipeline.Plan]) {
        let all = ["id"] + pipeline.entities[entity].attributes.map(\.name)
        for record in records { _ = upsert(record, entity: entity, mapped: all, plans: plans) }
        for (relationship, key) in removed {
            let owner = pipeline.relationships[relationship]
            guard owner.rule == "cascade", objects[owner.destination]?[key] != nil,
                  !(objects[owner.entity] ?? [:]).values.contains(where: { $0.links[owner.name]?.contains(key) == true }) else { continue }
            delete(owner.destination, key)
        }
        removed = []
    }

    private mutating func upsert(_ node: JSON, entity: Int, mapped: [String], plans: [RandomPipeline.Plan]) -> String {
        let key = node.member("id")!.described
        var object = objects[entity]?[key] ?? newObject(entity, key: key)
        for name in mapped where name != "id" { object.attributes[name] = node.member(name)?.described ?? "nil" }
        objects[entity, default: [:]][key] = object
        for plan in plans {
            var members: [String] = []
            let elements: [JSON]
            switch node.member(plan.relationship.name) {
            case .array(let list)?: elements = list
            case .object(let members)?: elements = [.object(members)]
            default: elements = []
            }
            for element in elements {
                let member = upsert(element, entity: plan.relationship.destination, mapped: plan.mapped, plans: plan.children)
                if !members.contains(member) { members.append(member) }
            }
            setLinks(of: key, pipeline.relationships.firstIndex { $0.name == plan.relationship.name }!, to: members)
        }
        return key
    }

    private mutating func setLinks(of key: String, _ index: Int, to members: [String]) {
        let relationship = pipeline.relationships[index]
        let (source, destination) = (relationship.entity, relationship.destination)
        let old = objects[source]![key]!.links[relationship.name] ?? []
        objects[source]![key]!.links[relationship.name] = members
        for member in old where !members.contains(member) {
            removed.append((index, member))
            if let inverse = relationship.inverse { objects[destination]![member]!.links[inverse]?.removeAll { $0 == key } }
        }
        guard let inverse = relationship.inverse else { return }
        for member in members where !old.contains(member) {
            if relationship.inverseToMany {
                objects[destination]![member]!.links[inverse, default: []].append(key)
            } else {
                // A to-one inverse: the member leaves its previous owner.
                if let previous = objects[destination]![member]!.links[inverse]?.first, previous != key {
                    objects[source]![previous]!.links[relationship.name]?.removeAll { $0 == member }
                }
                objects[destination]![member]!.links[inverse] = [key]
            }
        }
    }

    private func newObject(_ entity: Int, key: String) -> Object {
        var attributes = ["id": key]
        for attribute in pipeline.entities[entity].attributes { attributes[attribute.name] = "nil" }
        var links: [String: [String]] = [:]
        for relationship in pipeline.relationships {
            if relationship.entity == entity { links[relationship.name] = [] }
            if relationship.destination == entity, let inverse = relationship.inverse { links[inverse] = [] }
        }
        return Object(attributes: attributes, links: links)
    }

    /// Deletes an object, what its cascade relationships hold (transitively), and every link to it.
    private mutating func delete(_ entity: Int, _ key: String) {
        guard let object = objects[entity]?.removeValue(forKey: key) else { return }
        for relationship in pipeline.relationships where relationship.entity == entity && relationship.rule == "cascade" {
            for member in object.links[relationship.name] ?? [] { delete(relationship.destination, member) }
        }
        for relationship in pipeline.relationships {
            if relationship.destination == entity { unlink(key, in: relationship.entity, relationship.name) }
            if relationship.entity == entity, let inverse = relationship.inverse { unlink(key, in: relationship.destination, inverse) }
        }
    }

    private mutating func unlink(_ key: String, in entity: Int, _ name: String) {
        for other in (objects[entity] ?? [:]).keys {
            objects[entity]![other]!.links[name]?.removeAll { $0 == key }
        }
    }

    /// The model as the store graph shows it (unordered relationships sorted).
    var graph: StoredGraph {
        var graph = StoredGraph()
        for (entity, byKey) in objects {
            let name = pipeline.entities[entity].name
            for (key, object) in byKey {
                var properties = object.attributes
                for (link, members) in object.links {
                    let ordered = pipeline.relationships.contains { $0.entity == entity && $0.name == link && $0.ordered }
                    properties[link] = StoredGraph.list(ordered ? members : members.sorted())
                }
                graph.objects[name, default: [:]][key] = properties
            }
        }
        return graph
    }
}
