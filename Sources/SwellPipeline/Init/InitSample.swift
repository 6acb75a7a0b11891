import Foundation
import SwellHTTP
import SwellInput
import SwellJSON
import Yams

/// The sample page `swell init` infers from: fetched the way a source fetches
/// its first page (`HTTPRequest(source:url:)`, libcurl with the same retries
/// and timeout, `${VAR}` interpolated in the URL and headers as the pipeline
/// file reader does), or read from a file (a plain path or `file://` URL).
public struct InitSample: Sendable {
    /// The page's JSON.
    public var body: JSONValue
    /// The response's `Link` header, if any.
    public var linkHeader: String?
    /// The URL after interpolation (for resolving relative links; may hold secrets: never print it as is).
    public var pageURL: String
    /// Hides the values that came from the environment.
    public var redactor: Redactor
    /// Set when the sample is CSV (`InitCSVSample.isCSV`): how it read. `body` then holds its rows.
    public var csv: CSVInput?

    /// Fetches (or reads) the page at `url` with `headers`, both as typed (`${VAR}` and
    /// `${VAR:-default}` filled from `environment`); with `graphQL`, POSTs its query and
    /// variables as a `graphql` source does.
    ///
    /// Blocks the calling thread for the transfer and its retries: call it off the main queue.
    ///
    /// - Throws: `PipelineError`: `.usage` for a missing variable or a bad header, `.unavailable`
    ///   when the page cannot be had, `.data` when it is not JSON (naming the URL, line and column).
    ///   Messages show environment values as `***`.
    public static func fetch(url: String, headers: [HTTPHeader], graphQL: InitGraphQL? = nil,
                             environment: [String: String]) throws(PipelineError) -> InitSample {
        var reader = PipelineFileReader(path: "swell init", environment: environment)
        let pageURL: String
        var interpolated: [(name: String, value: String)] = []
        var graphQLBody: JSONValue?
        do {
            pageURL = try reader.interpolate(Node(url), "the URL")
            for header in headers {
                interpolated.append((header.name, try reader.interpolate(Node(header.value), "header \(header.name)")))
            }
            // The query and its variables are filled as the run fills them; the file keeps them as typed.
            if let graphQL {
                graphQLBody = SourceSpec.graphQLBody(query: try reader.interpolate(Node(graphQL.query), "the query"),
                                                     variables: try interpolating(graphQL.variables, with: &reader))
            }
        } catch {
            throw PipelineError(.usage, error.message)
        }
        let redactor = Redactor(secrets: reader.secrets)
        let source = SourceSpec(name: "init", entity: "", url: pageURL, isNDJSON: false, records: nil, headers: interpolated,
                                pagination: nil, fields: [:], dates: .iso8601, mode: .upsert, onError: .fail, rejects: "",
                                timeout: Self.timeout, retries: Self.retries, maxBytes: nil, incremental: nil)
        let client: HTTPClient
        do {
            client = try HTTPClient(userAgent: SwellVersion.userAgent)
        } catch {
            throw PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
        }
        var request = HTTPRequest(source: source, url: pageURL)
        request.markCredentialHeaders(redactor)
        if let graphQLBody {
            request.method = "POST"
            request.setJSONBody(graphQLBody)
            request.errorBodyLimit = 1 << 16
        }
        var body: [UInt8] = []
        let response: HTTPResponse
        do {
            (response, _) = try client.fetch(request, policy: RetryPolicy(retries: source.retries),
                                             onAttempt: { _ in body.removeAll(keepingCapacity: true) },
                                             onBody: { bytes in body.append(contentsOf: bytes) })
        } catch let error as HTTPError {
            if graphQLBody != nil, let first = GraphQLAnswer.messages(inBody: error.body)?.first {
                throw PipelineError(.unavailable, redactor("\(error); the GraphQL API answered with errors: \(first)"), underlying: error)
            }
            throw PipelineError(.unavailable, redactor("\(error)"), underlying: error)
        } catch {
            throw PipelineError(.other, redactor("\(redactor(pageURL)): \(error)"), underlying: error)
        }
        if PageFetcher.isGzip(pageURL) {
            body = try inflated(body, url: pageURL, redactor: redactor)
        }
        if InitCSVSample.isCSV(url: pageURL, contentType: response.header("content-type")) {
            let delimiter = InitCSVSample.delimiter(of: body)
            let rows: JSONValue
            do {
                rows = try InitCSVSample.records(body, delimiter: delimiter, url: url)
            } catch {
                throw PipelineError(error.kind, redactor(error.message), underlying: error)
            }
            return InitSample(body: rows, linkHeader: response.header("link"), pageURL: pageURL, redactor: redactor,
                              csv: CSVInput(delimiter: delimiter, header: true))
        }
        do {
            let value = try JSONValue.parse(body)
            return InitSample(body: value, linkHeader: response.header("link"), pageURL: pageURL, redactor: redactor)
        } catch {
            throw PipelineError(.data, redactor("page \(pageURL) is not valid JSON: \(error)"), underlying: error)
        }
    }

    /// `value` with `${VAR}` filled in its strings (values from the environment become secrets).
    private static func interpolating(_ value: JSONValue, with reader: inout PipelineFileReader) throws(PipelineFileError) -> JSONValue {
        switch value {
        case .string(let text): return .string(try reader.interpolate(Node(text), "a variable"))
        case .array(let items):
            var filled: [JSONValue] = []
            for item in items { filled.append(try interpolating(item, with: &reader)) }
            return .array(filled)
        case .object(let object):
            var members: [(key: String, value: JSONValue)] = []
            for member in object.members { members.append((member.key, try interpolating(member.value, with: &reader))) }
            return .object(JSONObject(members: members))
        default: return value
        }
    }

    /// A `.gz` sample's bytes through gzip, as a source reads its pages.
    private static func inflated(_ compressed: [UInt8], url: String, redactor: Redactor) throws(PipelineError) -> [UInt8] {
        guard let inflater = GzipInflater() else { throw PipelineError(.other, "cannot set up zlib") }
        var plain: [UInt8] = []
        do {
            try compressed.withUnsafeBytes { raw in
                try inflater.inflate(raw) { plain.append(contentsOf: $0) }
            }
            try inflater.finish()
        } catch {
            throw PipelineError(.data, redactor("page \(url): \(error)"), underlying: error)
        }
        return plain
    }

    /// A source's default timeout (seconds) and retries (Pipeline file reference `timeout`, `retries`).
    static let timeout: Double = 30
    static let retries = 3
}
