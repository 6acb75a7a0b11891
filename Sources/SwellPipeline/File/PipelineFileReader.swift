import Foundation
import SwellContexts
import Yams

/// Walks the YAML tree of a pipeline file, checking every key and value.
struct PipelineFileReader {
    let path: String
    let environment: [String: String]
    var secrets: Set<String> = []
    /// The environment variables the secrets came from, name → value.
    var secretVariables: [String: String] = [:]
    /// The file's `version`: 1, 2 (nested records and relationships), 3 (reaching real APIs) or
    /// 4 (real networks: concurrency, rate limits, resume).
    private(set) var version = 1

    init(path: String, environment: [String: String]) {
        self.path = path
        self.environment = environment
    }

    // MARK: Errors and positions

    func error(_ node: Node?, _ message: String, offset: Int = 0) -> PipelineFileError {
        let mark = node?.mark
        return PipelineFileError(path: path, line: mark?.line ?? 1, column: (mark?.column ?? 1) + offset, message: message)
    }

    /// What a node holds, for a message that names the offending value: a scalar quoted
    /// (`"merge"`), else its kind.
    func written(_ node: Node?) -> String {
        switch node {
        case .scalar(let scalar)?: "\"\(scalar.string)\""
        case .sequence?: "a list"
        case .mapping?: "a mapping"
        default: "nothing"
        }
    }

    /// The pairs of a mapping, refusing unknown and repeated keys.
    func keyedMapping(_ node: Node, _ what: String, allowed: Set<String>, required: [String] = []) throws(PipelineFileError) -> [String: Node] {
        guard case .mapping(let mapping) = node else { throw error(node, "\(what) must be a mapping, not \(written(node))") }
        var result: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard case .scalar(let key) = keyNode else { throw error(keyNode, "\(what): keys must be plain names") }
            guard allowed.contains(key.string) else {
                let known = allowed.sorted().joined(separator: ", ")
                throw error(keyNode, "unknown key '\(key.string)' in \(what) (known keys: \(known))")
            }
            guard result[key.string] == nil else { throw error(keyNode, "key '\(key.string)' appears twice in \(what)") }
            result[key.string] = value
        }
        for key in required where result[key] == nil {
            throw error(node, "\(what) needs '\(key)'")
        }
        return result
    }

    func string(_ node: Node, _ what: String) throws(PipelineFileError) -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "\(what) must be a string, not \(written(node))") }
        return scalar.string
    }

    func integer(_ node: Node, _ what: String, in range: ClosedRange<Int>? = nil) throws(PipelineFileError) -> Int {
        guard case .scalar(let scalar) = node, scalar.style == .plain, let value = Int(scalar.string) else {
            throw error(node, "\(what) must be a whole number, not \(written(node))")
        }
        if let range, !range.contains(value) { throw error(node, "\(what) must be between \(range.lowerBound) and \(range.upperBound), not \(value)") }
        return value
    }

    func number(_ node: Node, _ what: String) throws(PipelineFileError) -> Double {
        guard case .scalar(let scalar) = node, scalar.style == .plain, let value = Double(scalar.string), value.isFinite, value > 0 else {
            throw error(node, "\(what) must be a positive number, not \(written(node))")
        }
        return value
    }

    func boolean(_ node: Node, _ what: String) throws(PipelineFileError) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { throw error(node, "\(what) must be true or false, not \(written(node))") }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, "\(what) must be true or false, not \(written(node))")
        }
    }

    func dotPath(_ node: Node, _ what: String) throws(PipelineFileError) -> [String] {
        let text = try string(node, what)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty, parts.allSatisfy({ !$0.isEmpty }) else { throw error(node, "\(what) must be a dot path like 'data' or 'meta.next', not \(written(node))") }
        return parts
    }

    static func isName(_ text: String, pattern: (Unicode.Scalar, Bool) -> Bool) -> Bool {
        guard !text.isEmpty else { return false }
        return text.unicodeScalars.enumerated().allSatisfy { pattern($0.element, $0.offset == 0) }
    }

    static func isPipelineName(_ text: String) -> Bool {
        isName(text) { c, _ in (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c == "_" || c == "-" }
    }

    static func isIdentifier(_ text: String) -> Bool {
        isName(text) { c, first in
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_" || (!first && c >= "0" && c <= "9")
        }
    }

    // MARK: Interpolation

    /// Replaces `${VAR}` and `${VAR:-default}`; values from the environment become secrets.
    /// Names in `keeping` (`item` in a `for_each` source) are left as `${name}`, to be filled later.
    mutating func interpolate(_ node: Node, _ what: String, keeping: Set<String> = []) throws(PipelineFileError) -> String {
        let text = try string(node, what)
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw error(node, "unclosed '${' in \(what)")
            }
            let body = rest[start.upperBound..<end]
            let (name, fallback): (Substring, Substring?) = {
                if let dash = body.range(of: ":-") { return (body[..<dash.lowerBound], body[dash.upperBound...]) }
                return (body, nil)
            }()
            guard Self.isIdentifier(String(name)) else { throw error(node, "'${\(body)}' in \(what) is not a variable reference") }
            if fallback == nil, keeping.contains(String(name)) {
                result += "${\(name)}"
            } else if let value = environment[String(name)], !(value.isEmpty && fallback != nil) {
                if !value.isEmpty {
                    secrets.insert(value)
                    secretVariables[String(name)] = value
                }
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw error(node, "environment variable \(name) (used in \(what)) is not set and has no default")
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    // MARK: The file

    mutating func read(_ root: Node) throws(PipelineFileError) -> PipelineFile {
        let top = try keyedMapping(root, "the pipeline file",
                                   allowed: (["version", "name", "store", "entities", "sources", "exports", "history"] as Set<String>).union(Self.version4TopKeys),
                                   required: ["version", "name", "entities"])
        let versionNode = top["version"]!
        version = try integer(versionNode, "version")
        guard (1...4).contains(version) else {
            throw error(versionNode, "version \(version) is not known: it must be 1, 2 (nested records and relationships), 3 (auth, bodies, offsets) or 4 (concurrency, rate limits, resume)")
        }
        let nameNode = top["name"]!
        let name = try string(nameNode, "name")
        guard Self.isPipelineName(name) else { throw error(nameNode, "name '\(name)' must match [a-z0-9_-]+") }
        let store = try top["store"].map { node throws(PipelineFileError) in try interpolate(node, "store") } ?? ".swell/\(name).sqlite"
        guard !store.isEmpty else { throw error(top["store"], "store must not be empty") }
        if top["store"] != nil {
            // The same check a run makes (`--store` is checked there): `validate` says it first.
            do {
                try StoreLocation(store, redactor: Redactor(secrets: secrets)).validate()
            } catch {
                throw self.error(top["store"], error.message)
            }
        }

        // Past the file's version, name and store, every problem is collected and the file
        // read on: an entity, a source or an export that fails is left out, and what names a
        // left-out entity is not read (its errors would only repeat the first).
        var problems: [PipelineFileError] = []
        var failedEntities: Set<String> = []
        let entities = try readEntities(top["entities"]!, problems: &problems, failed: &failedEntities)
        func namesFailedEntity(_ item: Node) -> Bool {
            guard case .scalar(let scalar)? = item.mapping?["entity"] else { return false }
            return failedEntities.contains(scalar.string)
        }
        var sources: [SourceSpec] = []
        if let node = top["sources"] {
            guard case .sequence(let sequence) = node else { throw error(node, "sources must be a list, not \(written(node))") }
            for item in sequence where !namesFailedEntity(item) {
                do throws(PipelineFileError) {
                    for source in try readSources(item, pipeline: name, entities: entities) {
                        // (An item that cannot be used is shown escaped in its name, which may repeat another's.)
                        if source.itemRejection == nil, sources.contains(where: { $0.name == source.name && $0.itemRejection == nil }) {
                            throw error(item, "two sources are named '\(source.name)'")
                        }
                        sources.append(source)
                    }
                } catch {
                    problems.append(error)
                }
            }
            do { try checkReplaceOwnsItsEntity(sources, nodes: sequenceNodes(top["sources"])) } catch { problems.append(error) }
        }
        var history = false
        var historyKeepDays = 7.0
        do {
            (history, historyKeepDays) = try readHistory(top["history"])
        } catch {
            problems.append(error)
        }
        var concurrency = 1
        var hosts: [HostBudget] = []
        do { concurrency = try readConcurrency(top["concurrency"]) } catch { problems.append(error) }
        do { hosts = try readHosts(top["hosts"]) } catch { problems.append(error) }
        var exports: [ExportSpec] = []
        if let node = top["exports"] {
            guard case .sequence(let sequence) = node else { throw error(node, "exports must be a list, not \(written(node))") }
            var names: Set<String> = []   // of the exports read so far, those that failed too
            for item in sequence where !namesFailedEntity(item) {
                if case .scalar(let scalar)? = item.mapping?["name"], !names.insert(scalar.string).inserted {
                    problems.append(error(item, "two exports are named '\(scalar.string)'"))
                    continue
                }
                do {
                    exports.append(try readExport(item, entities: entities, history: history))
                } catch {
                    problems.append(error)
                }
            }
        }
        problems.sort { ($0.line, $0.column) < ($1.line, $1.column) }   // in file order, whatever was checked first
        if var first = problems.first {
            first.more = Array(problems.dropFirst())
            throw first
        }
        var file = PipelineFile(path: path, version: version, name: name, store: store, entities: entities, sources: sources, exports: exports,
                                secrets: secrets)
        file.history = history
        file.historyKeepDays = historyKeepDays
        file.secretVariables = secretVariables
        file.concurrency = concurrency
        file.hosts = hosts
        return file
    }

    /// The top-level `history` (version 3): on or off, and the days kept.
    private func readHistory(_ node: Node?) throws(PipelineFileError) -> (Bool, Double) {
        var history = false
        var historyKeepDays = 7.0
        if let node {
            try requireVersion3(node, "history")
            if case .mapping = node {
                let keys = try keyedMapping(node, "history", allowed: ["keep_days"])
                history = true
                if let days = keys["keep_days"] {
                    guard case .scalar(let scalar) = days, let value = Double(scalar.string), value >= 0, value.isFinite else {
                        throw error(days, "history.keep_days must be a number of days, 0 or more, not \(written(days))")
                    }
                    historyKeepDays = value
                }
            } else {
                history = try boolean(node, "history")
            }
        }
        return (history, historyKeepDays)
    }

    /// The entities that read; each one that does not adds its problem to `problems` and its
    /// name to `failed`.
    private func readEntities(_ node: Node, problems: inout [PipelineFileError], failed: inout Set<String>) throws(PipelineFileError) -> [PipelineEntity] {
        guard case .mapping(let mapping) = node, !mapping.isEmpty else { throw error(node, "entities must be a mapping of at least one entity, not \(written(node))") }
        var entities: [PipelineEntity] = []
        var relationshipNodes: [(entity: Int, node: Node)] = []
        for (keyNode, value) in mapping {
            do {
                let (entity, relationships) = try readEntity(keyNode, value, defined: entities)
                if let relationships { relationshipNodes.append((entities.count, relationships)) }
                entities.append(entity)
            } catch {
                problems.append(error)
                if case .scalar(let scalar) = keyNode { failed.insert(scalar.string) }
            }
        }
        for (index, node) in relationshipNodes {
            do {
                entities[index].relationships = try readRelationships(node, of: entities[index], entities: entities)
            } catch {
                problems.append(error)
            }
        }
        do { try checkInverses(entities, nodes: relationshipNodes) } catch { problems.append(error) }
        return entities
    }

    /// One entity, and its `relationships` node (read once every entity is known).
    private func readEntity(_ keyNode: Node, _ value: Node, defined entities: [PipelineEntity]) throws(PipelineFileError) -> (PipelineEntity, Node?) {
        let name = try string(keyNode, "an entity name")
        guard ManagedObjectModel.isValidName(name) else {
            throw error(keyNode, "entity name '\(name)' \(ManagedObjectModel.nameRule)")
        }
        guard !entities.contains(where: { $0.name.lowercased() == name.lowercased() }) else { throw error(keyNode, "entity '\(name)' is defined twice") }
        let fields = try keyedMapping(value, "entity \(name)", allowed: ["key", "attributes", "relationships"], required: ["key", "attributes"])
        if let node = fields["relationships"] {
            try requireVersion2(node, "the relationships key of \(name)")
        }
        guard case .mapping(let attributeNodes) = fields["attributes"]!, !attributeNodes.isEmpty else {
            throw error(fields["attributes"], "attributes of \(name) must be a mapping of attribute: type, not \(written(fields["attributes"]))")
        }
        var attributes: [AttributeDescription] = []
        for (attributeKey, typeNode) in attributeNodes {
            let attribute = try string(attributeKey, "an attribute name")
            guard ManagedObjectModel.isValidName(attribute) else {
                throw error(attributeKey, "attribute name '\(attribute)' \(ManagedObjectModel.nameRule)")
            }
            guard !attributes.contains(where: { $0.name.lowercased() == attribute.lowercased() }) else {
                throw error(attributeKey, "attribute '\(name).\(attribute)' is defined twice")
            }
            attributes.append(try readAttribute(attribute, of: name, typeNode))
        }
        let keyNode = fields["key"]!
        var key: [String] = []
        switch keyNode {
        case .sequence(let sequence):
            for item in sequence { key.append(try string(item, "a key attribute")) }
        case .scalar(let scalar):
            key = [scalar.string]
        default:
            throw error(keyNode, "key of \(name) must be a list of attribute names, not \(written(keyNode))")
        }
        guard !key.isEmpty else { throw error(keyNode, "key of \(name) must name at least one attribute") }
        for attribute in key where !attributes.contains(where: { $0.name == attribute }) {
            throw error(keyNode, "key of \(name) names '\(attribute)', which is not one of its attributes")
        }
        guard Set(key).count == key.count else { throw error(keyNode, "key of \(name) names an attribute twice") }
        return (PipelineEntity(name: name, key: key, attributes: attributes), fields["relationships"])
    }

    /// A date format: iso8601, unix, unix_ms, or an LDML pattern.
    func dateFormat(_ node: Node, _ what: String) throws(PipelineFileError) -> DateFormat {
        let text = try string(node, what)
        switch text {
        case "iso8601": return .iso8601
        case "unix": return .unix
        case "unix_ms": return .unixMilliseconds
        default:
            try checkDatePattern(text, node: node, what: what)
            return .pattern(text)
        }
    }

    /// A date pattern uses only LDML field letters; quoted text is literal.
    func checkDatePattern(_ pattern: String, node: Node, what: String) throws(PipelineFileError) {
        let letters = Set("GyYuUrQqMLlwWdDFgEecabBhHKkjJCmsSAzZOvVXx")
        var quoted = false
        var sawField = false
        for (offset, character) in pattern.enumerated() {
            if character == "'" { quoted.toggle(); continue }
            guard !quoted, character.isLetter, character.isASCII else { continue }
            guard letters.contains(character) else {
                throw error(node, "\(what): '\(character)' at position \(offset + 1) of \"\(pattern)\" is not a date pattern letter (like yyyy-MM-dd HH:mm)")
            }
            sawField = true
        }
        guard !quoted else { throw error(node, "\(what): unclosed quote in date pattern \"\(pattern)\"") }
        guard sawField else { throw error(node, "\(what): \"\(pattern)\" is not a date format (iso8601, unix, unix_ms, or a pattern like yyyy-MM-dd)") }
    }

}
