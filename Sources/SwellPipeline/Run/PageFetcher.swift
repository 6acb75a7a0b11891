import Foundation
import Logging
import SwellHTTP
import SwellJSON
import SwellStore

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

/// Fetches one page of a source — over HTTP (libcurl, with retries and
/// conditional GET) or from a file — and feeds its bytes to a `PageParser`.
///
/// File pages are parsed as they are read; an HTTP page's bytes are kept
/// until it arrived whole (so a retried attempt never sends a record twice),
/// then parsed and sent on the same way. Conditional GET is for HTTP pages of
/// sources not in replace mode (replace needs every record).
///
/// Used on the fetch thread only: it owns a libcurl handle and reads the
/// source's stored state on a private child of the view context (which sees
/// what the view context holds, and keeps the store read off the main queue).
struct PageFetcher {
    private let source: SourceSpec
    private let client: HTTPClient
    private let stateReader: ManagedObjectContext
    private let logger: Logger
    private let redactor: Redactor
    private let progress: SourceProgress
    private let isFile: Bool

    init(source: SourceSpec, container: PersistentContainer, logger: Logger, redactor: Redactor,
         progress: SourceProgress) throws(PipelineError) {
        do {
            client = try HTTPClient(userAgent: SwellVersion.userAgent)
        } catch {
            throw PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
        }
        self.source = source
        stateReader = container.newBackgroundContext()
        stateReader.name = "\(source.name).state"
        self.logger = logger
        self.redactor = redactor
        self.progress = progress
        isFile = !(source.url.hasPrefix("http://") || source.url.hasPrefix("https://"))
    }

    /// A store metadata value as the view context sees it.
    func storeMetadata(forKey key: String) throws(PipelineError) -> String? {
        let reader = stateReader
        do {
            return try reader.performAndWait { try reader.storeMetadata(forKey: key) }
        } catch {
            throw PipelineError(.io, "cannot read the store: \(error)", underlying: error)
        }
    }

    /// The size of the local file a file source names (a path, or a file URL), when it can be read.
    static func fileSize(_ url: String) -> Int? {
        var path = url
        if url.lowercased().hasPrefix("file://") { path = String(url.dropFirst(7)).removingPercentEncoding ?? String(url.dropFirst(7)) }
        // Unreadable here: no percentage (the fetch itself reports why it cannot read the file).
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    /// Fetches the page at `url`, reading its records with `parser`. `failure`
    /// tells whether the run failed meanwhile (then reading stops with it).
    ///
    /// - Throws: `PipelineError`: `.data` for a page that is not valid JSON /
    ///   NDJSON, `.unavailable` when it could not be had, the run's failure, or
    ///   what `parser` threw for a bad record.
    func fetch<Parser: PageParser>(_ url: String, into parser: inout Parser, failure: () -> PipelineError?) throws -> FetchedPage {
        var request = HTTPRequest(source: source, url: url)
        let conditional = !isFile && source.mode != .replace
        if conditional, let text = try storeMetadata(forKey: HTTPValidators.metadataKey(source: source.name, url: url)),
           let validators = HTTPValidators(metadataText: text) {
            validators.apply(to: &request)
        }
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
        do {
            (response, retries) = try client.fetch(
                request, policy: RetryPolicy(retries: source.retries),
                onAttempt: { attempt in
                    if attempt > 1 { logger.info("retrying", metadata: ["source": "\(source.name)", "url": "\(redactor(url))", "attempt": "\(attempt)"]) }
                    body.removeAll(keepingCapacity: true)
                    parser.begin(url: url)
                },
                onBody: { bytes in
                    // A failed run stops reading (a big file need not be read to its end).
                    if let failure = failure() { throw failure }
                    if isFile { try parser.parse(bytes) } else { body.append(contentsOf: bytes) }
                    progress.addBytes(bytes.count)
                })
            if response.isNotModified {
                return FetchedPage(url: url, linkHeader: response.header("link"), retries: retries, notModified: true)
            }
            if !isFile {
                let slice = 1 << 16
                var offset = 0
                try body.withUnsafeBytes { all in
                    while offset < all.count {
                        try parser.parse(UnsafeRawBufferPointer(rebasing: all[offset..<min(offset + slice, all.count)]))
                        offset += slice
                    }
                }
                body = []
            }
            captured = try parser.finish()
        } catch let error as JSONError {
            parser.flush()
            throw PipelineError(.data, redactor("source \(source.name): page \(url) is not valid \(source.isNDJSON ? "NDJSON" : "JSON"): \(error)"), underlying: error)
        } catch let error as HTTPError {
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

@available(*, unavailable)
extension PageFetcher: Sendable {}
