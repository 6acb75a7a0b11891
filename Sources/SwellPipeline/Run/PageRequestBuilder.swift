import Foundation
import Logging
import SwellContexts
import SwellHTTP

/// Builds the HTTP request a source sends for one of its pages: its headers, method and body,
/// its credentials (`SourceAuthorizer`, with a client of its own for token requests) and, for
/// a conditional GET, the validators kept from the last run. `HTTPEngine` calls it on its
/// thread when budgets let the request go; `PageFetcher` reads the source's stored state
/// through it.
///
/// `@unchecked Sendable`: the authorizer and the token client are used under `lock` only; the
/// state reader is a private context (its own queue).
final class PageRequestBuilder: @unchecked Sendable {
    private let source: SourceSpec
    private let redactor: Redactor
    private let logger: Logger
    private let lock = NSLock()
    private var authorizer: SourceAuthorizer
    private let tokenClient: HTTPClient
    private let stateReader: ManagedObjectContext

    init(source: SourceSpec, container: PersistentContainer, logger: Logger, redactor: Redactor, tokens: RunTokens) throws(PipelineError) {
        do {
            tokenClient = try HTTPClient(userAgent: SwellVersion.userAgent)
        } catch {
            throw PipelineError(.other, "cannot set up libcurl: \(error)", underlying: error)
        }
        self.source = source
        self.redactor = redactor
        self.logger = logger
        stateReader = container.newBackgroundContext()
        stateReader.name = "\(source.name).state"
        authorizer = SourceAuthorizer(source: source, redactor: redactor, logger: logger, tokens: tokens)
    }

    /// Whether the source's pages are fetched conditionally: HTTP GETs of a source not in replace
    /// mode (replace needs every record; a POST's answer depends on its body).
    var isConditional: Bool {
        PageFetcher.isHTTP(source.url) && source.mode != .replace && source.method == "GET"
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

    /// The request for `page`: over HTTP with the source's method, body, credentials and
    /// validators; a file page is only read.
    func request(for page: PageRequest) throws(PipelineError) -> HTTPRequest {
        var request = HTTPRequest(source: source, url: page.url)
        request.markCredentialHeaders(redactor)
        guard PageFetcher.isHTTP(page.url) else { return request }
        request.method = source.method
        if let body = page.body { request.setJSONBody(body) }
        lock.lock()
        defer { lock.unlock() }
        try authorizer.authorize(&request, client: tokenClient)
        if source.isGraphQL { request.errorBodyLimit = 1 << 16 }
        if isConditional, let text = try storeMetadata(forKey: redactor(HTTPValidators.metadataKey(source: source.name, url: page.url))),
           let validators = HTTPValidators(metadataText: text) {
            validators.apply(to: &request)
        }
        return request
    }

    /// Whether a 401 may be cured by a new token: when it may, the kept token is dropped (the
    /// next request fetches another).
    func renewCredentials(url: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard authorizer.renewsOnUnauthorized else { return false }
        logger.info("unauthorized: fetching a new token", metadata: ["source": "\(source.name)", "url": "\(redactor(url))"])
        authorizer.tokenRejected()
        return true
    }

    /// Token requests made so far.
    var tokenRequests: Int {
        lock.lock()
        defer { lock.unlock() }
        return authorizer.tokenRequests
    }
}
