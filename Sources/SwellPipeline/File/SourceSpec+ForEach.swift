import SwellHTTP

/// A source of a `for_each` for one of its items: `${item}` filled in where the file put it,
/// each place the way it needs (README, "Values from the API are untrusted").
extension SourceSpec {
    /// The placeholder a `for_each` fills.
    static let itemPlaceholder = "${item}"

    /// This source for item `index` of its `for_each`: `${item}` filled in its name (or `[item]`
    /// appended), URL, headers, body, auth values, incremental initial value and rejects file.
    ///
    /// - In the URL (and an OAuth token URL) the item is percent-encoded for the part it fills
    ///   (`HTTPLinks.filling`): in the path each `/`-separated piece, in the query as a value.
    /// - Headers, auth values and `initial` take it as it is (a query parameter is encoded when
    ///   it is set); a body is a JSON tree, so the item stays one string in it, escaped when sent.
    /// - In the rejects path it is one file name (`ForEachItem.fileNameComponent`): it cannot
    ///   leave the folder the path names.
    ///
    /// An item that cannot be used (`ForEachItem.problem(with:)`, or one that would name another
    /// host) gives an expansion that carries `itemRejection`, with the item shown escaped in
    /// its name and nothing else filled: it never runs.
    func expanded(item: String, index: Int, pipeline: String) -> SourceSpec {
        let placeholder = Self.itemPlaceholder
        var expanded = self
        expanded.forEach = (name, item)
        expanded.forEachEntity = nil
        func named(_ shown: String) -> String {
            name.contains(placeholder) ? name.replacingOccurrences(of: placeholder, with: shown) : "\(name)[\(shown)]"
        }
        func fill(_ text: String) -> String { text.replacingOccurrences(of: placeholder, with: item) }
        func fillURL(_ text: String) -> String? { HTTPLinks.filling(placeholder, with: item, in: text) }
        var problem = ForEachItem.problem(with: item)
        if problem == nil {
            let filledURL = fillURL(url)
            let filledAuth = auth.map { $0.filling(with: fill, url: fillURL) }
            if let filledURL, filledAuth != .some(nil) {
                expanded.url = filledURL
                expanded.auth = filledAuth ?? nil
            } else {
                problem = "it would name another host, port or user in a URL of the source, which takes only letters, digits and - . _ ~ there"
            }
        }
        if let problem {
            let rejection = ForEachItemRejection(item: item, index: index, reason: problem)
            expanded.itemRejection = rejection
            expanded.name = named(rejection.shown)
        } else {
            expanded.name = named(item)
            expanded.headers = headers.map { ($0.name, fill($0.value)) }
            expanded.body = body.map { PipelineFileReader.filling($0, with: fill) }
            expanded.incremental?.initial = incremental?.initial.map(fill)
        }
        expanded.rejects = rejects.contains(placeholder)
            ? rejects.replacingOccurrences(of: placeholder, with: ForEachItem.fileNameComponent(item))
            : "rejects/\(pipeline)-\(ForEachItem.fileNameComponent(expanded.name)).ndjson"
        return expanded
    }
}
