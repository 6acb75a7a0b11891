import SwellContexts
import Yams

/// Version 2 of the pipeline file (Pipeline file reference, "Nested records and
/// relationships"): entities' relationships, nested mappings under a source's
/// fields, and key-path export columns. Each rule's error names its place.
extension PipelineFileReader {
    /// Refuses a version-2 feature in a version-1 file.
    func requireVersion2(_ node: Node, _ what: String) throws(PipelineFileError) {
        guard version >= 2 else { throw error(node, "\(what) needs version: 2 (this file says version: 1)") }
    }

    /// An entity's `relationships: { name: { to, many, ordered, inverse, delete, required } }`.
    func readRelationships(_ node: Node, of entity: PipelineEntity, entities: [PipelineEntity]) throws(PipelineFileError) -> [RelationshipDescription] {
        guard case .mapping(let mapping) = node else { throw error(node, "relationships of \(entity.name) must be a mapping of name: { to: Entity, … }, not \(written(node))") }
        var relationships: [RelationshipDescription] = []
        for (keyNode, value) in mapping {
            let name = try string(keyNode, "a relationship name")
            guard ManagedObjectModel.isValidName(name) else {
                throw error(keyNode, "relationship name '\(name)' \(ManagedObjectModel.nameRule)")
            }
            guard !entity.attributes.contains(where: { $0.name.lowercased() == name.lowercased() }),
                  !relationships.contains(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw error(keyNode, "'\(entity.name).\(name)' is defined twice (as an attribute or a relationship)")
            }
            let what = "relationship \(entity.name).\(name)"
            let keys = try keyedMapping(value, what, allowed: ["to", "many", "ordered", "inverse", "delete", "required"], required: ["to"])
            let destination = try string(keys["to"]!, "to of \(what)")
            guard entities.contains(where: { $0.name == destination }) else {
                throw error(keys["to"], "\(what) points to '\(destination)', which is not an entity of this file")
            }
            let many = try keys["many"].map { node throws(PipelineFileError) in try boolean(node, "many of \(what)") } ?? false
            let ordered = try keys["ordered"].map { node throws(PipelineFileError) in try boolean(node, "ordered of \(what)") } ?? false
            if ordered && !many { throw error(keys["ordered"], "\(what) is ordered but not many: only a to-many can be ordered") }
            let inverse = try keys["inverse"].map { node throws(PipelineFileError) in try string(node, "inverse of \(what)") }
            var rule = DeleteRule.nullify
            if let node = keys["delete"] {
                let text = try string(node, "delete of \(what)")
                switch text {
                case "nullify": rule = .nullify
                case "cascade": rule = .cascade
                case "deny": rule = .deny
                case "no_action": rule = .noAction
                default: throw error(node, "delete \"\(text)\" of \(what) must be nullify, cascade, deny or no_action")
                }
            }
            let required = try keys["required"].map { node throws(PipelineFileError) in try boolean(node, "required of \(what)") } ?? false
            relationships.append(RelationshipDescription(name: name, destination: destination, toMany: many, isOrdered: ordered,
                                                         isOptional: !required, inverse: inverse, deleteRule: rule))
        }
        return relationships
    }

    /// Every `inverse` names a relationship of its destination that names this one back
    /// and points back at this entity. The two sides' `many` are free (one-to-one,
    /// one-to-many, many-to-many): a pair cannot disagree on it once each side names the
    /// other (an `ordered` to-one, the one shape that says two things, fails on its own).
    func checkInverses(_ entities: [PipelineEntity], nodes: [(entity: Int, node: Node)]) throws(PipelineFileError) {
        for (index, node) in nodes {
            let entity = entities[index]
            guard case .mapping(let mapping) = node else { continue }
            for relationship in entity.relationships {
                guard let inverseName = relationship.inverse else { continue }
                let place = mapping.first { (key, _) in key.string == relationship.name }?.value
                let inverseNode = place.flatMap { value -> Node? in
                    guard case .mapping(let fields) = value else { return nil }
                    return fields.first { (key, _) in key.string == "inverse" }?.value
                }
                let what = "relationship \(entity.name).\(relationship.name)"
                guard let destination = entities.first(where: { $0.name == relationship.destination }),
                      let inverse = destination.relationships.first(where: { $0.name == inverseName }) else {
                    throw error(inverseNode ?? node, "inverse '\(inverseName)' of \(what) is not a relationship of \(relationship.destination)")
                }
                guard inverse.destination == entity.name, inverse.inverse == relationship.name else {
                    throw error(inverseNode ?? node, "inverse '\(inverseName)' of \(what) does not name it back: \(relationship.destination).\(inverseName) must say to: \(entity.name), inverse: \(relationship.name)")
                }
            }
        }
    }

    /// An export column's value or sort key: an attribute, or a key path through relationships
    /// (to-ones, then at most one to-many, whose values need `join`). Returns the
    /// value's type (for `format`) and whether the path goes through a to-many.
    /// `role` names the path in messages ("column value", "sort key").
    func exportValue(_ path: String, of entity: PipelineEntity, entities: [PipelineEntity], node: Node, export: String,
                     role: String = "column value") throws(PipelineFileError) -> (type: AttributeType, toMany: Bool) {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count > 1 { try requireVersion2(node, "\(role) '\(path)' of export \(export) (a key path)") }
        var current = entity
        var toMany = false
        for (position, part) in parts.enumerated() {
            let isLast = position == parts.count - 1
            if isLast, let attribute = current.attributes.first(where: { $0.name == part }) {
                return (attribute.type, toMany)
            }
            guard !isLast, let relationship = current.relationships.first(where: { $0.name == part }),
                  let next = entities.first(where: { $0.name == relationship.destination }) else {
                throw error(node, "\(role) '\(path)' of export \(export): '\(part)' is not \(isLast ? "an attribute" : "a relationship") of \(current.name)")
            }
            if relationship.isToMany {
                guard !toMany else { throw error(node, "\(role) '\(path)' of export \(export) goes through two to-many relationships") }
                toMany = true
            }
            current = next
        }
        throw error(node, "\(role) '\(path)' of export \(export) is empty")
    }
}
