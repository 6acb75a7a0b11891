import Foundation
import SwellJSON
import SwellContexts
import Yams

/// A source: its entity, URL, records, pagination, fields, modes and limits; a `for_each`
/// expansion into one source per item; the rule that `replace` owns its entity.
extension PipelineFileReader {
    /// A source of the file: one, or one per item of its `for_each`.
    mutating func readSources(_ node: Node, pipeline: String, entities: [PipelineEntity]) throws(PipelineFileError) -> [SourceSpec] {
        let source = try readSource(node, pipeline: pipeline, entities: entities)
        guard case .mapping(let mapping) = node, let forEachNode = mapping["for_each"] else { return [source] }
        if source.mode == .replace {
            throw error(forEachNode, "source \(source.name) has mode replace and for_each: replace deletes the rows of \(source.entity) a source did not bring, so each item would delete the others' rows")
        }
        if case .mapping(let mapping) = forEachNode, mapping["entity"] != nil {
            var template = source
            template.forEachEntity = try forEachEntity(forEachNode, source: source.name, entities: entities)
            return [template]
        }
        // An item that cannot be used is kept, marked, in its place (the run applies `on_error`
        // to it when it gets there, as to an entity's items), so `--shard` positions stay.
        return try forEachItems(forEachNode, source: source.name).enumerated()
            .map { source.expanded(item: $0.element, index: $0.offset, pipeline: pipeline) }
    }

    /// `for_each: { entity: E, value: attribute, where: predicate }` (version 3).
    private func forEachEntity(_ node: Node, source: String, entities: [PipelineEntity]) throws(PipelineFileError) -> ForEachEntity {
        try requireVersion3(node, "for_each from an entity")
        let what = "for_each of source \(source)"
        let keys = try keyedMapping(node, what, allowed: ["entity", "value", "where"], required: ["entity", "value"])
        let name = try string(keys["entity"]!, "\(what).entity")
        guard let entity = entities.first(where: { $0.name == name }) else { throw error(keys["entity"], "\(what) names entity '\(name)', which is not defined") }
        let value = try string(keys["value"]!, "\(what).value")
        guard let attribute = entity.attributes.first(where: { $0.name == value }) else {
            throw error(keys["value"], "\(what): '\(value)' is not an attribute of \(name)")
        }
        guard attribute.type != .json else {
            throw error(keys["value"], "\(what): \(value) is a \(attribute.type) attribute; an item is text, a number, a date or a boolean")
        }
        var predicate: String?
        if let whereNode = keys["where"] {
            let format = try string(whereNode, "\(what).where")
            do {
                try FetchPredicate.parse(format: format).nilMatching(PipelineFile.predicateNilMatching(version: version))
                    .validate(against: name, in: ManagedObjectModel(entities: entities.map(\.description)))
            } catch {
                throw self.error(whereNode, "\(what).where: \(error.message) (at character \(error.column) of the predicate)")
            }
            predicate = format
        }
        return ForEachEntity(entity: name, value: value, predicate: predicate)
    }

    /// `body` with `fill` applied to each string in it (keys stay as written).
    static func filling(_ body: JSONValue, with fill: (String) -> String) -> JSONValue {
        switch body {
        case .string(let text): .string(fill(text))
        case .array(let elements): .array(elements.map { filling($0, with: fill) })
        case .object(let object): .object(JSONObject(members: object.members.map { ($0.key, filling($0.value, with: fill)) }))
        default: body
        }
    }

    /// `for_each: [a, b]` or `for_each: { file: items.txt }` (an item per line; blank lines and
    /// lines starting with `#` skipped; the path relative to the current folder, as `url` paths are).
    private func forEachItems(_ node: Node, source: String) throws(PipelineFileError) -> [String] {
        var items: [String] = []
        var itemNodes: [Node] = []
        switch node {
        case .sequence(let sequence):
            for element in sequence {
                guard case .scalar(let scalar) = element else { throw error(element, "for_each of source \(source): each item must be a string or number, not \(written(element))") }
                items.append(scalar.string)
                itemNodes.append(element)
            }
        case .mapping:
            let keys = try keyedMapping(node, "for_each of source \(source)", allowed: ["file"], required: ["file"])
            let file = try string(keys["file"]!, "for_each.file of source \(source)")
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw self.error(keys["file"], "for_each.file of source \(source): cannot read '\(file)': \((error as NSError).localizedDescription)")
            }
            for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
                let item = line.trimmingCharacters(in: .whitespaces)
                if item.isEmpty || item.hasPrefix("#") { continue }
                items.append(item)
                itemNodes.append(keys["file"]!)
            }
        default:
            throw error(node, "for_each of source \(source) must be a list of items, { file: PATH } (an item per line) or { entity, value, where } (version 3), not \(written(node))")
        }
        guard !items.isEmpty else { throw error(node, "for_each of source \(source) has no items") }
        var seen: Set<String> = []
        for (index, item) in items.enumerated() {
            guard !item.isEmpty else { throw error(itemNodes[index], "for_each of source \(source): item \(index) is empty") }
            guard seen.insert(item).inserted else { throw error(itemNodes[index], "for_each of source \(source): item '\(item)' appears twice") }
        }
        return items
    }

    /// A `replace` source deletes the rows of its entity it did not bring: no other source
    /// of the file may write that entity.
    func checkReplaceOwnsItsEntity(_ sources: [SourceSpec], nodes: [Node]) throws(PipelineFileError) {
        func written(_ source: SourceSpec) -> Set<String> {
            var entities: Set<String> = [source.entity]
            var pending = source.nested
            while let mapping = pending.popLast() {
                entities.insert(mapping.destination)
                pending += mapping.nested
            }
            return entities
        }
        for source in sources where source.mode == .replace {
            for other in sources where other.name != source.name && written(other).contains(source.entity) {
                let node = nodes.first { node in
                    guard case .mapping(let mapping) = node, let name = mapping["name"], case .scalar(let scalar) = name else { return false }
                    return scalar.string == source.name
                }
                throw error(node, "source \(source.name) has mode replace, but source \(other.name) also writes \(source.entity): replace would delete its rows")
            }
        }
    }

    func sequenceNodes(_ node: Node?) -> [Node] {
        guard case .sequence(let sequence)? = node else { return [] }
        return Array(sequence)
    }

    private mutating func readSource(_ node: Node, pipeline: String, entities: [PipelineEntity]) throws(PipelineFileError) -> SourceSpec {
        let keys = try keyedMapping(node, "a source", allowed: (["name", "entity", "url", "format", "records", "headers", "paginate", "fields", "dates",
                                                             "mode", "on_error", "rejects", "timeout", "retries", "max_bytes", "incremental",
                                                             "for_each", "csv"] as Set<String>).union(Self.version3SourceKeys)
                                                             .union(Self.version4SourceKeys),
                               required: ["name", "entity", "url"])
        let keeping: Set<String> = keys["for_each"] == nil ? [] : ["item"]
        let name = try string(keys["name"]!, "a source's name")
        guard !name.isEmpty else { throw error(keys["name"], "a source's name must not be empty") }
        let entityName = try string(keys["entity"]!, "entity of source \(name)")
        guard let entity = entities.first(where: { $0.name == entityName }) else {
            throw error(keys["entity"], "source \(name) names entity '\(entityName)', which is not defined")
        }
        let url = try interpolate(keys["url"]!, "url of source \(name)", keeping: keeping)
        guard !url.isEmpty else { throw error(keys["url"], "url of source \(name) is empty") }
        var isNDJSON = false
        var csv: CSVInput?
        if let format = keys["format"] {
            switch try string(format, "format") {
            case "json": isNDJSON = false
            case "ndjson": isNDJSON = true
            case "csv":
                try requireVersion3(format, "format: csv")
                isNDJSON = true
                csv = CSVInput()
            case let other: throw error(format, "format \"\(other)\" of source \(name) must be json, ndjson or csv (version 3)")
            }
        }
        if let node = keys["csv"] {
            try requireVersion3(node, "csv")
            guard csv != nil else { throw error(node, "csv options of source \(name) need format: csv") }
            let options = try keyedMapping(node, "csv of source \(name)", allowed: ["delimiter", "header"])
            if let delimiter = options["delimiter"] {
                let text = try string(delimiter, "csv.delimiter")
                guard text.utf8.count == 1, let byte = text.utf8.first, byte < 0x80, byte != UInt8(ascii: "\""), byte != 0x0A, byte != 0x0D else {
                    throw error(delimiter, "csv.delimiter of source \(name) must be one ASCII character other than a quote or a line break, not \(written(delimiter))")
                }
                csv?.delimiter = byte
            }
            if let header = options["header"] { csv?.header = try boolean(header, "csv.header") }
        }
        if csv != nil, let node = keys["records"] { throw error(node, "source \(name) has format: csv, whose rows are the records: records does not apply") }
        let records = try keys["records"].map { node throws(PipelineFileError) in try dotPath(node, "records of source \(name)") }
        var headers: [(name: String, value: String)] = []
        if let node = keys["headers"] {
            guard case .mapping(let mapping) = node else { throw error(node, "headers of source \(name) must be a mapping, not \(written(node))") }
            for (headerKey, headerValue) in mapping {
                let header = try string(headerKey, "a header name")
                guard !header.isEmpty, header.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
                    throw error(headerKey, "'\(header)' is not a header name")
                }
                headers.append((header, try interpolate(headerValue, "header \(header) of source \(name)", keeping: keeping)))
            }
        }
        let pagination = try keys["paginate"].map { node throws(PipelineFileError) in try readPagination(node, source: name) }
        let dates = try keys["dates"].map { node throws(PipelineFileError) in try dateFormat(node, "dates of source \(name)") } ?? .iso8601
        let (fields, nested) = try readFields(keys["fields"], of: entity, entities: entities, source: name)
        var mode = SyncMode.upsert
        if let node = keys["mode"] {
            guard let value = SyncMode(rawValue: try string(node, "mode")) else {
                throw error(node, "mode \(written(node)) of source \(name) must be upsert, append, replace or insert (version 3)")
            }
            if value == .insert {
                try requireVersion3(node, "mode: insert")
                guard nested.isEmpty else {
                    throw error(node, "mode: insert of source \(name) takes a source without nested mappings (its records' own rows are inserted or left as they are)")
                }
            }
            mode = value
        }
        var onError = ErrorPolicy.fail
        if let node = keys["on_error"] {
            guard let value = ErrorPolicy(rawValue: try string(node, "on_error")) else { throw error(node, "on_error \(written(node)) of source \(name) must be fail or skip") }
            onError = value
        }
        let rejects = try keys["rejects"].map { node throws(PipelineFileError) in try string(node, "rejects") } ?? "rejects/\(pipeline)-\(name).ndjson"
        let timeout = try keys["timeout"].map { node throws(PipelineFileError) in try number(node, "timeout of source \(name)") } ?? 30
        let retries = try keys["retries"].map { node throws(PipelineFileError) in try integer(node, "retries of source \(name)", in: 0...100) } ?? 3
        let maxBytes = try keys["max_bytes"].map { node throws(PipelineFileError) in Int64(try integer(node, "max_bytes of source \(name)", in: 1...Int.max)) }
        var incremental: IncrementalSpec?
        if let node = keys["incremental"] {
            let spec = try keyedMapping(node, "incremental of source \(name)", allowed: ["cursor", "param", "initial", "lag"], required: ["cursor", "param"])
            let cursor = try string(spec["cursor"]!, "incremental cursor")
            guard entity.attributes.contains(where: { $0.name == cursor }) else {
                throw error(spec["cursor"], "incremental cursor '\(cursor)' is not an attribute of \(entity.name)")
            }
            let parameter = try string(spec["param"]!, "incremental param")
            guard !parameter.isEmpty else { throw error(spec["param"], "incremental param must not be empty") }
            incremental = IncrementalSpec(cursor: cursor, parameter: parameter)
            if let initial = spec["initial"] {
                try requireVersion3(initial, "incremental.initial")
                incremental?.initial = try interpolate(initial, "incremental.initial of source \(name)", keeping: keeping)
            }
            if let lag = spec["lag"] {
                try requireVersion3(lag, "incremental.lag")
                guard case .scalar(let scalar) = lag, scalar.style == .plain, let seconds = Double(scalar.string),
                      (0...3_153_600_000).contains(seconds) else {
                    throw error(lag, "incremental.lag of source \(name) must be between 0 and 3153600000 seconds (a century)")
                }
                let type = entity.attributes.first { $0.name == cursor }?.type
                guard type == .date || type == .integer || type == .double else {
                    throw error(lag, "incremental.lag of source \(name) needs a date or number cursor; \(cursor) is a \(type.map { "\($0)" } ?? "?")")
                }
                incremental?.lag = seconds
            }
        }
        var source = SourceSpec(name: name, entity: entity.name, url: url, isNDJSON: isNDJSON, records: records, headers: headers,
                                pagination: pagination, fields: fields, nested: nested, dates: dates, mode: mode, onError: onError, rejects: rejects,
                                timeout: timeout, retries: retries, maxBytes: maxBytes, incremental: incremental)
        source.csv = csv
        try readAccess(keys, into: &source, keeping: keeping)
        try readNetworkKeys(keys, into: &source)
        return source
    }

    /// The version-3 keys of a source: `auth`, `method`, `body`, `on_status` and `paginate.in`.
    private mutating func readAccess(_ keys: [String: Node], into source: inout SourceSpec, keeping: Set<String>) throws(PipelineFileError) {
        let name = source.name
        // (A GraphQL answer is never its record: its data is under `records`.)
        source.objectPageIsRecord = version >= 3 && source.records == nil && !source.isNDJSON && keys["graphql"] == nil
        for key in Self.version3SourceKeys.sorted() {
            if let node = keys[key] { try requireVersion3(node, key) }
        }
        if let node = keys["auth"] { source.auth = try readAuth(node, source: name, keeping: keeping) }
        if let node = keys["method"] { source.method = try readMethod(node, source: name) }
        if let node = keys["graphql"] {
            if let method = keys["method"], source.method != "POST" {
                throw error(method, "source \(name) has graphql, which is sent as a POST, not \(source.method)")
            }
            if let body = keys["body"] { throw error(body, "source \(name) has graphql and body: the query and its variables are the body") }
            source.method = "POST"
            source.body = try readGraphQL(node, source: name, keeping: keeping)
            source.isGraphQL = true
        }
        if let node = keys["body"], !source.isGraphQL {
            guard source.method != "GET" else {
                throw error(keys["method"] ?? node, "source \(name) has a body, which a GET does not send: say method: POST (or PUT)")
            }
            source.body = try readBody(node, source: name, keeping: keeping)
        }
        if let node = keys["on_status"] { source.emptyStatuses = try readOnStatus(node, source: name) }
        if case .mapping(let paginate)? = keys["paginate"] {
            for key in ["variable", "has_more"] {
                guard let node = paginate[key] else { continue }
                try requireVersion3(node, "paginate.\(key)")
                guard source.isGraphQL else { throw error(node, "paginate.\(key) of source \(name) is for a graphql source (a query's variable, its pageInfo)") }
            }
            if paginate["variable"] != nil { source.pagingIn = .graphQLVariables }
            if let node = paginate["has_more"] { source.hasMore = try dotPath(node, "paginate.has_more") }
        }
        if case .mapping(let paginate)? = keys["paginate"], let node = paginate["in"] {
            guard !source.isGraphQL else { throw error(node, "paginate.in of source \(name): a graphql source's cursor goes in its variables (paginate.variable)") }
            try requireVersion3(node, "paginate.in")
            guard let placement = ParameterPlacement(rawValue: try string(node, "paginate.in")) else {
                throw error(node, "paginate.in of source \(name) must be query or body, not \(written(node))")
            }
            if placement == .body {
                guard case .object? = source.body else {
                    throw error(node, "paginate.in of source \(name) is body, but the source has no body (a JSON object) to put the parameter in")
                }
                if case .next? = source.pagination { throw error(node, "paginate.in: body of source \(name) needs a parameter form (param, cursor or offset), not next") }
                if case .linkHeader? = source.pagination { throw error(node, "paginate.in: body of source \(name) needs a parameter form (param, cursor or offset), not link_header") }
            }
            source.pagingIn = placement
        }
    }

    private func readPagination(_ node: Node, source: String) throws(PipelineFileError) -> Pagination {
        var keys = try keyedMapping(node, "paginate of source \(source)",
                                    allowed: ["next", "link_header", "param", "start", "cursor", "offset", "in", "variable", "has_more"])
        keys["in"] = nil        // where the parameter goes, and GraphQL's has_more: `readAccess`
        keys["has_more"] = nil
        if let offset = keys["offset"] {
            try requireVersion3(offset, "paginate.offset")
            guard keys.count == 1 else { throw error(node, "paginate of source \(source): 'offset' stands alone (besides 'in')") }
            return try readOffset(offset, source: source)
        }
        if let next = keys["next"] {
            guard keys.count == 1 else { throw error(node, "paginate of source \(source): 'next' stands alone") }
            return .next(path: try dotPath(next, "paginate.next"))
        }
        if let link = keys["link_header"] {
            guard keys.count == 1 else { throw error(node, "paginate of source \(source): 'link_header' stands alone") }
            guard try boolean(link, "paginate.link_header") else { throw error(link, "paginate.link_header must be true when given, not \(written(link))") }
            return .linkHeader
        }
        if let cursor = keys["cursor"], let variable = keys["variable"] {
            guard keys["param"] == nil, keys["start"] == nil else {
                throw error(node, "paginate of source \(source): 'cursor' with 'variable' (a GraphQL variable) takes no 'param' or 'start'")
            }
            return .cursor(path: try dotPath(cursor, "paginate.cursor"), parameter: try string(variable, "paginate.variable"))
        }
        if let cursor = keys["cursor"] {
            guard let param = keys["param"], keys["start"] == nil else {
                throw error(node, "paginate of source \(source): 'cursor' needs 'param' (the query parameter that carries it) and no 'start'")
            }
            return .cursor(path: try dotPath(cursor, "paginate.cursor"), parameter: try string(param, "paginate.param"))
        }
        if let param = keys["param"] {
            let start = try keys["start"].map { node throws(PipelineFileError) in try integer(node, "paginate.start") } ?? 1
            return .page(parameter: try string(param, "paginate.param"), start: start)
        }
        throw error(node, "paginate of source \(source) needs one of: next, link_header, param (with start), cursor (with param), offset")
    }
}
