import SwellContexts
import Yams

/// An export: its entity, file, columns (attributes, or in version 2 key paths
/// with an optional `join`), `where` checked against the entity, `sort` and the
/// CSV options.
extension PipelineFileReader {
    /// One item of `exports`.
    func readExport(_ node: Node, entities: [PipelineEntity], history: Bool) throws(PipelineFileError) -> ExportSpec {
        let keys = try keyedMapping(node, "an export", allowed: ["name", "entity", "path", "columns", "where", "sort", "header", "gzip_level", "escape_formulas",
                                                                  "changes"],
                               required: ["name", "entity", "path", "columns"])
        let name = try string(keys["name"]!, "an export's name")
        guard !name.isEmpty else { throw error(keys["name"], "an export's name must not be empty") }
        let entityName = try string(keys["entity"]!, "entity of export \(name)")
        guard let entity = entities.first(where: { $0.name == entityName }) else {
            throw error(keys["entity"], "export \(name) names entity '\(entityName)', which is not defined")
        }
        let path = try string(keys["path"]!, "path of export \(name)")
        guard !path.isEmpty else { throw error(keys["path"], "path of export \(name) is empty") }
        var columns: [ExportColumn] = []
        var columnNodes: [Node] = []
        if case .scalar(let scalar) = keys["columns"]!, scalar.string == "*" {
            // Version 4: every attribute of the entity, the key first, then in model order.
            try requireVersion4(keys["columns"]!, "columns: \"*\"")
            let ordered = entity.key + entity.attributes.map(\.name).filter { !entity.key.contains($0) }
            columns = ordered.map { ExportColumn(name: $0, attribute: $0, format: nil) }
        } else {
            guard case .sequence(let nodes) = keys["columns"]!, !nodes.isEmpty else {
                throw error(keys["columns"], "columns of export \(name) must be a list of attribute names or {name, value, format}\(version >= 4 ? ", or \"*\"" : ""), not \(written(keys["columns"]))")
            }
            columnNodes = Array(nodes)
        }
        for columnNode in columnNodes {
            let column: ExportColumn
            if case .mapping = columnNode {
                let spec = try keyedMapping(columnNode, "a column of export \(name)", allowed: ["name", "value", "format", "join"], required: ["value"])
                let attribute = try string(spec["value"]!, "a column's value")
                let title = try spec["name"].map { node throws(PipelineFileError) in try string(node, "a column's name") } ?? attribute
                let format = try spec["format"].map { node throws(PipelineFileError) in try string(node, "a column's format") }
                let join = try spec["join"].map { node throws(PipelineFileError) in try string(node, "a column's join") }
                let (type, toMany) = try exportValue(attribute, of: entity, entities: entities, node: spec["value"]!, export: name)
                if let joinNode = spec["join"] {
                    try requireVersion2(joinNode, "join of column \(title)")
                    guard toMany else { throw error(joinNode, "column \(title) of export \(name) has a join but '\(attribute)' does not go through a to-many relationship") }
                } else if toMany {
                    throw error(spec["value"], "column \(title) of export \(name): '\(attribute)' goes through a to-many relationship and needs a join (like join: \"|\")")
                }
                if let format {
                    guard type == .date else {
                        throw error(spec["format"], "column \(title) of export \(name) has a format but \(attribute) is of type \(type.rawValue)")
                    }
                    try checkDatePattern(format, node: spec["format"]!, what: "format of column \(title)")
                }
                column = ExportColumn(name: title, attribute: attribute, format: format, join: join)
            } else {
                let attribute = try string(columnNode, "a column")
                if attribute.contains(".") {
                    let (_, toMany) = try exportValue(attribute, of: entity, entities: entities, node: columnNode, export: name)
                    if toMany { throw error(columnNode, "column '\(attribute)' of export \(name) goes through a to-many relationship and needs a join: write { value: \(attribute), join: \"|\" }") }
                } else if !entity.attributes.contains(where: { $0.name == attribute }) {
                    throw error(columnNode, "column '\(attribute)' of export \(name) is not an attribute of \(entity.name)")
                }
                column = ExportColumn(name: attribute, attribute: attribute, format: nil)
            }
            columns.append(column)
        }
        var predicate: String?
        if let whereNode = keys["where"] {
            let format = try string(whereNode, "where of export \(name)")
            do {
                try FetchPredicate.parse(format: format).nilMatching(PipelineFile.predicateNilMatching(version: version))
                    .validate(against: entity.name, in: ManagedObjectModel(entities: entities.map(\.description)))
            } catch {
                throw self.error(whereNode, "where of export \(name): \(error.message) (at character \(error.column) of the predicate)",
                                 offset: Self.columnOffset(of: whereNode, error.offset))
            }
            predicate = format
        }
        var sort: [(attribute: String, ascending: Bool)] = []
        if let sortNode = keys["sort"] {
            let items: [Node]
            switch sortNode {
            case .sequence(let sequence): items = Array(sequence)
            case .scalar: items = [sortNode]
            default: throw error(sortNode, "sort of export \(name) must be a list like [date desc, location], not \(written(sortNode))")
            }
            for item in items {
                let parts = try string(item, "a sort key").split(separator: " ", omittingEmptySubsequences: true)
                guard (1...2).contains(parts.count) else { throw error(item, "a sort key is 'attribute' or 'attribute asc|desc'") }
                let attribute = String(parts[0])
                if attribute.contains(".") {
                    let (_, toMany) = try exportValue(attribute, of: entity, entities: entities, node: item, export: name, role: "sort key")
                    if toMany { throw error(item, "sort key '\(attribute)' of export \(name) goes through a to-many relationship") }
                } else if !entity.attributes.contains(where: { $0.name == attribute }) {
                    throw error(item, "sort key '\(attribute)' of export \(name) is not an attribute of \(entity.name)")
                }
                var ascending = true
                if parts.count == 2 {
                    switch parts[1].lowercased() {
                    case "asc": ascending = true
                    case "desc": ascending = false
                    default: throw error(item, "sort direction \"\(parts[1])\" must be asc or desc")
                    }
                }
                sort.append((attribute, ascending))
            }
        }
        let header = try keys["header"].map { node throws(PipelineFileError) in try boolean(node, "header") } ?? true
        let gzipLevel = try keys["gzip_level"].map { node throws(PipelineFileError) in try integer(node, "gzip_level of export \(name)", in: 1...9) } ?? 6
        let escapeFormulas = try keys["escape_formulas"].map { node throws(PipelineFileError) in try boolean(node, "escape_formulas") } ?? false
        var export = ExportSpec(name: name, entity: entity.name, path: path, columns: columns, predicate: predicate, sort: sort,
                                header: header, gzipLevel: gzipLevel, escapeFormulas: escapeFormulas)
        if let node = keys["changes"] {
            try requireVersion3(node, "changes of export \(name)")
            guard try string(node, "changes of export \(name)") == "since_last" else {
                throw error(node, "changes of export \(name) must be since_last, not \(written(node))")
            }
            guard history else {
                throw error(node, "changes of export \(name) needs the store's history: add history: true at the top of the file")
            }
            guard !entity.key.isEmpty else { throw error(node, "changes of export \(name) needs \(entity.name) to have a key") }
            // A deleted row is written by its key: without the key columns it would be blank.
            for key in entity.key where !columns.contains(where: { $0.attribute == key }) {
                throw error(node, "changes of export \(name) needs the key column \(key) among its columns (a deleted row is written by its key)")
            }
            export.changesSinceLast = true
        }
        return export
    }

    /// Where a predicate's character offset lands in the file: plain scalars start at their mark, quoted ones one later.
    private static func columnOffset(of node: Node, _ offset: Int) -> Int {
        guard case .scalar(let scalar) = node else { return 0 }
        switch scalar.style {
        case .singleQuoted, .doubleQuoted: return offset + 1
        case .plain: return offset
        default: return 0
        }
    }
}
