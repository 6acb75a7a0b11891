import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts

/// Where a relationship's link is written when a nested record is upserted
/// (the store keeps each kind differently, see Store guarantees 35).
enum NestedLinkKind: Sendable {
    /// A to-one: the parent's column `column` holds the child's ID.
    case toOne(column: Int)
    /// A to-many kept in the parent's join table: its column lists the children.
    case joinOwner(column: Int, ordered: Bool)
    /// A to-many whose inverse is a to-one: each child's column `column` names the parent
    /// (and for an ordered one, its column `order` keeps its position); children no longer
    /// listed are unlinked.
    case inverseToOne(column: Int, order: Int?)
    /// The other side of a many-to-many: each child's join column `column` lists the parent.
    case joinInverse(column: Int)
}

/// How one nested mapping is written: the destination as the store keeps it, the
/// mapper of its elements, the link kind, and its own nested mappings.
struct NestedPlan: Sendable {
    let mapping: NestedMapping
    let relationship: RelationshipDescription
    let entity: EntityDescription
    let kind: NestedLinkKind
    let mapper: ElementMapper
    let children: [NestedPlan]
    /// Relationship columns of `entity` that some plan below it writes (the others keep their stored value).
    let writtenColumns: Set<Int>

    init(mapping: NestedMapping, parent: EntityDescription, pipelineEntities: [PipelineEntity],
         storage: (String) throws -> EntityDescription, dates: DateFormat) throws {
        self.mapping = mapping
        guard let relationship = parent.relationship(named: mapping.relationship),
              let pipelineEntity = pipelineEntities.first(where: { $0.name == mapping.destination }) else {
            throw PipelineError(.other, "relationship \(parent.name).\(mapping.relationship) is not in the model")
        }
        self.relationship = relationship
        entity = try storage(mapping.destination)
        kind = try Self.kind(of: relationship, parent: parent, destination: entity)
        mapper = ElementMapper(entity: entity, attributes: pipelineEntity.attributes, fields: mapping.fields, dates: dates)
        let destination = entity
        children = try mapping.nested.map {
            try NestedPlan(mapping: $0, parent: destination, pipelineEntities: pipelineEntities, storage: storage, dates: dates)
        }
        writtenColumns = Self.columns(writtenBy: children)
    }

    /// The parent's (or the children's) column a relationship is kept in.
    static func kind(of relationship: RelationshipDescription, parent: EntityDescription,
                     destination: EntityDescription) throws -> NestedLinkKind {
        let what = "\(parent.name).\(relationship.name)"
        if let column = parent.attributes.firstIndex(where: { $0.name == relationship.name }) {
            if parent.attributes[column].destination != nil { return .toOne(column: column) }
            if parent.attributes[column].join != nil { return .joinOwner(column: column, ordered: relationship.isOrdered) }
        }
        guard let inverse = relationship.inverse, let column = destination.attributes.firstIndex(where: { $0.name == inverse }) else {
            throw PipelineError(.other, "relationship \(what) has no storage the pipeline can write")
        }
        if destination.attributes[column].destination != nil {
            let order = destination.attributes.firstIndex { $0.orderOf == inverse }
            return .inverseToOne(column: column, order: order)
        }
        return .joinInverse(column: column)
    }

    /// The relationship columns of a parent that these plans write (to-ones and owned join tables).
    static func columns(writtenBy plans: [NestedPlan]) -> Set<Int> {
        Set(plans.compactMap { plan -> Int? in
            switch plan.kind {
            case .toOne(let column), .joinOwner(let column, _): column
            case .inverseToOne, .joinInverse: nil
            }
        })
    }
}

/// A record or nested element mapped onto its entity (values by attribute index of
/// the store's entity, relationship columns still empty), with its nested elements.
struct MappedNode: Sendable {
    var values: [StoreValue]
    var key: [StoreValue]
    /// The attribute indices the mapping gave a value (the others are not written to a stored object).
    var mapped: [Int]
    /// Per plan (in the plan's order): the mapped elements, or nil when the path was
    /// absent or null (a to-one becomes nil, a to-many empty).
    var links: [[MappedNode]?]
}

/// Maps the elements of one nested mapping: each attribute its `fields` name from
/// that path in the element (`.` for the element itself), converted by type; an
/// attribute `fields` does not name, by its own name when the element has that
/// member. What an element does not map is left as it is on a stored object
/// (a nested `{id, name}` of an author keeps the author's country).
struct ElementMapper: Sendable {
    let entity: EntityDescription
    let paths: [[String]]
    let dates: [DateFormat]
    let keyIndices: [Int]
    let attributeCount: Int
    /// Whether `fields` names the attribute (then it is always mapped: absent is null).
    let named: [Bool]
    /// The attributes' rules.
    let rules: AttributeRules

    init(entity: EntityDescription, attributes: [AttributeDescription], fields: [String: FieldSpec], dates: DateFormat) {
        self.entity = entity
        rules = AttributeRules(entity)
        attributeCount = attributes.count
        paths = attributes.map { fields[$0.name]?.path ?? [$0.name] }
        self.dates = attributes.map { fields[$0.name]?.dateFormat ?? dates }
        named = attributes.map { fields[$0.name] != nil }
        keyIndices = entity.keyIndices
    }

    /// The element's values (unmapped and relationship columns null) and the indices it
    /// maps, or why it is bad; `place` names the element (`labels[2]`) in messages.
    func map(_ element: JSONValue, place: String, patterns: DatePatterns) -> Result<(values: [StoreValue], mapped: [Int]), BadRecord> {
        var values = [StoreValue](repeating: .null, count: entity.attributes.count)
        var mapped: [Int] = []
        for index in 0..<attributeCount {
            let path = paths[index]
            let raw: JSONValue
            if path == ["."] {
                raw = element
            } else {
                guard case .object = element else {
                    // An element that is a value (a key given for a to-one) maps what `fields` names only.
                    if !named[index] { continue }
                    return .failure(BadRecord(attribute: place, message: "\(place): expected an object with \(path.joined(separator: ".")), got \(element.kindDescription)"))
                }
                let found = element.value(at: path)
                if found == nil && !named[index] { continue }
                raw = found ?? .null
            }
            let attribute = entity.attributes[index]
            let field = path == ["."] ? place : "\(place).\(path.joined(separator: "."))"
            switch ValueConverter.convert(raw, to: attribute.type, dates: dates[index], patterns: patterns) {
            case .success(let value):
                if value.isNull && !attribute.isOptional {
                    let what = keyIndices.contains(index) ? "the key attribute" : "a required value"
                    return .failure(BadRecord(attribute: field, message: "\(field): \(what) \(entity.name).\(attribute.name) is missing"))
                }
                if let breach = rules.breach(attribute: index, value: value, raw: raw) {
                    return .failure(BadRecord(attribute: field, message: "\(field): \(entity.name).\(attribute.name): \(breach)"))
                }
                values[index] = value
                mapped.append(index)
            case .failure(let failure):
                return .failure(BadRecord(attribute: field, message: "\(field): \(failure.message)"))
            }
        }
        return .success((values, mapped))
    }
}

extension NestedPlan {
    /// Maps a record's (or element's) nested objects for `plans`, recursively.
    static func mapLinks(of record: JSONValue, plans: [NestedPlan], place: String,
                         patterns: DatePatterns) -> Result<[[MappedNode]?], BadRecord> {
        var links: [[MappedNode]?] = []
        for plan in plans {
            let name = place.isEmpty ? plan.mapping.path.joined(separator: ".") : "\(place).\(plan.mapping.path.joined(separator: "."))"
            let nested: JSONValue? = {
                guard case .object = record else { return nil }
                return record.value(at: plan.mapping.path)
            }()
            guard let nested, nested != .null else {
                links.append(nil)
                continue
            }
            var elements: [(JSONValue, String)] = []
            if plan.relationship.isToMany {
                guard case .array(let array) = nested else {
                    return .failure(BadRecord(attribute: name, message: "\(name): expected an array for the to-many \(plan.relationship.name), got \(nested.kindDescription)"))
                }
                elements = array.enumerated().map { ($1, "\(name)[\($0)]") }
            } else {
                // A to-one given by its key (`{ key: … }`) is the key's value itself.
                if plan.mapping.byKey != nil, case .object = nested {
                    return .failure(BadRecord(attribute: name, message: "\(name): expected the key of the \(plan.relationship.name) (a value), got an object"))
                }
                guard plan.mapping.byKey != nil || { if case .object = nested { true } else { false } }() else {
                    return .failure(BadRecord(attribute: name, message: "\(name): expected an object for the to-one \(plan.relationship.name), got \(nested.kindDescription)"))
                }
                elements = [(nested, name)]
            }
            var nodes: [MappedNode] = []
            for (element, elementPlace) in elements {
                switch plan.node(element, place: elementPlace, patterns: patterns) {
                case .success(let node): nodes.append(node)
                case .failure(let bad): return .failure(bad)
                }
            }
            links.append(nodes)
        }
        return .success(links)
    }

    /// One element mapped with its own nested objects.
    func node(_ element: JSONValue, place: String, patterns: DatePatterns) -> Result<MappedNode, BadRecord> {
        switch mapper.map(element, place: place, patterns: patterns) {
        case .failure(let bad):
            return .failure(bad)
        case .success(let (values, mapped)):
            switch Self.mapLinks(of: element, plans: children, place: place, patterns: patterns) {
            case .failure(let bad): return .failure(bad)
            case .success(let links):
                return .success(MappedNode(values: values, key: mapper.keyIndices.map { values[$0] }, mapped: mapped, links: links))
            }
        }
    }
}
