import SwellHTTP
import SwellJSON

/// Guesses how a source pages from its first page, in this order:
///
/// 1. an HTTP `Link: <…>; rel="next"` header → `link_header: true`;
/// 2. a string in the body (outside the records) under a key that says "next"
///    (`next`, `links.next`, `_links.next.href`, `next_page_url`) that looks like
///    a URL (it holds `/`, `.`, `?` or a scheme) → `next: PATH`;
/// 3. a string or number under a key that says "cursor", "next", "page_token",
///    "continuation" or is `after` (`meta.next_cursor`, `nextPageToken`) → `cursor: PATH` with a
///    query parameter named after the key (`cursor`, `pageToken`, `after`);
///
/// 4. whole numbers `offset` and `limit` side by side (and a `total` beside them) → `offset`
///    (version 3);
///
/// else none (a `next` key that is null on this page is named in the reason).
enum PaginationInference {
    /// How deep into the body's objects to look.
    static let maxDepth = 3

    /// The pagination form and why (or why none).
    static func infer(body: JSONValue, records: [String]?, linkHeader: String?, pageURL: String) -> (Pagination?, String) {
        if let linkHeader, let next = HTTPLinks.nextLink(in: linkHeader, base: pageURL) {
            return (.linkHeader, "the response has a Link header with rel=\"next\" (\(FieldShape.example(.string(next))))")
        }
        var leaves: [(path: [String], value: JSONValue)] = []
        collect(body, path: [], records: records, into: &leaves)
        for (path, value) in leaves where path.contains(where: saysNext) {
            if case .string(let text) = value, looksLikeURL(text) {
                return (.next(path: path), "\(path.joined(separator: ".")) holds the next page's URL (\(FieldShape.example(value)))")
            }
        }
        for (path, value) in leaves where path.last.map(saysCursor) == true {
            let usable: Bool = switch value {
            case .string(let text): !text.isEmpty
            case .number: true
            default: false
            }
            if usable {
                let parameter = parameterName(for: path.last!)
                return (.cursor(path: path, parameter: parameter),
                        "\(path.joined(separator: ".")) looks like a cursor (\(FieldShape.example(value))), sent back as ?\(parameter)=…: check the parameter name your API wants")
            }
        }
        if let offset = offsetPaging(leaves) { return offset }
        if let (path, _) = leaves.first(where: { $0.path.last.map(saysNext) == true && $0.value == .null }) {
            return (nil, "none found; \(path.joined(separator: ".")) is null on this page: if it holds the next page's URL on others, add paginate: { next: \(path.joined(separator: ".")) }")
        }
        return (nil, "none found: no Link header, no next link or cursor in the page")
    }

    /// Offset paging (version 3): whole numbers named `offset` (or `skip`, `start`) and `limit`
    /// (or `per_page`, `page_size`, `size`) side by side, with a `total` (or `total_count`,
    /// `count`) beside them when there is one.
    private static func offsetPaging(_ leaves: [(path: [String], value: JSONValue)]) -> (Pagination, String)? {
        func number(_ value: JSONValue) -> Int? {
            if case .number(let number) = value, let int = number.int64 { return Int(int) }
            return nil
        }
        for (path, value) in leaves where ["offset", "skip", "start"].contains(path.last!.lowercased()) && number(value) != nil {
            let parent = path.dropLast()
            let siblings = leaves.filter { Array($0.path.dropLast()) == Array(parent) }
            guard let limit = siblings.first(where: { ["limit", "per_page", "page_size", "size"].contains($0.path.last!.lowercased()) }),
                  let size = number(limit.value), size > 0 else { continue }
            let total = siblings.first { ["total", "total_count", "count"].contains($0.path.last!.lowercased()) && number($0.value) != nil }
            let totalText = total.map { ", and the total at \($0.path.joined(separator: "."))" } ?? ""
            return (.offset(parameter: path.last!, limitParameter: limit.path.last!, limit: size, start: 0, total: total?.path),
                    "\(path.joined(separator: ".")) and \(limit.path.joined(separator: ".")) look like offset paging (\(size) a page\(totalText)), sent as ?\(path.last!)=…&\(limit.path.last!)=\(size): check the names your API wants (version 3)")
        }
        return nil
    }

    /// The scalars (and nulls) of the body's objects, depth first, skipping arrays and the records.
    private static func collect(_ value: JSONValue, path: [String], records: [String]?, into leaves: inout [(path: [String], value: JSONValue)]) {
        guard path != records ?? [], path.count <= maxDepth else { return }
        switch value {
        case .object(let object):
            for (key, member) in object.members where !key.isEmpty && !key.contains(".") {
                collect(member, path: path + [key], records: records, into: &leaves)
            }
        case .array:
            return
        default:
            if !path.isEmpty { leaves.append((path, value)) }
        }
    }

    private static func saysNext(_ key: String) -> Bool { key.lowercased().contains("next") }

    private static func saysCursor(_ key: String) -> Bool {
        let lower = key.lowercased()
        return lower.contains("cursor") || lower.contains("next") || lower.contains("pagetoken") || lower.contains("page_token")
            || lower.contains("continuation") || lower == "after"
    }

    private static func looksLikeURL(_ text: String) -> Bool {
        text.contains("://") || text.contains("/") || text.contains("?") || text.contains(".")
    }

    /// The query parameter a cursor key suggests: `next_cursor`/`endCursor` → `cursor`,
    /// `nextPageToken` → `pageToken`, `next_page` → `page`, `after` → `after`.
    static func parameterName(for key: String) -> String {
        let lower = key.lowercased()
        if lower.contains("cursor") { return "cursor" }
        guard lower.hasPrefix("next"), key.count > 4 else { return key }
        var rest = key.dropFirst(4)
        while rest.hasPrefix("_") || rest.hasPrefix("-") { rest = rest.dropFirst() }
        guard let first = rest.first else { return key }
        return first.lowercased() + rest.dropFirst()
    }
}
