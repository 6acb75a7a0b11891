import SwellJSON
import SwellContexts

extension InitPipeline {
    /// The pipeline file (version 2, or 3 for a version-3 form: one-object page, offsets, CSV) with a comment on every guess: why this type,
    /// why optional, why this key, why a relationship, where the records are, which
    /// pagination. Headers keep `${VAR}` as typed: no value from the environment is written.
    public var yaml: String {
        var out = YAMLLines()
        out.comment("Written by `swell init` from \(url): \(recordCount) records on the first page.")
        out.comment("Each guess below says why in a comment: check them, then `swell validate` this file.")
        out.line("version: \(version)")
        out.line("name: \(YAMLLines.scalar(name))")
        out.blank()
        out.line("entities:")
        for entity in entities { write(entity, into: &out) }
        out.blank()
        writeSource(into: &out)
        out.blank()
        out.line("exports:")
        out.line("  - name: \(YAMLLines.scalar(export.name))")
        out.line("    entity: \(mainEntity.name)")
        out.line("    path: \(YAMLLines.scalar(export.path))")
        out.line("    columns: [\(export.columns.joined(separator: ", "))]", comment: "the key and the scalar attributes of \(mainEntity.name)")
        return out.text
    }

    private func write(_ entity: InferredEntity, into out: inout YAMLLines) {
        out.line("  \(entity.name):")
        out.line("    key: [\(entity.key.joined(separator: ", "))]", comment: entity.keyReason)
        out.line("    attributes:")
        for attribute in entity.attributes {
            out.line("      \(attribute.name): \(attribute.typeText)", comment: attribute.reason)
        }
        for skipped in entity.skipped { out.comment(skipped, indent: 6) }
        guard !entity.relationships.isEmpty else { return }
        out.line("    relationships:")
        for relationship in entity.relationships {
            let many = relationship.isToMany ? ", many: true" : ""
            out.line("      \(relationship.name): { to: \(relationship.destination)\(many) }", comment: relationship.reason)
        }
    }

    private func writeSource(into out: inout YAMLLines) {
        out.line("sources:")
        out.line("  - name: \(YAMLLines.scalar(name))")
        out.line("    entity: \(mainEntity.name)")
        out.line("    url: \(YAMLLines.scalar(url))")
        if let graphQL {
            out.line("    graphql:", comment: "the query the sample answered (sent as the POST body with its variables)")
            out.line("      query: \(YAMLLines.scalar(graphQL.query))")
            if case .object(let variables) = graphQL.variables, !variables.members.isEmpty {
                out.line("      variables: \(YAMLLines.flowJSON(graphQL.variables))")
            }
        }
        if let csv {
            out.line("    format: csv", comment: recordsReason)
            if csv.delimiter != UInt8(ascii: ",") {
                let shown = csv.delimiter == UInt8(ascii: "\t") ? "\"\\t\"" : YAMLLines.scalar(String(UnicodeScalar(csv.delimiter)))
                out.line("    csv: { delimiter: \(shown) }", comment: "the header line has more of these than commas")
            }
        } else if let records {
            out.line("    records: \(YAMLLines.scalar(records.joined(separator: ".")))", comment: recordsReason)
        } else {
            out.comment(recordsReason + " (no records: key)", indent: 4)
        }
        if !headers.isEmpty {
            out.line("    headers:")
            for header in headers { out.line("      \(YAMLLines.scalar(header.name)): \(YAMLLines.scalar(header.value))") }
        }
        switch pagination {
        case .next(let path)?:
            out.line("    paginate: { next: \(YAMLLines.scalar(path.joined(separator: "."))) }", comment: paginationReason)
        case .linkHeader?:
            out.line("    paginate: { link_header: true }", comment: paginationReason)
        case .cursor(let path, let parameter)? where graphQL != nil:
            let more = graphQL?.hasMore.map { ", has_more: \(YAMLLines.scalar($0.joined(separator: ".")))" } ?? ""
            out.line("    paginate: { cursor: \(YAMLLines.scalar(path.joined(separator: "."))), variable: \(YAMLLines.scalar(parameter))\(more) }",
                     comment: paginationReason)
        case .cursor(let path, let parameter)?:
            out.line("    paginate: { cursor: \(YAMLLines.scalar(path.joined(separator: "."))), param: \(YAMLLines.scalar(parameter)) }",
                     comment: paginationReason)
        case .page(let parameter, let start)?:
            out.line("    paginate: { param: \(YAMLLines.scalar(parameter)), start: \(start) }", comment: paginationReason)
        case .offset(let parameter, let limitParameter, let limit, let start, let total)?:
            var fields = ["param: \(YAMLLines.scalar(parameter))"]
            if let limitParameter { fields.append("limit_param: \(YAMLLines.scalar(limitParameter))") }
            fields.append("limit: \(limit)")
            if start != 0 { fields.append("start: \(start)") }
            if let total { fields.append("total: \(YAMLLines.scalar(total.joined(separator: ".")))") }
            out.line("    paginate: { offset: { \(fields.joined(separator: ", ")) } }", comment: paginationReason)
        case nil:
            out.comment("paginate: \(paginationReason)", indent: 4)
        }
        let renamed = mainEntity.attributes.filter { $0.name != $0.field }
        guard !renamed.isEmpty || !mainEntity.relationships.isEmpty else { return }
        out.line("    fields:")
        for attribute in renamed {
            let why = attribute.field.contains(".") ? "a dot path into the record" : "the JSON key \(YAMLLines.scalar(attribute.field)) is not a valid attribute name"
            out.line("      \(attribute.name): \(YAMLLines.scalar(attribute.field))", comment: why)
        }
        for relationship in mainEntity.relationships { writeNested(relationship, indent: 6, into: &out) }
    }

    /// `relationship: { path, fields }` with every attribute and relationship of its destination.
    private func writeNested(_ relationship: InferredRelationship, indent: Int, into out: inout YAMLLines) {
        let pad = String(repeating: " ", count: indent)
        guard let destination = entities.first(where: { $0.name == relationship.destination }) else { return }
        out.line("\(pad)\(relationship.name):")
        out.line("\(pad)  path: \(YAMLLines.scalar(relationship.field))")
        out.line("\(pad)  fields:")
        for attribute in destination.attributes {
            out.line("\(pad)    \(attribute.name): \(YAMLLines.scalar(attribute.field))")
        }
        for inner in destination.relationships { writeNested(inner, indent: indent + 4, into: &out) }
    }
}

/// Lines of YAML with trailing comments, and the quoting rule for scalars.
struct YAMLLines {
    private(set) var text = ""

    mutating func line(_ content: String, comment: String? = nil) {
        text += content
        if let comment, !comment.isEmpty { text += "  # " + Self.oneLine(comment) }
        text += "\n"
    }

    mutating func comment(_ comment: String, indent: Int = 0) {
        text += String(repeating: " ", count: indent) + "# " + Self.oneLine(comment) + "\n"
    }

    mutating func blank() { text += "\n" }

    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// JSON text as a YAML flow value: JSON is YAML, but YAML refuses DEL and the C1
    /// controls as they are and folds U+2028/2029; inside JSON strings (the only place
    /// they can be) they become `\uXXXX`, which both read the same.
    static func flowJSON(_ value: JSONValue) -> String {
        var text = ""
        for scalar in value.jsonText.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                text += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// Words made of letters, digits and `_ . / -` (not YAML's true/false/null spellings,
    /// not starting with `-`) stay plain; anything else is double-quoted with escapes.
    static func scalar(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_./-".contains($0)) }
            && !text.hasPrefix("-") && !text.hasPrefix(".")
            && !["true", "false", "yes", "no", "on", "off", "null", "y", "n"].contains(text.lowercased())
            && Double(text) == nil
        guard !plain else { return text }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case "\r": quoted += "\\r"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                quoted += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
            case "\u{2028}", "\u{2029}":
                quoted += "\\u" + String(scalar.value, radix: 16)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
