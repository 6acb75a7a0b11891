import SwellCSV
import SwellJSON

/// What in the file defines a source's requests and what they write, as one SHA-256: its
/// entity and mode, URL, method, body, the names of its headers, its format and records
/// path, fields and nested mappings, pagination, incremental cursor, and the items of its
/// `for_each`. A position written under another fingerprint belongs to other requests and is
/// dropped (README, "Resuming a stopped source"). Secret values are hashed as the `${VAR}`
/// they came from (a rotated token keeps the position); header values are not hashed at all.
enum SourceFingerprint {
    /// The fingerprint of `source`, one of `forEachItems` (its `for_each`'s items in this run; empty otherwise).
    static func of(_ source: SourceSpec, forEachItems: [String], template: SecretTemplate) -> String {
        var parts: [String] = []
        func add(_ name: String, _ value: String) { parts.append("\(name)=\(value.count):\(value)") }
        add("entity", source.entity)
        add("mode", source.mode.rawValue)
        add("url", template.template(source.url) ?? "secret \(source.url.count)")
        add("method", source.method)
        add("body", source.body.map { template.template($0.jsonText) ?? "secret" } ?? "-")
        add("headers", source.headers.map { $0.name.lowercased() }.joined(separator: ","))
        add("format", source.csv.map { "csv \($0.delimiter) \($0.header)" } ?? (source.isNDJSON ? "ndjson" : "json"))
        add("records", source.records?.joined(separator: ".") ?? "-")
        add("object_page", "\(source.objectPageIsRecord)")
        add("graphql", "\(source.isGraphQL)")
        add("fields", fields(source.fields))
        add("dates", "\(source.dates)")
        add("nested", source.nested.map(nested).joined(separator: ";"))
        add("paginate", source.pagination.map { "\($0)" } ?? "-")
        add("paging_in", "\(source.pagingIn)")
        add("has_more", source.hasMore?.joined(separator: ".") ?? "-")
        add("incremental", source.incremental.map { "\($0.cursor) \($0.parameter)" } ?? "-")
        add("for_each", forEachItems.map { "\($0.count):\($0)" }.joined())
        let digest = SHA256Digest()
        let text = parts.joined(separator: "\n")
        Array(text.utf8).withUnsafeBytes { digest.update($0) }
        return digest.finishHex()
    }

    /// Fields in name order (a dictionary's own order changes from run to run).
    private static func fields(_ fields: [String: FieldSpec]) -> String {
        fields.keys.sorted().map { name in
            let spec = fields[name]!
            return "\(name):\(spec.path.joined(separator: "."))\(spec.dateFormat.map { " \($0)" } ?? "")"
        }.joined(separator: ",")
    }

    private static func nested(_ mapping: NestedMapping) -> String {
        "\(mapping.relationship)>\(mapping.destination)@\(mapping.path.joined(separator: "."))"
            + "{\(fields(mapping.fields))}[\(mapping.nested.map(nested).joined(separator: ";"))]\(mapping.byKey.map { "key \($0.create)" } ?? "")"
    }
}
