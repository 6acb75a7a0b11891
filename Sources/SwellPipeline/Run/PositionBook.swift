import Foundation
import Logging
import SwellContexts

/// One source run's position keeping (README, "Resuming a stopped source"): the page loop
/// says which request each page has (`pageDone`), the stages that write say which pages a
/// batch holds whole, and each commit carries, in its own transaction, the position of the
/// first page not saved whole (`committing`) with the keys seen since the last one
/// (`KeyChunkCollector`); the source's last save removes it all (`completion`).
///
/// Pages are numbered from 0 in page order within this run; a run that resumed numbers from
/// the page it started at, and keeps `resumedFrom + n` as the pages saved. Batches of several
/// writers (`lanes`: the upsert workers of a `mode: append` source) each say which pages *their*
/// records of are saved whole; a commit keeps the least of them, so the position never passes a
/// page some writer has not saved. After a commit fails, or a batch leaves records unwritten,
/// no later commit moves the position past that batch's pages (`freeze`, `cap`).
///
/// `@unchecked Sendable`: its mutable state is read and written only with `lock` held; the
/// lock is held across each commit (`committing`), so commits that keep positions are
/// serialised — their writes are serialised on the writer's queue anyway. The page loop's
/// requests are behind `requestsLock`, so the fetch thread never waits for a commit.
final class PositionBook: @unchecked Sendable {
    /// Where the page loop starts.
    enum Start: Equatable {
        case firstPage
        /// A page's request, its secrets filled back.
        case at(PagingState)
        /// Every page was saved before the stop: only the source's last save is left.
        case nothingLeft
    }

    /// A page's request as a position keeps it.
    private enum PageEntry {
        case request(PagingState)
        /// The page before was the last.
        case end
        /// The request holds a secret no `${VAR}` stands for: no position can point at this page.
        case unkeepable
    }

    let sourceName: String
    /// Positions are kept: the source is paginated and resumes (`resume`, `--restart`).
    let keepsPositions: Bool
    /// Done markers are kept: the source is a `for_each` item that resumes.
    let keepsDoneMarker: Bool
    let start: Start
    /// Pages an earlier run saved that this run does not fetch again (the report's `resumed_from`).
    let resumedFrom: Int
    /// Where the keys of a `mode: replace` or `append` source go for the chunks (nil: none kept).
    let collector: KeyChunkCollector?
    /// The key chunks an earlier run kept (replace: keys its pages brought; append: what it saved).
    let earlierKeys: [KeyChunk]

    private let fingerprint: String
    private let template: SecretTemplate
    private let logger: Logger
    /// What `begin` removes from the store: a kept position this run does not follow.
    private let dropped: [String: String?]
    /// The run's state (its largest cursor goes in each position), from `begin` on.
    private var state: SourceRunState?

    private let lock = NSLock()
    private var laneWhole = [0]
    private var cap: Int?
    private var frozen = false
    /// The position the last commit kept (or the one this run resumed from).
    private var last: SourcePosition

    private let requestsLock = NSLock()
    private var requests: [Int: PageEntry] = [:]

    init(sourceName: String, keepsPositions: Bool, keepsDoneMarker: Bool, start: Start, resumed: SourcePosition?, fingerprint: String,
         template: SecretTemplate, logger: Logger, collectsKeys: Bool, earlierKeys: [KeyChunk], dropped: [String: String?] = [:]) {
        self.sourceName = sourceName
        self.keepsPositions = keepsPositions
        self.keepsDoneMarker = keepsDoneMarker
        self.start = start
        resumedFrom = resumed?.pagesSaved ?? 0
        self.fingerprint = fingerprint
        self.template = template
        self.logger = logger
        self.dropped = dropped
        collector = keepsPositions && collectsKeys ? KeyChunkCollector() : nil
        self.earlierKeys = earlierKeys
        // Until a page past the first can be kept, a position points at the first page.
        var position = resumed ?? SourcePosition(fingerprint: fingerprint, next: .first)
        position.done = false
        last = position
    }

    private var positionKey: String { SourcePosition.metadataKey(source: sourceName) }

    /// The source's run starts (its book may have been opened ahead, with its first page
    /// requested): a kept position it does not follow is removed from the store now, and the
    /// largest cursor value the stopped run saw counts in `state`'s.
    ///
    /// - Throws: `PipelineError` (`.io`) when the store cannot be written.
    func begin(state: SourceRunState, container: PersistentContainer) throws(PipelineError) {
        let kept = lock.withLock { () -> CursorValue? in
            self.state = state
            return last.cursor
        }
        if let kept { state.count(records: 0, rejected: 0, cursor: kept.storeValue) }
        guard !dropped.isEmpty else { return }
        let writer = container.writerContext
        do {
            try writer.performAndWait {
                for (key, value) in dropped { writer.setStoreMetadata(value, forKey: key) }
                try writer.save()
            }
        } catch {
            throw PipelineError(.io, "source \(sourceName): cannot drop its kept position: \(error)", underlying: error)
        }
    }

    /// Writers of the source's batches that each say which pages their records of are whole
    /// (the upsert workers of a `mode: append` source); 1 unless set before the first commit.
    func split(into lanes: Int) {
        lock.withLock { laneWhole = Array(repeating: 0, count: max(1, lanes)) }
    }

    // MARK: The page loop

    /// The first page's request: the resumed one (then page 0 of this run is the stopped
    /// page), the paginator's first, or nil when nothing is left to fetch.
    ///
    /// - Throws: `PipelineError` (`.other`) when the kept request does not fit the source's
    ///   pagination (the fingerprint makes that a position written by hand).
    func firstRequest(_ paginator: inout Paginator) throws(PipelineError) -> PageRequest? {
        let request: PageRequest?
        let entry: PageEntry
        switch start {
        case .firstPage:
            request = paginator.first
            entry = .request(.first)
        case .at(let state):
            guard let resumed = paginator.resuming(at: state) else {
                throw PipelineError(.other, "source \(sourceName): its kept position (\(state.shown)) does not fit its pagination; run with --restart")
            }
            request = resumed
            entry = self.entry(state)
        case .nothingLeft:
            request = nil
            entry = .end
        }
        if keepsPositions { requestsLock.withLock { requests[0] = entry } }
        return request
    }

    /// Page `number` of this run arrived whole and `next` (nil: none) follows it: what a
    /// position pointing at page `number + 1` keeps. Call right after `paginator` gave `next`.
    func pageDone(_ number: Int, next: PageRequest?, page: FetchedPage, paginator: Paginator) {
        guard keepsPositions else { return }
        let entry: PageEntry = next.map { self.entry(paginator.pagingState(of: $0, after: page)) } ?? .end
        requestsLock.withLock { requests[number + 1] = entry }
    }

    private func entry(_ state: PagingState?) -> PageEntry {
        switch state {
        case nil: return .unkeepable
        case .cursor(let cursor)?: return template.template(cursor).map { .request(.cursor($0)) } ?? .unkeepable
        // A next link the server made may carry a key it echoed: kept with its `${VAR}`, or not at all.
        case .url(let url)?: return template.template(url).map { .request(.url($0)) } ?? .unkeepable
        case let other?: return .request(other)
        }
    }

    // MARK: Commits

    /// Runs `body` (a commit) with the metadata to commit with it: the source's position once
    /// lane `lane`'s records of pages before `wholePages` are in it, and the keys seen since
    /// the last chunk. nil `wholePages`, or no position kept: no metadata. A `body` that throws
    /// freezes the position where the last commit left it.
    func committing<Result>(lane: Int = 0, wholePages: Int?, _ body: ([String: String?]) throws -> Result) rethrows -> Result {
        guard keepsPositions, let wholePages else { return try body([:]) }
        lock.lock()
        defer { lock.unlock() }
        guard !frozen else { return try body([:]) }
        var lanes = laneWhole
        lanes[lane] = max(lanes[lane], wholePages)
        var whole = lanes.min() ?? 0
        if let cap { whole = min(whole, cap) }
        // A page whose request cannot be kept: the position stays at the last page that could.
        var position = advanced(to: whole) ?? last
        let metadata = keeping(&position)
        let result: Result
        do {
            result = try body(metadata)
        } catch {
            frozen = true
            throw error
        }
        laneWhole = lanes
        last = position
        logger.debug("position kept", metadata: ["source": "\(sourceName)", "pages_saved": "\(position.pagesSaved)"])
        let kept = position.pagesSaved - resumedFrom
        requestsLock.withLock { requests = requests.filter { $0.key >= kept } }
        return result
    }

    /// Lane `lane` has no unsaved records, and its records of pages before `wholePages` are all
    /// saved: the next commit of any lane may count them.
    func advance(lane: Int, to wholePages: Int) {
        guard keepsPositions else { return }
        lock.withLock { if !frozen { laneWhole[lane] = max(laneWhole[lane], wholePages) } }
    }

    /// Records of page `page` or later were left unwritten (a bad record, a refused object):
    /// no later commit moves the position past it.
    func cap(at page: Int) {
        guard keepsPositions else { return }
        lock.withLock { cap = min(cap ?? page, page) }
    }

    /// A batch was left (partly) unwritten: no later commit moves the position.
    func freeze() {
        guard keepsPositions else { return }
        lock.withLock { frozen = true }
    }

    /// For the last save of a source that stopped, after every writer ended: the position
    /// where all of them have saved their records — when it is past the last one a commit kept.
    /// (A writer whose last records went in another's commit says its pages are whole only
    /// afterwards: `advance`.) In the source's last save, which holds every batch still unsaved.
    func stopped() -> [String: String?] {
        guard keepsPositions else { return [:] }
        return lock.withLock { () -> [String: String?] in
            guard !frozen else { return [:] }
            var whole = laneWhole.min() ?? 0
            if let cap { whole = min(whole, cap) }
            guard resumedFrom + whole > last.pagesSaved, var position = advanced(to: whole) else { return [:] }
            let metadata = keeping(&position)
            last = position
            return metadata
        }
    }

    /// With `lock` held: the last position moved to "pages before `whole` saved"; nil when
    /// that page's request cannot be kept.
    private func advanced(to whole: Int) -> SourcePosition? {
        var position = last
        switch requestsLock.withLock({ requests[whole] }) {
        case .request(let next)?: position.next = next
        case .end?: position.next = nil
        case .unkeepable?, nil: return nil
        }
        position.pagesSaved = resumedFrom + whole
        return position
    }

    /// With `lock` held: the metadata that keeps `position`, with the largest cursor so far
    /// and the keys seen since the last chunk (a new chunk, counted in `position`).
    private func keeping(_ position: inout SourcePosition) -> [String: String?] {
        position.cursor = CursorValue(state?.largestCursor) ?? position.cursor
        var metadata: [String: String?] = [:]
        if let chunk = collector?.take(), !chunk.isEmpty {
            metadata[SourcePosition.keyChunkKey(source: sourceName, number: position.keyChunks)] = chunk.text
            position.keyChunks += 1
        }
        metadata[positionKey] = position.text
        return metadata
    }

    // MARK: Completion

    /// For the source's last save, when every page arrived: the position and its key chunks
    /// removed — or, for a `for_each` item, a done marker in the position's place.
    func completion(pages: Int) -> [String: String?] {
        var metadata = lock.withLock { last.removal(source: sourceName) }
        if keepsDoneMarker {
            var done = SourcePosition(fingerprint: fingerprint)
            done.done = true
            done.pagesSaved = resumedFrom + pages
            metadata[positionKey] = done.text
        }
        return metadata
    }
}
