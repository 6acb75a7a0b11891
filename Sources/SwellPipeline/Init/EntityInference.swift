import SwellJSON
import SwellContexts

/// Infers entities from sample objects: an attribute per JSON key with the
/// type its values fit (`FieldShape`), optional when null or missing in any
/// object, a key, and nested objects or arrays of objects as related entities
/// (version 2) when they have a key of their own, else `json`.
///
/// A value; `entities` grows as `inferMain` walks the nesting (parents before
/// their children). Pure: no I/O.
struct EntityInference {
    /// Nesting deeper than this many levels is kept whole as `json`.
    static let maxDepth = 4

    private(set) var entities: [InferredEntity] = []

    /// Infers the records' entity (named `name`) and every entity nested in it.
    ///
    /// - Throws: `PipelineError` (`.data`) when no key can be found (no required scalar field).
    mutating func inferMain(name: String, records: [JSONObject]) throws(PipelineError) {
        let fields = Self.fieldStats(of: records)
        guard let key = Self.key(of: records, fields: fields, isMain: true) else {
            throw PipelineError(.data, "no key for \(name): no field is present and not null in every one of the \(records.count) records, with integer or string values")
        }
        entities.append(InferredEntity(name: name, key: [], keyReason: "", attributes: [], relationships: [], skipped: []))
        build(at: 0, records: records, fields: fields, key: key, depth: 1)
    }

    /// Fills in the entity at `index` from its objects (whose key was found), inferring
    /// the entities nested in them.
    private mutating func build(at index: Int, records: [JSONObject], fields: [FieldStats], key: InferredKey, depth: Int) {
        var entity = entities[index]
        var taken: Set<String> = []
        for field in fields {
            if field.key.isEmpty || field.key.contains(".") {
                entity.skipped.append("\(field.key.isEmpty ? "the empty key" : "'\(field.key)'") left out: a dot path cannot name it")
                continue
            }
            let shape = depth >= Self.maxDepth && field.hasContainers
                ? FieldShape(type: .json, reason: "json: nested deeper than \(Self.maxDepth) levels, kept whole")
                : FieldShape(field)
            if case .nested(let objects, let many) = shape.kind,
               let nested = nestedEntity(field: field, objects: objects, many: many, parent: entity.name, taken: taken, depth: depth) {
                taken.insert(nested.name.lowercased())
                entity.relationships.append(nested)
                continue
            }
            let name = InitNames.unique(InitNames.attributeName(for: field.key), taken: taken)
            taken.insert(name.lowercased())
            let type = shape.type ?? .json
            var reason = shape.kind.isNested ? Self.noKeyReason(field, many: shape.kind.isMany) : shape.reason
            let optional = field.nulls > 0 || field.missing > 0
            if optional { reason += "; optional: \(field.absence(of: records.count))" }
            entity.attributes.append(InferredAttribute(name: name, field: field.key, type: type, isOptional: optional, reason: reason))
        }
        // A key read from a nested object (`nestedKey`) is an attribute of its own, read by its dot path.
        for path in key.fields where path.contains(".") && !entity.attributes.contains(where: { $0.field == path }) {
            let parts = path.split(separator: ".").map(String.init)
            let values = records.compactMap { JSONValue.object($0).value(at: parts) }
            let name = InitNames.unique(InitNames.attributeName(for: parts.joined(separator: "_")), taken: taken)
            taken.insert(name.lowercased())
            entity.attributes.insert(InferredAttribute(name: name, field: path, type: values.allSatisfy(\.isInteger) ? .integer : .string,
                                                       isOptional: false, reason: "the key, read from the nested \(parts[0])"), at: 0)
        }
        entity.key = key.fields.compactMap { field in entity.attributes.first { $0.field == field }?.name }
        entity.keyReason = key.reason
        entities[index] = entity
    }

    private static func noKeyReason(_ field: FieldStats, many: Bool) -> String {
        "json: \(many ? "arrays of objects" : "objects") with no key of their own (no id, no field unique to each), kept whole"
    }

    /// A relationship to an entity inferred from the objects nested at `field`, or nil
    /// when they have no key (the field is then a `json` attribute).
    private mutating func nestedEntity(field: FieldStats, objects: [JSONObject], many: Bool, parent: String, taken: Set<String>,
                                       depth: Int) -> InferredRelationship? {
        let nestedFields = Self.fieldStats(of: objects)
        guard let key = Self.key(of: objects, fields: nestedFields, isMain: false) else { return nil }
        let names = Set(entities.map { $0.name.lowercased() })
        var entityName = InitNames.entityName(from: field.key, singular: many)
        if names.contains(entityName.lowercased()) { entityName = InitNames.entityName(from: "\(parent)_\(field.key)", singular: many) }
        entityName = InitNames.unique(entityName, taken: names, separator: "")
        var name = InitNames.unique(InitNames.attributeName(for: field.key), taken: taken)
        if name.lowercased() == parent.lowercased() { name = InitNames.unique(name + "_ref", taken: taken) }
        let index = entities.count
        entities.append(InferredEntity(name: entityName, key: [], keyReason: "", attributes: [], relationships: [], skipped: []))
        build(at: index, records: objects, fields: nestedFields, key: key, depth: depth + 1)
        let keyText = entities[index].key.joined(separator: ", ")
        let reason = many
            ? "to-many: arrays of objects (\(objects.count) elements in all), each with its key \(keyText)"
            : "to-one: an object with its key \(keyText)\(field.nulls + field.missing > 0 ? "; none (null or missing) in \(field.nulls + field.missing) of \(field.values.count + field.nulls + field.missing) records" : "")"
        return InferredRelationship(name: name, field: field.key, destination: entityName, isToMany: many, reason: reason)
    }

    // MARK: Keys

    /// The key found, by JSON keys, and why.
    struct InferredKey {
        var fields: [String]
        var reason: String
    }

    /// `id` when present and not null in every object (and, for the records, different in
    /// each), else the first field whose values are all integers or all strings, present in
    /// every object and different in each (in nested objects, only a field whose name says
    /// identity: `saysIdentity`); for the records, when none is, every required scalar field
    /// together. Objects equal in every member count once.
    static func key(of objects: [JSONObject], fields: [FieldStats], isMain: Bool) -> InferredKey? {
        let distinct = Set(objects.map { JSONValue.object($0).jsonText }).count
        let what = isMain ? "record" : "nested object"
        let candidates = fields.filter { field in
            guard field.missing == 0, field.nulls == 0, !field.key.isEmpty, !field.key.contains(".") else { return false }
            return field.values.allSatisfy(\.isInteger) || field.values.allSatisfy(\.isString)
        }
        func isUnique(_ field: FieldStats) -> Bool { Set(field.values.map(\.jsonText)).count == distinct }
        if let id = candidates.first(where: { $0.key == "id" }), !isMain || isUnique(id) {
            let unique = isMain ? ", different in each" : ""
            return InferredKey(fields: ["id"], reason: "id: present in every \(what) (\(objects.count))\(unique)")
        }
        if isMain, let field = candidates.first(where: isUnique) {
            return InferredKey(fields: [field.key], reason: "\(field.key): the first field present in every record and different in each (no unique id)")
        }
        guard isMain else {
            // Nested objects need a field whose name says identity: `street` alone must not make addresses entities.
            guard let field = candidates.first(where: { saysIdentity($0.key) && isUnique($0) }) else { return nil }
            return InferredKey(fields: [field.key], reason: "\(field.key): present in every nested object and different in each (no id)")
        }
        let required = fields.filter { field in
            field.missing == 0 && field.nulls == 0 && !field.key.isEmpty && !field.key.contains(".") && !field.hasContainers
        }
        guard !required.isEmpty else { return nestedKey(of: objects, fields: fields) }
        return InferredKey(fields: required.map(\.key),
                           reason: "no single field is unique to each record: the key is every required field together (records equal in all of them are one row)")
    }

    /// For records with no scalar field of their own (`{"mappedEntity": {"mappedEntityID": 42, …}}`):
    /// the identity of an object every record holds — `id` or a field whose name says
    /// identity, integers or strings, different in each record — as a dot path.
    private static func nestedKey(of objects: [JSONObject], fields: [FieldStats]) -> InferredKey? {
        let distinct = Set(objects.map { JSONValue.object($0).jsonText }).count
        for field in fields where field.missing == 0 && field.nulls == 0 && !field.key.isEmpty && !field.key.contains(".") {
            let nested = field.values.compactMap { if case .object(let object) = $0 { object } else { nil } }
            guard nested.count == field.values.count else { continue }
            let candidates = fieldStats(of: nested).filter { inner in
                inner.missing == 0 && inner.nulls == 0 && !inner.key.isEmpty && !inner.key.contains(".")
                    && (inner.key == "id" || saysIdentity(inner.key))
                    && (inner.values.allSatisfy(\.isInteger) || inner.values.allSatisfy(\.isString))
                    && Set(inner.values.map(\.jsonText)).count == distinct
            }
            guard let inner = candidates.first(where: { $0.key == "id" }) ?? candidates.first else { continue }
            return InferredKey(fields: ["\(field.key).\(inner.key)"],
                               reason: "\(field.key).\(inner.key): the records have no scalar field of their own; the identity of the \(field.key) each holds is present in every record and different in each")
        }
        return nil
    }

    /// Whether a JSON key names an identity: `uuid`, `guid`, `key`, `slug`, `code`, `name`,
    /// `login`, `url`, or ending in `_id` / `Id` / `ID`.
    static func saysIdentity(_ key: String) -> Bool {
        let names: Set<String> = ["uuid", "guid", "key", "slug", "code", "name", "login", "url", "href", "email", "sku"]
        return names.contains(key.lowercased()) || key.hasSuffix("_id") || key.hasSuffix("Id") || key.hasSuffix("ID")
    }

    // MARK: Fields

    /// Each JSON key of the objects (in order of first appearance) with its non-null values.
    static func fieldStats(of objects: [JSONObject]) -> [FieldStats] {
        var order: [String] = []
        var byKey: [String: FieldStats] = [:]
        for object in objects {
            for (key, _) in object.members where byKey[key] == nil {
                order.append(key)
                byKey[key] = FieldStats(key: key)
            }
        }
        for object in objects {
            for key in order {
                switch object[key] {
                case nil: byKey[key]!.missing += 1
                case .null?: byKey[key]!.nulls += 1
                case let value?: byKey[key]!.values.append(value)
                }
            }
        }
        return order.map { byKey[$0]! }
    }
}

/// One JSON key over a set of objects: its non-null values, and how often it was null or missing.
struct FieldStats {
    var key: String
    var values: [JSONValue] = []
    var nulls = 0
    var missing = 0

    /// Whether any value is an object or an array.
    var hasContainers: Bool { values.contains { $0.isContainer } }

    /// "null in 3 and missing in 2 of 10 records".
    func absence(of count: Int) -> String {
        var parts: [String] = []
        if nulls > 0 { parts.append("null in \(nulls)") }
        if missing > 0 { parts.append("missing in \(missing)") }
        return parts.joined(separator: " and ") + " of \(count)"
    }
}

extension JSONValue {
    var isInteger: Bool { if case .number(let number) = self { number.int64 != nil } else { false } }
    var isString: Bool { if case .string = self { true } else { false } }
    var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}
