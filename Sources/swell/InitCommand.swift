import SwellHTTP
import ArgumentParser
import Foundation
import SwellJSON
import SwellPipeline

/// `swell init`: writes a pipeline file guessed from one sample page.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a pipeline file guessed from a sample page (a URL's first page, or a local JSON file).",
        discussion: """
        Fetches the first page as a source would (same HTTP client, headers, retries; ${VAR} in the URL and headers \
        is read from the environment, and written to the file as typed, never its value), finds the records \
        (--records, else the page if it is an array, else a GraphQL connection's nodes, else the largest array of objects in it; a CSV sample's rows), infers entities \
        (types, optional attributes, the key, nested objects as related entities), the pagination (Link header, \
        next link, cursor, offset; with --graphql the query's cursor variable and pageInfo) and a CSV export of the main entity. \
        Every guess carries a comment saying why.

        The file is written to --output, or to stdout when --output is not given; an existing file is kept unless --force.

        Examples:
          swell init https://api.example.com/v1/issues --header "Authorization: Bearer ${API_TOKEN}" --output pipelines/issues.yml
          swell init --from fixtures/orders/page-0001.json --name orders > pipelines/orders.yml
          swell init --from exports/prices.csv.gz --output pipelines/prices.yml
          swell init https://api.github.com/graphql --header "Authorization: Bearer ${GITHUB_TOKEN}" \\
            --graphql 'query($after: String) { viewer { repositories(first: 50, after: $after) { nodes { name } pageInfo { endCursor hasNextPage } } } }'

        Exit codes: 64 bad arguments, 65 the page is not JSON or has no records, 69 the page could not be had, \
        73 the file could not be written.
        """)

    @Argument(help: "The URL (or file path) of the first page; ${VAR} is read from the environment.")
    var url: String?

    @Option(help: "Read the sample from this file instead of a URL (JSON; CSV when it ends in .csv or .tsv; .gz read through gzip).")
    var from: String?

    @Option(help: "A GraphQL query: POSTed to the URL with --variables; the source written is a graphql source paging through the query's cursor variable ($after: String).")
    var graphql: String?

    @Option(help: "The GraphQL query's variables, a JSON object (default {}).")
    var variables: String?

    @Option(help: "Dot path to the array of records in the page (default: the page itself if it is an array, else the largest array of objects in it).")
    var records: String?

    @Option(help: "The pipeline name, [a-z0-9_-]+ (default: the URL's last path segment or the file name).")
    var name: String?

    @Option(name: .customLong("header"), help: "A request header \"Name: value\" (repeatable); ${VAR} in the value is read from the environment and written as typed (give secrets as ${VAR}: a literal value is written as it is).")
    var headers: [String] = []

    @Option(help: "Write the pipeline file here (default: stdout).")
    var output: String?

    @Flag(help: "Replace the --output file if it exists.")
    var force = false

    func validate() throws {
        guard (url == nil) != (from == nil) else { throw ValidationError("give either a URL or --from FILE (one of them)") }
        for header in headers where Self.header(header) == nil {
            throw ValidationError("--header \"\(header)\": must be \"Name: value\"")
        }
        if let url { try Self.checkURL(url) }
        if variables != nil && graphql == nil { throw ValidationError("--variables goes with --graphql") }
        if graphql != nil, !(url ?? "").hasPrefix("http://") && !(url ?? "").hasPrefix("https://") {
            throw ValidationError("--graphql needs the API's http:// or https:// URL (the query is POSTed to it)")
        }
        if let variables {
            // Not JSON and JSON that is not an object get the same message: what is wanted.
            guard case .object? = try? JSONValue.parse(variables.utf8) else {
                throw ValidationError("--variables \(variables): must be a JSON object like '{\"owner\": \"apple\"}'")
            }
        }
        if let records, Self.dotPath(records) == nil {
            throw ValidationError("--records \(records): must be a dot path like 'data' or 'data.items'")
        }
    }

    /// A URL that cannot be fetched as typed is a usage error (64), found before any request:
    /// a scheme other than http, https or file; blanks; an http(s) URL without a host.
    static func checkURL(_ url: String) throws {
        guard let separator = url.range(of: "://") else { return }   // a path
        let scheme = url[..<separator.lowerBound].lowercased()
        guard ["http", "https", "file"].contains(scheme) else {
            throw ValidationError("\(url): unsupported scheme \(scheme) (http, https, file or a path)")
        }
        guard !url.contains(where: \.isWhitespace) else { throw ValidationError("\(url): a URL has no blanks (write a space as %20)") }
        // `${VAR}` values are put in later: such a URL is checked when it is fetched.
        if scheme != "file", !url.contains("${"), (URLComponents(string: url)?.host ?? "").isEmpty {
            throw ValidationError("\(url): not a URL with a host")
        }
    }

    func run() async throws {
        if let output, !force, FileManager.default.fileExists(atPath: output) {
            throw ValidationError("--output \(output) exists already (use --force to replace it)")
        }
        let source = url ?? from ?? ""
        let headers = self.headers.compactMap(Self.header)
        var given = InitOptions(name: name, url: source, headers: headers, records: records.flatMap(Self.dotPath))
        if let graphql {
            let variables = self.variables.flatMap { try? JSONValue.parse($0.utf8) } ?? .object(JSONObject())  // checked in validate()
            given.graphQL = InitGraphQL(query: graphql, variables: variables)
        }
        let options = given
        let environment = ProcessInfo.processInfo.environment
        let outcome = await CommandSupport.offMainQueue { () -> Result<InitPipeline, PipelineError> in
            Result { () throws(PipelineError) -> InitPipeline in
                var options = options
                var sample = try InitSample.fetch(url: options.url, headers: options.headers, graphQL: options.graphQL, environment: environment)
                if options.graphQL == nil, options.records == nil, let objects = PipelineInference.objectsURL(for: sample.body, url: options.url) {
                    // Datasette's default shape (rows as arrays): the same page as objects, which the file then reads.
                    sample = try InitSample.fetch(url: objects, headers: options.headers, environment: environment)
                    options.url = objects
                }
                options.pageURL = sample.pageURL
                options.linkHeader = sample.linkHeader
                options.csv = sample.csv
                // Messages name the URL as typed (`${VAR}` kept): nothing to redact.
                return try PipelineInference.infer(sample.body, options: options)
            }
        }
        let pipeline: InitPipeline
        switch outcome {
        case .success(let value): pipeline = value
        case .failure(let error):
            CommandSupport.printError(error.message)
            throw ExitCode(error)
        }
        guard let output else {
            print(pipeline.yaml, terminator: "")
            return
        }
        do {
            let file = URL(fileURLWithPath: output)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(pipeline.yaml.utf8).write(to: file, options: .atomic)
        } catch {
            CommandSupport.printError("cannot write \(output): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let main = pipeline.mainEntity
        print("wrote \(output): \(pipeline.entities.count) entities (\(main.name): \(main.attributes.count) attributes, key \(main.key.joined(separator: ", "))) from \(pipeline.recordCount) records; check the comments, then: swell validate \(output)")
    }

    /// "Name: value" split at the first colon; nil when the name is empty or not a token.
    static func header(_ text: String) -> HTTPHeader? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        return HTTPHeader(name: name, value: value)
    }

    /// "data.items" → ["data", "items"]; nil when a part is empty.
    static func dotPath(_ text: String) -> [String]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return parts.allSatisfy { !$0.isEmpty } ? parts : nil
    }
}
