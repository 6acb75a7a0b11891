import Foundation
import Logging
import SwellContexts
import SwellHTTP

/// What one source run fetches its pages through: the request builder, for HTTP pages its
/// stream on the run's engine, and where an earlier run of it stopped (its first page is
/// requested from there).
struct SourcePages: Sendable {
    let builder: PageRequestBuilder
    /// Nil for a file source (read as it streams, on the run's thread).
    let stream: PageStream?
    /// The source's kept position (README, "Resuming a stopped source").
    let positions: PositionBook
}

/// The page streams of one source in the file — itself, or every item of its `for_each` —
/// on the run's `HTTPEngine`: when item *k* starts, the items after it up to the run's
/// concurrency are opened too and their first pages requested, so items run side by side
/// while the page loop applies them in item order (Pipeline file reference, "Real networks").
///
/// Used from the run's thread only.
final class SourceStreams {
    private let engine: HTTPEngine
    private let sources: [SourceSpec]
    private let entity: (SourceSpec) -> PipelineEntity?
    private let plan: NetworkPlan
    private let container: PersistentContainer
    private let environment: RunEnvironment
    /// The items of the sources' `for_each` in this run, those done before a stop included
    /// (their positions' fingerprint); empty when they are not a `for_each`'s.
    private let forEachItems: [String]
    private var opened: [Int: SourcePages] = [:]

    init(engine: HTTPEngine, sources: [SourceSpec], entity: @escaping (SourceSpec) -> PipelineEntity?, plan: NetworkPlan,
         container: PersistentContainer, environment: RunEnvironment, forEachItems: [String] = []) {
        self.engine = engine
        self.sources = sources
        self.entity = entity
        self.plan = plan
        self.container = container
        self.environment = environment
        self.forEachItems = forEachItems
    }

    /// The pages of item `index`, opening the items after it (up to the concurrency) ahead.
    func pages(forItem index: Int) throws(PipelineError) -> SourcePages {
        let pages = try open(index)
        let ahead = plan.concurrency > 1 ? plan.concurrency - 1 : 0
        for next in (index + 1)..<min(sources.count, index + 1 + ahead) {
            // An item ahead that cannot be opened now fails when its turn comes.
            _ = try? open(next)
        }
        opened[index] = nil
        return pages
    }

    /// Cancels what is left (the run stopped before these items).
    func close() {
        for pages in opened.values { pages.stream?.close() }
        opened.removeAll()
    }

    private func open(_ index: Int) throws(PipelineError) -> SourcePages {
        if let pages = opened[index] { return pages }
        let source = sources[index]
        let pages = try Self.pages(for: source, item: index, entity: entity(source), engine: engine, plan: plan,
                                   container: container, environment: environment, forEachItems: forEachItems)
        opened[index] = pages
        return pages
    }

    /// A source's builder, kept position and stream, its first page (and the guesses after it)
    /// requested: the page its kept position names, if it has one.
    static func pages(for source: SourceSpec, item: Int, entity: PipelineEntity?, engine: HTTPEngine, plan: NetworkPlan,
                      container: PersistentContainer, environment: RunEnvironment, forEachItems: [String]) throws(PipelineError) -> SourcePages {
        let builder = try PageRequestBuilder(source: source, container: container, logger: environment.logger,
                                             redactor: environment.redactor, tokens: environment.tokens)
        let positions = try PositionBook.open(source: source, forEachItems: forEachItems, container: container, environment: environment)
        guard PageFetcher.isHTTP(source.url) else { return SourcePages(builder: builder, stream: nil, positions: positions) }
        let linkPaging: Bool = if case .linkHeader? = source.pagination { true } else { false }
        let body = source.body
        let nextFromLink: @Sendable (HTTPResponse, PageRequest) -> PageRequest? = { response, request in
            guard let link = response.header("link"), let next = HTTPLinks.nextLink(in: link, base: request.url) else { return nil }
            return PageRequest(url: next, body: body)
        }
        let prepare: @Sendable (PageRequest) throws -> HTTPRequest = { page in try builder.request(for: page) }
        let renew: @Sendable (String) -> Bool = { url in builder.renewCredentials(url: url) }
        let requests = PageStream.Requests(
            prepare: prepare,
            renewCredentials: renew,
            nextFromHeaders: linkPaging ? nextFromLink : nil,
            guessesAhead: Paginator.guessesAhead(source.pagination),
            retry: RetryPolicy(retries: source.retries),
            maxWait: source.maxWait,
            budgets: { origin in plan.budgets(source: source, url: origin, origin: origin) })
        let stream = PageStream(engine: engine, item: item, prefetch: plan.prefetch(source), requests: requests,
                                room: plan.pagesAhead)
        if let entity {
            var paginator = try PageLoop.paginator(for: source, cursor: IncrementalCursor(source: source, entity: entity), builder: builder)
            if let first = try positions.firstRequest(&paginator) {
                stream.want(first, index: 0, guesses: paginator.guesses(after: nil, count: plan.prefetch(source) - 1))
            }
        }
        return SourcePages(builder: builder, stream: stream, positions: positions)
    }
}
