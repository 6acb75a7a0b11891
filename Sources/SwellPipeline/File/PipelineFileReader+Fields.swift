import SwellContexts
import Yams

/// A source's `fields`: where each attribute comes from in a record and, in a
/// version-2 file, the relationships mapped from nested objects and arrays
/// (`author: { path: user, fields: { id: id, login: login } }`, to any depth).
extension PipelineFileReader {
    /// The fields of `source` (every attribute of `entity` has one; default: its own name)
    /// and its nested mappings.
    func readFields(_ node: Node?, of entity: PipelineEntity, entities: [PipelineEntity],
                    source: String) throws(PipelineFileError) -> (fields: [String: FieldSpec], nested: [NestedMapping]) {
        var fields: [String: FieldSpec] = [:]
        var nested: [NestedMapping] = []
        for attribute in entity.attributes { fields[attribute.name] = FieldSpec(path: [attribute.name], dateFormat: nil) }
        guard let node else { return (fields, nested) }
        guard case .mapping(let mapping) = node else { throw error(node, "fields of source \(source) must be a mapping of attribute: path, not \(written(node))") }
        let kinds = version >= 2 ? "an attribute or relationship" : "an attribute"
        try readFieldMapping(mapping, of: entity, entities: entities, into: &fields, nested: &nested,
                             what: { "field \($0) of source \(source)" }, attributeWhat: { "field \($0)" }, element: false,
                             unknown: { "fields of source \(source) names '\($0)', which is not \(kinds) of \(entity.name)" })
        return (fields, nested)
    }

    /// Reads each `attribute: path` (or `relationship: { path, fields }`) of a fields
    /// mapping of `entity`: the one rule for a source's fields and a nested mapping's.
    private func readFieldMapping(_ mapping: Node.Mapping, of entity: PipelineEntity, entities: [PipelineEntity],
                                  into fields: inout [String: FieldSpec], nested: inout [NestedMapping],
                                  what: (String) -> String, attributeWhat: (String) -> String, element: Bool,
                                  unknown: (String) -> String) throws(PipelineFileError) {
        for (fieldKey, value) in mapping {
            let name = try string(fieldKey, "a field name")
            if let relationship = entity.relationships.first(where: { $0.name == name }) {
                nested.append(try readNested(value, relationship: relationship, entities: entities, what: what(name)))
                continue
            }
            try refuseNestedFields(value, name: name, key: fieldKey, of: entity, what: what(name))
            guard let attribute = entity.attributes.first(where: { $0.name == name }) else {
                throw error(fieldKey, unknown(name))
            }
            fields[name] = try readField(value, attribute: attribute, what: attributeWhat(name), element: element)
        }
    }

    /// A nested mapping `{ path, fields }` of `relationship` (to any depth): every
    /// field names an attribute or relationship of the destination, and its key is mapped.
    func readNested(_ node: Node, relationship: RelationshipDescription, entities: [PipelineEntity],
                    what: String) throws(PipelineFileError) -> NestedMapping {
        try requireVersion2(node, what)
        guard case .mapping = node else {
            throw error(node, "\(what) maps relationship '\(relationship.name)': it needs { path: …, fields: { … } }")
        }
        if case .mapping(let given) = node, given["key"] != nil {
            return try readKeyReference(node, relationship: relationship, entities: entities, what: what)
        }
        let keys = try keyedMapping(node, what, allowed: ["path", "fields"], required: ["path", "fields"])
        let path = try dotPath(keys["path"]!, "path of \(what)")
        guard let destination = entities.first(where: { $0.name == relationship.destination }) else {
            throw error(node, "\(what): '\(relationship.destination)' is not an entity of this file")
        }
        guard case .mapping(let mapping) = keys["fields"]! else { throw error(keys["fields"], "fields of \(what) must be a mapping of attribute: path, not \(written(keys["fields"]))") }
        var fields: [String: FieldSpec] = [:]
        var nested: [NestedMapping] = []
        try readFieldMapping(mapping, of: destination, entities: entities, into: &fields, nested: &nested,
                             what: { "field \($0) of \(what)" }, attributeWhat: { "field \($0) of \(what)" }, element: true,
                             unknown: { "fields of \(what) name '\($0)', which is not an attribute or relationship of \(destination.name)" })
        for key in destination.key where fields[key] == nil {
            throw error(keys["fields"], "\(what) does not map \(destination.name)'s key '\(key)': each nested \(destination.name) is upserted by its key")
        }
        return NestedMapping(relationship: relationship.name, destination: destination.name, path: path, fields: fields, nested: nested)
    }

    /// A to-one given by its destination's key, `{ key: PATH, create: BOOL }` (version 3): the
    /// value at `PATH` is the key (one attribute) of the destination to link.
    private func readKeyReference(_ node: Node, relationship: RelationshipDescription, entities: [PipelineEntity],
                                  what: String) throws(PipelineFileError) -> NestedMapping {
        try requireVersion3(node, "\(what) by key")
        let keys = try keyedMapping(node, what, allowed: ["key", "create"], required: ["key"])
        guard !relationship.isToMany else {
            throw error(node, "\(what): { key: … } gives a to-one; \(relationship.name) is a to-many")
        }
        guard let destination = entities.first(where: { $0.name == relationship.destination }) else {
            throw error(node, "\(what): '\(relationship.destination)' is not an entity of this file")
        }
        guard destination.key.count == 1, let key = destination.key.first else {
            throw error(node, "\(what): { key: … } needs a destination keyed by one attribute; \(destination.name)'s key is \(destination.key.joined(separator: ", "))")
        }
        let create = try keys["create"].map { node throws(PipelineFileError) in try boolean(node, "create of \(what)") } ?? false
        if create, let required = destination.attributes.first(where: { $0.name != key && !$0.isOptional }) {
            throw error(keys["create"], "\(what): create: true inserts a \(destination.name) holding only its key, but its attribute \(required.name) is required")
        }
        return NestedMapping(relationship: relationship.name, destination: destination.name, path: try dotPath(keys["key"]!, "key of \(what)"),
                             fields: [key: FieldSpec(path: ["."])], nested: [], byKey: KeyReference(create: create))
    }

    /// One attribute's field: a dot path, or `{ path, format }` (a date format for a date
    /// attribute). Inside a nested mapping (`element`), "." is the element itself.
    private func readField(_ value: Node, attribute: AttributeDescription, what: String,
                           element: Bool) throws(PipelineFileError) -> FieldSpec {
        guard case .mapping = value else { return FieldSpec(path: try fieldPath(value, "path of \(what)", element: element), dateFormat: nil) }
        let field = try keyedMapping(value, what, allowed: ["path", "format"], required: ["path"])
        var format: DateFormat?
        if let formatNode = field["format"] {
            format = try dateFormat(formatNode, "format of \(what)")
            guard attribute.type == .date else { throw error(formatNode, "\(what) has a date format but is of type \(attribute.type.rawValue)") }
        }
        return FieldSpec(path: try fieldPath(field["path"]!, "path of \(what)", element: element), dateFormat: format)
    }

    /// A field's dot path; "." (the element itself, for an array of scalars) only inside a nested mapping.
    private func fieldPath(_ node: Node, _ what: String, element: Bool) throws(PipelineFileError) -> [String] {
        if case .scalar(let scalar) = node, scalar.string == "." {
            guard element else { throw error(node, "\(what) is \".\", the element itself, which only a field of a nested mapping can use") }
            return ["."]
        }
        return try dotPath(node, what)
    }

    /// Refuses `{ path, fields }` under a name that is not a relationship: nested fields
    /// need version 2, and only a relationship takes them.
    private func refuseNestedFields(_ value: Node, name: String, key: Node, of entity: PipelineEntity,
                                    what: String) throws(PipelineFileError) {
        guard case .mapping(let mapping) = value, mapping.contains(where: { (key, _) in key.string == "fields" }) else { return }
        try requireVersion2(value, "\(what) (a nested mapping)")
        let subject = entity.attributes.contains(where: { $0.name == name })
            ? "'\(name)' is an attribute of \(entity.name)" : "'\(name)' is not a relationship of \(entity.name)"
        let known = entity.relationships.isEmpty
            ? "\(entity.name) has no relationships" : "relationships of \(entity.name): \(entity.relationships.map(\.name).joined(separator: ", "))"
        throw error(key, "\(what) has nested fields, but \(subject): only a relationship is mapped with { path, fields } (\(known))")
    }
}
