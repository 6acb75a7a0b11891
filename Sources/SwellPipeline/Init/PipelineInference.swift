import SwellHTTP
import SwellJSON
import SwellContexts

/// What `swell init` knows besides the sample's body: how the user named things
/// and where the sample came from.
public struct InitOptions: Sendable {
    /// The pipeline name; nil: from the URL's last path segment or the file name.
    public var name: String?
    /// The URL or file path as typed (`${VAR}` kept): written as the source's url.
    public var url: String
    /// The URL after `${VAR}` interpolation, for resolving relative links (never written).
    public var pageURL: String
    /// Request headers as typed (`${VAR}` kept).
    public var headers: [HTTPHeader]
    /// `--records`: the dot path to the records; nil: found in the page.
    public var records: [String]?
    /// The response's `Link` header, if any.
    public var linkHeader: String?
    /// Set when the sample was CSV (`InitSample.csv`): the source reads `format: csv`.
    public var csv: CSVInput?
    /// `--graphql`: the query (and variables) the sample answered; the source is then a
    /// `graphql` source paging through the query's cursor variable.
    public var graphQL: InitGraphQL?

    /// Options for the sample read from `url`; `pageURL` nil: `url` itself.
    public init(name: String? = nil, url: String, pageURL: String? = nil, headers: [HTTPHeader] = [], records: [String]? = nil,
                linkHeader: String? = nil) {
        self.name = name
        self.url = url
        self.pageURL = pageURL ?? url
        self.headers = headers
        self.records = records
        self.linkHeader = linkHeader
    }
}

/// From one sample page to a pipeline description: finds the records, infers
/// the entities (`EntityInference`) and the pagination (`PaginationInference`),
/// and adds a CSV export of the main entity. Pure: no I/O.
public enum PipelineInference {
    /// Record paths so generic that the pipeline name makes a better entity name.
    private static let genericPaths: Set<String> = [
        "data", "items", "results", "result", "records", "rows", "entries", "list", "objects", "values", "value",
        "content", "hits", "nodes", "elements", "response", "payload", "page",
    ]

    /// The pipeline `swell init` writes for the page `body`.
    ///
    /// - Throws: `PipelineError` `.usage` for a name that is not `[a-z0-9_-]+`, `.data` when
    ///   the page has no array of records (at `--records`, or anywhere when not given), the
    ///   records are not objects or there are none, or no key can be found.
    public static func infer(_ body: JSONValue, options: InitOptions) throws(PipelineError) -> InitPipeline {
        let name = options.name ?? InitNames.pipelineName(fromURL: options.url)
        guard PipelineFileReader.isPipelineName(name) else {
            throw PipelineError(.usage, "--name \(name): a pipeline name must match [a-z0-9_-]+")
        }
        if let message = InitGraphQL.failure(of: body, isGraphQL: options.graphQL != nil) {
            throw PipelineError(.unavailable, "the GraphQL answer from \(options.url) has errors and no data: \(message)")
        }
        var (path, records, reason) = try locateRecords(in: body, path: options.records, url: options.url)
        if options.csv != nil {
            guard options.records == nil else { throw PipelineError(.usage, "--records does not apply to a CSV sample: its rows are the records") }
            reason = "format: csv, the sample's \(records.count) rows are the records (the header row names the fields)"
        }
        let entityName: String
        if let last = path?.last, !genericPaths.contains(last.lowercased()) {
            entityName = InitNames.entityName(from: last, singular: true)
        } else {
            entityName = InitNames.entityName(from: name, singular: true)
        }
        var inference = EntityInference()
        try inference.inferMain(name: entityName, records: records)
        var (pagination, paginationReason) = PaginationInference.infer(body: body, records: path, linkHeader: options.linkHeader,
                                                                         pageURL: options.pageURL)
        var graphQL = options.graphQL
        if let connection = InitGraphQL.connection(in: body), connection.nodes == path {
            (pagination, paginationReason) = graphQLPaging(connection, query: &graphQL)
        }
        let main = inference.entities[0]
        let scalars = main.attributes.filter { $0.type != .json && !main.key.contains($0.name) }.map(\.name)
        let export = InitExport(name: "\(name)-csv", path: "out/\(name).csv", columns: main.key + scalars)
        var pipeline = InitPipeline(name: name, url: options.url, headers: options.headers, records: path, recordsReason: reason,
                                    recordCount: records.count, pagination: pagination, paginationReason: paginationReason,
                                    entities: inference.entities, export: export)
        if path == nil, case .object = body { pipeline.version = 3 }
        if case .offset? = pagination { pipeline.version = 3 }
        if let graphQL {
            pipeline.graphQL = graphQL
            pipeline.version = 3
        }
        if let csv = options.csv {
            pipeline.csv = csv
            pipeline.version = 3
        }
        return pipeline
    }

    /// A GraphQL connection's paging: its `pageInfo.endCursor` sent back in the query's
    /// cursor variable, `pageInfo.hasNextPage` saying whether more follow.
    private static func graphQLPaging(_ connection: InitGraphQL.Connection, query: inout InitGraphQL?) -> (Pagination?, String) {
        guard var graphQL = query else {
            return (nil, "a GraphQL answer: give the query with --graphql QUERY and swell init writes a graphql source that pages through it")
        }
        guard let endCursor = connection.endCursor else {
            return (nil, "the GraphQL connection has no pageInfo.endCursor to page with (ask for pageInfo { endCursor hasNextPage })")
        }
        guard let variable = graphQL.cursorVariable else {
            return (nil, "the query declares no String variable for the cursor (like $after: String) to page with")
        }
        graphQL.hasMore = connection.hasNextPage
        query = graphQL
        let more = connection.hasNextPage.map { ", \($0.joined(separator: ".")) says whether another page follows" } ?? ""
        return (.cursor(path: endCursor, parameter: variable),
                "\(endCursor.joined(separator: ".")) is the cursor, sent as the query's $\(variable)\(more)")
    }

    /// The records' path (nil: the page itself), the records, and why these.
    static func locateRecords(in body: JSONValue, path: [String]?, url: String) throws(PipelineError) -> ([String]?, [JSONObject], String) {
        if let path, !path.isEmpty {
            let where_ = path.joined(separator: ".")
            guard let value = body.value(at: path) else { throw PipelineError(.data, "no array of records at \(where_) in \(url): there is no such key") }
            guard case .array(let items) = value else {
                throw PipelineError(.data, "no array of records at \(where_) in \(url): it is \(value.kindDescription)")
            }
            return (path, try objects(items, at: where_, url: url), "records: \(where_), as --records said")
        }
        switch body {
        case .array(let items):
            return (nil, try objects(items, at: "the page", url: url), "records: the page itself is an array of \(items.count) records")
        case .object:
            if let connection = InitGraphQL.connection(in: body), let items = body.value(at: connection.nodes), case .array(let nodes) = items {
                let where_ = connection.nodes.joined(separator: ".")
                return (connection.nodes, try objects(nodes, at: where_, url: url),
                        "records: \(where_), the nodes of a GraphQL connection, \(nodes.count) records")
            }
            if isDatasetteRows(body) {
                throw PipelineError(.data, "the records at rows in \(url) are arrays named by columns (Datasette's default shape), which a "
                                    + "pipeline does not read: fetch the page as objects, with _shape=objects in its URL")
            }
            var arrays: [(path: [String], objects: [JSONObject])] = []
            collectArrays(body, path: [], into: &arrays)
            guard let best = arrays.max(by: { $0.objects.count < $1.objects.count || ($0.objects.count == $1.objects.count && $0.path.count > $1.path.count) }) else {
                // No array of objects in it: the page is one record (version 3).
                guard case .object(let object) = body, !object.members.isEmpty else {
                    throw PipelineError(.data, "no array of records in \(url): the page is an empty object (give --records PATH)")
                }
                return (nil, [object], "the page is one object with no array of objects in it: that object is the one record (version 3)")
            }
            let others = arrays.filter { $0.path != best.path }.map { $0.path.joined(separator: ".") }
            let also = others.isEmpty ? "the only array of objects in the page" : "the largest array of objects in the page (others: \(others.joined(separator: ", ")))"
            return (best.path, best.objects, "records: \(best.path.joined(separator: ".")), \(also), \(best.objects.count) records")
        default:
            throw PipelineError(.data, "no array of records in \(url): the page is \(body.kindDescription)")
        }
    }

    /// Datasette's default JSON shape: `rows`, arrays of values, named by `columns`.
    static func isDatasetteRows(_ body: JSONValue) -> Bool {
        guard case .array(let columns)? = body.value(at: ["columns"]), case .array(let rows)? = body.value(at: ["rows"]),
              columns.allSatisfy({ if case .string = $0 { true } else { false } }) else { return false }
        return rows.contains { if case .array = $0 { true } else { false } }
    }

    /// For a page in Datasette's default shape fetched over HTTP: the same URL asking for
    /// objects (`_shape=objects`: `rows` as objects, `next_url` as before), which `swell init`
    /// fetches instead and writes into the file; nil for any other page.
    public static func objectsURL(for body: JSONValue, url: String) -> String? {
        guard isDatasetteRows(body), url.hasPrefix("http://") || url.hasPrefix("https://"), !url.contains("_shape=") else { return nil }
        var base = url
        var fragment = ""
        if let hash = url.firstIndex(of: "#") {
            fragment = String(url[hash...])
            base = String(url[..<hash])
        }
        return base + (base.contains("?") ? "&" : "?") + "_shape=objects" + fragment
    }

    /// The records as objects, refusing other elements and an empty array.
    private static func objects(_ items: [JSONValue], at place: String, url: String) throws(PipelineError) -> [JSONObject] {
        var objects: [JSONObject] = []
        for (index, item) in items.enumerated() {
            guard case .object(let object) = item else {
                throw PipelineError(.data, "the records at \(place) in \(url) are not objects: element \(index) is \(item.kindDescription)")
            }
            objects.append(object)
        }
        guard !objects.isEmpty else { throw PipelineError(.data, "no records to infer from at \(place) in \(url): the array is empty") }
        return objects
    }

    /// Non-empty arrays of objects in the page's top-level object and the objects in it (two levels:
    /// `items`, `data.items`).
    private static func collectArrays(_ value: JSONValue, path: [String], into arrays: inout [(path: [String], objects: [JSONObject])]) {
        guard case .object(let object) = value, path.count < 2 else { return }
        for (key, member) in object.members where !key.isEmpty && !key.contains(".") {
            switch member {
            case .array(let items) where !items.isEmpty:
                let objects = items.compactMap { if case .object(let object) = $0 { object } else { nil } }
                if objects.count == items.count { arrays.append((path + [key], objects)) }
            case .object:
                collectArrays(member, path: path + [key], into: &arrays)
            default:
                break
            }
        }
    }
}
