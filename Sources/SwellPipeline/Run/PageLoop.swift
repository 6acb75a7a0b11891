import SwellContexts

/// A source's page loop, on the run thread: asks for each page in the order its pagination
/// gives (`Paginator`), through the `PageFetcher` (retries, validators, tokens), into the
/// stage that parses it; refuses a page already fetched; stops at the source's first
/// failure or the run's cancellation; and collects the HTTP validators to keep. Its caller
/// (`SourceRun`) saves them only when every page arrived. It starts where the source's kept
/// position says, and tells the `PositionBook` and the stage each page completed.
struct PageLoop {
    let source: SourceSpec
    let container: PersistentContainer
    let environment: RunEnvironment
    let state: SourceRunState
    /// Incremental sync: the cursor whose kept value goes in the first request.
    let cursor: IncrementalCursor?
    let counts: SourceProgress
    /// The source's request builder, page stream and kept position (`SourceStreams`).
    let pages: SourcePages

    private var redactor: Redactor { environment.redactor }

    /// Fetches every page into `pages`, then sends on what it holds and closes it (also
    /// after a failure: the next stage drains what was fetched, and earlier pages stay
    /// saved). Returns the validators to keep (by metadata key) when the last page was
    /// reached, nil when the run failed.
    func run<Pages: PageParser>(into pages: inout Pages) -> [String: String]? {
        defer {
            pages.flush()
            pages.close()
        }
        do {
            return try fetchPages(into: &pages)
        } catch let error as PipelineError {
            state.fail(error)
        } catch {
            state.fail(PipelineError(.other, redactor("source \(source.name): \(error)"), underlying: error))
        }
        return nil
    }

    private func fetchPages<Pages: PageParser>(into pages: inout Pages) throws -> [String: String]? {
        let fetcher = PageFetcher(source: source, pages: self.pages, logger: environment.logger, redactor: redactor,
                                      progress: counts, cancellation: environment.cancellation)
        defer { self.pages.stream?.close() }
        var paginator = try Self.paginator(for: source, cursor: cursor, builder: self.pages.builder)
        // Resuming: the kept position's request (README, "Resuming a stopped source").
        let positions = self.pages.positions
        var request: PageRequest? = try positions.firstRequest(&paginator)
        var number = 0
        var visited = Set<String>()
        var validators: [String: String] = [:]
        var index = 0
        var latest: FetchedPage?
        while let current = request {
            guard state.failure == nil else { return nil }
            guard visited.insert(current.identity).inserted else {
                let body = current.body.map { " with body \($0.jsonText)" } ?? ""
                throw PipelineError(.data, redactor("source \(source.name): pagination returned to \(current.url)\(body), a page already fetched"))
            }
            fetcher.want(current, index: index, guesses: paginator.guesses(after: latest, count: fetcher.prefetch - 1))
            index += 1
            let page: FetchedPage
            do {
                page = try fetcher.fetch(current, into: &pages) { state.failure }
            } catch {
                // The retries of a page that failed in the end count too.
                state.count(retries: fetcher.retriesOfLastPage)
                throw error
            }
            state.count(page)
            if let pageValidators = page.validators {
                // A URL may carry a key the server echoed into its next links: never kept in clear.
                validators[redactor(HTTPValidators.metadataKey(source: source.name, url: current.url))] = pageValidators.metadataText
            }
            guard state.failure == nil else { return nil }
            request = paginator.nextRequest(after: page)
            latest = page
            // Page `number` is whole: what the position after it keeps, then the stage may cut there.
            positions.pageDone(number, next: request, page: page, paginator: paginator)
            pages.pageCompleted(number)
            number += 1
        }
        return validators
    }

    /// The source's paginator, its first request carrying the kept incremental value.
    static func paginator(for source: SourceSpec, cursor: IncrementalCursor?, builder: PageRequestBuilder) throws(PipelineError) -> Paginator {
        var sourceURL = source.url
        if let cursor {
            sourceURL = cursor.url(sourceURL, stored: try builder.storeMetadata(forKey: cursor.metadataKey))
        }
        return Paginator(source.pagination, source: PageRequest(url: sourceURL, body: source.body), placement: source.pagingIn,
                         hasMore: source.hasMore)
    }
}
