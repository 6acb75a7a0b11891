import Foundation
import Logging
import SwellContexts
import SwellHTTP
import SwellInput
import SwellJSON

/// What one page gave: what pagination reads next (its records, the captured
/// body values, the `Link` header) and what the report counts.
struct FetchedPage: Sendable {
    var url: String
    var records = 0
    var captured: [[String]: JSONValue] = [:]
    var linkHeader: String?
    /// Body bytes received (0 for a 304).
    var bytes: Int64 = 0
    var retries = 0
    /// The server answered 304: the stored rows stand.
    var notModified = false
    /// Validators to keep for the next run's conditional GET, if the server sent any.
    var validators: HTTPValidators?
}

/// Fetches one page of a source — over HTTP (through its `PageStream` on the run's
/// `HTTPEngine`: retries, budgets, conditional GET) or from a file — and feeds its bytes to a
/// `PageParser`.
///
/// File pages are parsed as they are read; an HTTP page's bytes arrive whole (so a retried
/// attempt never sends a record twice), then are parsed the same way. Conditional GET is for
/// HTTP pages of sources not in replace mode (replace needs every record).
///
/// A source with a body sends it with each page (`POST`/`PUT`, JSON); its credentials
/// (`PageRequestBuilder`) go on every request, and a 401 under OAuth 2.0 fetches a new token
/// and asks once more (the engine does). A status the source reads as empty (`on_status`) is
/// a page with no records.
///
/// Used on the run's thread only: it owns a libcurl handle for file pages.
final class PageFetcher {
    private let source: SourceSpec
    private let pages: SourcePages
    /// For file pages (HTTP pages come through the stream); made on first use.
    private var fileClient: HTTPClient?
    private let logger: Logger
    private let redactor: Redactor
    private let progress: SourceProgress
    private let cancellation: RunCancellation
    private let isFile: Bool
    /// The retries the last page took, also when it failed after them (for the report).
    private(set) var retriesOfLastPage = 0

    init(source: SourceSpec, pages: SourcePages, logger: Logger, redactor: Redactor, progress: SourceProgress,
         cancellation: RunCancellation) {
        self.source = source
        self.pages = pages
        self.logger = logger
        self.redactor = redactor
        self.progress = progress
        self.cancellation = cancellation
        isFile = !Self.isHTTP(source.url)
    }

    /// Pages of the source requested ahead (1 for a file source).
    var prefetch: Int { pages.stream?.prefetch ?? 1 }

    /// Says which page comes next and what may follow it (HTTP pages: `PageStream.want`).
    func want(_ page: PageRequest, index: Int, guesses: [PageRequest]) {
        pages.stream?.want(page, index: index, guesses: guesses)
    }

    /// A store metadata value as the view context sees it.
    func storeMetadata(forKey key: String) throws(PipelineError) -> String? {
        try pages.builder.storeMetadata(forKey: key)
    }

    /// A GraphQL answer's errors: with no data they fail the source (69) quoting the first;
    /// beside data they are logged as warnings. No data and no errors: the records path is
    /// not there (65).
    private func checkGraphQLAnswer(_ captured: [[String]: JSONValue], sawData: Bool, url: String) throws(PipelineError) {
        let messages = GraphQLAnswer.messages(captured[GraphQLAnswer.errorsPath])
        guard sawData else {
            if let first = messages?.first {
                throw PipelineError(.unavailable, redactor("source \(source.name): the GraphQL API answered \(url) with errors and no data: \(first)"))
            }
            let path = source.records?.joined(separator: ".") ?? ""
            throw PipelineError(.data, redactor("source \(source.name): the GraphQL answer from \(url) has no array at '\(path)'"))
        }
        for message in messages ?? [] {
            logger.warning("GraphQL error beside the data", metadata: ["source": "\(source.name)", "message": "\(redactor(message))"])
        }
    }

    /// Whether `url` is fetched over HTTP(S) rather than read from a file.
    static func isHTTP(_ url: String) -> Bool {
        url.hasPrefix("http://") || url.hasPrefix("https://")
    }

    /// Whether a page is read through gzip: its path (before any query) ends in `.gz`.
    static func isGzip(_ url: String) -> Bool {
        url.prefix { $0 != "?" && $0 != "#" }.lowercased().hasSuffix(".gz")
    }

    /// The size of the local file a file source names (a path, or a file URL), when it can be read.
    static func fileSize(_ url: String) -> Int? {
        var path = url
        if url.lowercased().hasPrefix("file://") { path = String(url.dropFirst(7)).removingPercentEncoding ?? String(url.dropFirst(7)) }
        // Unreadable here: no percentage (the fetch itself reports why it cannot read the file).
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    /// Fetches the page `page` asks for, reading its records with `parser`. `failure`
    /// tells whether the run failed meanwhile (then reading stops with it).
    ///
    /// - Throws: `PipelineError`: `.data` for a page that is not valid JSON /
    ///   NDJSON, `.unavailable` when it (or a token for it) could not be had, the run's
    ///   failure, or what `parser` threw for a bad record.
    func fetch<Parser: PageParser>(_ page: PageRequest, into parser: inout Parser, failure: () -> PipelineError?) throws -> FetchedPage {
        retriesOfLastPage = 0
        do {
            return try fetchOnce(page, into: &parser, failure: failure)
        } catch let error as PipelineError {
            guard case HTTPError.Kind.status(let status)? = (error.underlying as? HTTPError)?.kind,
                  source.emptyStatuses.contains(status) else { throw error }
            logger.info("read as no records", metadata: ["source": "\(source.name)", "url": "\(redactor(page.url))", "status": "\(status)"])
            parser.endPage()
            progress.addPage()
            return FetchedPage(url: page.url)
        }
    }

    private func fetchOnce<Parser: PageParser>(_ page: PageRequest, into parser: inout Parser, failure: () -> PipelineError?) throws -> FetchedPage {
        let url = page.url
        let conditional = pages.builder.isConditional
        if isFile && source.pagination == nil, let size = Self.fileSize(url) {
            progress.expect(bytes: size)    // one local file: the progress line can give a percentage
        }
        parser.begin(url: url)
        // An HTTP page's body, kept until the attempt completes (bytes are about
        // a third of the memory its parsed records would take).
        var body: [UInt8] = []
        var captured: [[String]: JSONValue] = [:]
        let response: HTTPResponse
        let retries: Int
        // A page whose path ends in `.gz` is read through gzip, as it arrives (a file) or once
        // it arrived (HTTP), whatever its format.
        let gzipped = Self.isGzip(url)
        var inflater: GzipInflater?
        // A CSV source's rows become NDJSON records on the way to the reader.
        var transcoder = source.csv.map { CSVRecordTranscoder(delimiter: $0.delimiter, header: $0.header) }
        func parse(_ bytes: UnsafeRawBufferPointer) throws {
            if transcoder != nil {
                try transcoder!.feed(bytes) { try parser.parse($0) }
            } else {
                try parser.parse(bytes)
            }
        }
        func feed(_ bytes: UnsafeRawBufferPointer) throws {
            guard gzipped else { return try parse(bytes) }
            guard let inflater else { throw PipelineError(.other, "cannot set up zlib to read \(redactor(url))") }
            try inflater.inflate(bytes) { try parse($0) }
        }
        do {
            if let stream = pages.stream {
                (response, body, retries) = try arrival(of: page, from: stream)
                if gzipped { inflater = GzipInflater() }
            } else {
                (response, retries) = try readFile(page, failure: failure) { bytes in
                    try feed(bytes)
                    progress.addBytes(bytes.count)
                } onAttempt: {
                    parser.begin(url: url)
                    if gzipped { inflater = GzipInflater() }
                    transcoder = source.csv.map { CSVRecordTranscoder(delimiter: $0.delimiter, header: $0.header) }
                }
            }
            if response.isNotModified {
                return FetchedPage(url: url, linkHeader: response.header("link"), retries: retries, notModified: true)
            }
            if !isFile {
                let slice = 1 << 16
                var offset = 0
                try body.withUnsafeBytes { all in
                    while offset < all.count {
                        try feed(UnsafeRawBufferPointer(rebasing: all[offset..<min(offset + slice, all.count)]))
                        offset += slice
                    }
                }
                body = []
            }
            try inflater?.finish()
            try transcoder?.finish { try parser.parse($0) }
            captured = try parser.finish()
            if source.isGraphQL { try checkGraphQLAnswer(captured, sawData: parser.sawRecords, url: url) }
        } catch let error as JSONError {
            parser.flush()
            throw PipelineError(.data, redactor("source \(source.name): page \(url) is not valid \(source.isNDJSON ? "NDJSON" : "JSON"): \(error)"), underlying: error)
        } catch let error as CSVRecordTranscoder.Failure {
            parser.flush()
            throw PipelineError(.data, redactor("source \(source.name): page \(url) is not valid CSV: \(error)"), underlying: error)
        } catch let error as GzipInflater.Failure {
            parser.flush()
            throw PipelineError(.data, redactor("source \(source.name): page \(url) is \(error)"), underlying: error)
        } catch let error as HTTPError {
            if source.isGraphQL, let first = GraphQLAnswer.messages(inBody: error.body)?.first {
                throw PipelineError(.unavailable, redactor("source \(source.name): \(error); the GraphQL API answered with errors: \(first)"), underlying: error)
            }
            throw PipelineError(.unavailable, redactor("source \(source.name): \(error)"), underlying: error)
        }
        parser.endPage()
        let records = parser.recordCount
        progress.addPage()
        logger.debug("page fetched", metadata: ["source": "\(source.name)", "url": "\(redactor(url))", "records": "\(records)"])
        return FetchedPage(url: url, records: records, captured: captured, linkHeader: response.header("link"),
                           bytes: response.bodyBytes, retries: retries,
                           validators: conditional ? HTTPValidators(response: response) : nil)
    }
}

extension PageFetcher {
    /// The page from the stream, once it arrived whole: its response, body and retries.
    ///
    /// - Throws: the page's failure as the rest of the fetch reads it (an `HTTPError`, a
    ///   `PipelineError`), or the run's failure when it stopped meanwhile.
    private func arrival(of page: PageRequest, from stream: PageStream) throws -> (HTTPResponse, [UInt8], Int) {
        guard let arrival = stream.take(page, stop: { cancellation.error != nil }) else {
            throw cancellation.error ?? PipelineError(.other, "source \(source.name): the page \(redactor(page.url)) was given up")
        }
        retriesOfLastPage = arrival.result.retries
        if arrival.result.retries > 0 {
            logger.info("retried", metadata: ["source": "\(source.name)", "url": "\(redactor(page.url))", "retries": "\(arrival.result.retries)"])
        }
        switch arrival.result.outcome {
        case .success(let response):
            progress.addBytes(arrival.result.body.count)
            return (response, arrival.result.body, arrival.result.retries)
        case .failure(let error as HTTPBudgetExceeded):
            throw PipelineError(.unavailable, redactor("source \(source.name): \(error)"), underlying: error)
        case .failure(let error as HTTPJobCancelled):
            throw cancellation.error ?? PipelineError(.other, "source \(source.name): the page \(redactor(page.url)) was cancelled", underlying: error)
        case .failure(let error):
            throw error
        }
    }

    /// A file page, read as it streams with the run's own libcurl handle.
    private func readFile(_ page: PageRequest, failure: () -> PipelineError?, onBody: (UnsafeRawBufferPointer) throws -> Void,
                          onAttempt: () -> Void) throws -> (HTTPResponse, Int) {
        if fileClient == nil {
            do {
                fileClient = try HTTPClient(userAgent: SwellVersion.userAgent)
            } catch {
                throw PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
            }
        }
        let request = try pages.builder.request(for: page)
        return try fileClient!.fetch(
            request, policy: RetryPolicy(retries: source.retries),
            onAttempt: { attempt in
                retriesOfLastPage = attempt - 1
                if attempt > 1 { logger.info("retrying", metadata: ["source": "\(source.name)", "url": "\(redactor(page.url))", "attempt": "\(attempt)"]) }
                onAttempt()
            },
            shouldRetry: { failure() == nil },
            onBody: { bytes in
                // A failed run stops reading (a big file need not be read to its end).
                if let failure = failure() { throw failure }
                try onBody(bytes)
            })
    }
}

@available(*, unavailable)
extension PageFetcher: Sendable {}
