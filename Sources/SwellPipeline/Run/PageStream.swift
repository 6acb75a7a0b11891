import Foundation
import SwellHTTP
import SwellLocks

/// One source's HTTP pages (one `for_each` item's), requested through the run's `HTTPEngine`
/// ahead of their parsing and handed to the page loop in page order (Pipeline file reference,
/// "Real networks").
///
/// The page loop's `Paginator` stays the one judge of what comes next: the stream only
/// *guesses* ahead — the offsets and page numbers that follow if pages are full, or the `Link`
/// header's next page as soon as a response arrives — and a guess is used only when it is the
/// request the paginator then asks for; the others are cancelled, and so are guesses the
/// paginator no longer makes (past a total the first page gave). So what a run writes never
/// depends on what was guessed. At most `prefetch` of the stream's requests are outstanding
/// (in flight or arrived and not yet parsed), and every page ahead of the loop takes room in
/// the run's `PagesAhead` first: memory is bounded by them. With `prefetch` 1 it asks for
/// nothing before the page loop does: one request at a time, as versions 1–3 ran.
///
/// `@unchecked Sendable`: its state is behind one `LockedValue` (a POSIX mutex ThreadSanitizer sees); the engine completes on its thread,
/// the page loop takes on the run's.
final class PageStream: @unchecked Sendable {
    /// What came back for one page.
    struct Arrival: Sendable {
        var result: HTTPJobResult
        var request: PageRequest
    }

    /// How a stream's requests are made.
    struct Requests: Sendable {
        /// The request to send for a page (credentials, validators), on the engine's thread.
        var prepare: @Sendable (PageRequest) throws -> HTTPRequest
        /// After a 401 on the page at a URL: whether credentials were renewed (one more try).
        var renewCredentials: (@Sendable (String) -> Bool)?
        /// A guess of the next page from a response's headers (`Link` paging), else nil.
        var nextFromHeaders: (@Sendable (HTTPResponse, PageRequest) -> PageRequest?)?
        /// Whether the page loop gives guesses with each page it wants (offset and page-number
        /// paging): then an outstanding guess it no longer gives is cancelled.
        var guessesAhead = false
        var retry: RetryPolicy
        var maxWait: Double
        /// The budgets of a request to `origin`: its host's cap and buckets, and the source's bucket.
        var budgets: @Sendable (_ origin: String) -> (cap: Int?, buckets: [TokenBucketSpec])
    }

    private struct Slot {
        var request: PageRequest
        var index: Int
        var job: HTTPJob.ID?
        var arrival: Arrival?
        /// Requested ahead of the loop: it holds a reservation of the run's `PagesAhead` until it arrives.
        var ahead: Bool
        /// Its body's bytes once arrived (held in `PagesAhead` until taken).
        var bytes = 0

        /// What dropping it frees in `PagesAhead`: bytes held, reservations.
        var room: (bytes: Int, reservations: Int) { arrival == nil ? (0, ahead ? 1 : 0) : (bytes, 0) }
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// Pages ahead not requested yet because the window was full or the run had no room for
        /// them, in page order: requested when a page is taken or room frees.
        var deferred: [(PageRequest, Int)] = []
        var requests = 0
        var held: [ClosedRange<Double>] = []
        var closed = false
    }

    private let engine: HTTPEngine
    private let item: Int
    /// The most requests of the stream outstanding at once.
    let prefetch: Int
    /// The most pages a `Link` chain holds outstanding: each next page is known from the last
    /// one's headers, so twice `prefetch` keeps a `for_each`'s items going while the page loop is
    /// still on an earlier item.
    private var chainWindow: Int { prefetch == 1 ? 1 : 2 * prefetch }
    private let requests: Requests
    private let room: PagesAhead
    private let state = LockedValue(State())
    private let arrived = NSCondition()

    init(engine: HTTPEngine, item: Int, prefetch: Int, requests: Requests, room: PagesAhead) {
        self.engine = engine
        self.item = item
        self.prefetch = max(1, prefetch)
        self.requests = requests
        self.room = room
    }

    /// Says which page the loop reads next (`index`, 0-based) and what may follow it if pages
    /// are full (`guesses`, in page order): the page is requested if it was not, and guesses
    /// while fewer than `prefetch` requests are outstanding and the run has room for them. A
    /// request made for this index or an earlier one that is not this page's (a guess that
    /// missed) is cancelled, and so is a later guess the loop no longer gives; later pages of
    /// a `Link` chain stay until the paginator reaches them or the stream closes.
    func want(_ request: PageRequest, index: Int, guesses: [PageRequest] = []) {
        let wanted = [(request, index)] + guesses.prefix(prefetch - 1).enumerated().map { ($0.element, index + 1 + $0.offset) }
        let identities = Set(wanted.map(\.0.identity))
        let (cancelled, freed, submit) = state.withLock { state -> ([HTTPJob.ID], (Int, Int), [(PageRequest, Int)]) in
            var cancelled: [HTTPJob.ID] = []
            var freed = (0, 0)
            for (identity, slot) in state.slots where identity != request.identity
                && (slot.index <= index || (requests.guessesAhead && !identities.contains(identity))) {
                state.slots[identity] = nil
                freed.0 += slot.room.bytes
                freed.1 += slot.room.reservations
                if slot.arrival == nil, let job = slot.job { cancelled.append(job) }
            }
            state.deferred.removeAll { $0.1 <= index }
            var submit: [(PageRequest, Int)] = []
            if state.slots[request.identity] == nil {
                state.slots[request.identity] = Slot(request: request, index: index, ahead: false)
                submit.append((request, index))
            }
            if requests.guessesAhead {
                state.deferred = wanted.dropFirst().filter { state.slots[$0.0.identity] == nil }
            }
            submit += takeDeferred(&state)
            return (cancelled, freed, submit)
        }
        engine.cancel(cancelled)
        room.release(bytes: freed.0, reservations: freed.1)
        for (request, index) in submit { self.submit(request, index: index) }
    }

    /// The deferred pages that may be requested now (window and room allowing), made slots.
    private func takeDeferred(_ state: inout State) -> [(PageRequest, Int)] {
        var submit: [(PageRequest, Int)] = []
        let window = requests.guessesAhead ? prefetch : chainWindow
        while let (page, position) = state.deferred.first, !state.closed {
            if state.slots[page.identity] != nil {
                state.deferred.removeFirst()
                continue
            }
            guard state.slots.count < window, room.reserve(for: self, item: item) else { break }
            state.deferred.removeFirst()
            state.slots[page.identity] = Slot(request: page, index: position, ahead: true)
            submit.append((page, position))
        }
        return submit
    }

    /// The run has room again: requests what waited for it.
    func roomFreed() {
        let submit = state.withLock { takeDeferred(&$0) }
        for (request, index) in submit { self.submit(request, index: index) }
    }

    private func submit(_ request: PageRequest, index: Int) {
        let origin = HTTPClient.origin(of: request.url) ?? request.url
        let budgets = requests.budgets(origin)
        let prepare = requests.prepare
        var renew: (@Sendable () -> Bool)?
        if let renewCredentials = requests.renewCredentials {
            let url = request.url
            renew = { renewCredentials(url) }
        }
        let prepareRequest: @Sendable () throws -> HTTPRequest = { try prepare(request) }
        let completion: @Sendable (HTTPJobResult) -> Void = { [weak self] result in self?.arrive(result, request: request, index: index) }
        let job = HTTPJob(priority: [item, index], origin: origin, hostCap: budgets.cap, buckets: budgets.buckets,
                          retry: requests.retry, maxWait: requests.maxWait,
                          prepare: prepareRequest, renewCredentials: renew, completion: completion)
        let id = engine.submit(job)
        state.withLock { state in
            if state.slots[request.identity]?.arrival == nil { state.slots[request.identity]?.job = id }
        }
    }

    private func arrive(_ result: HTTPJobResult, request: PageRequest, index: Int) {
        let next: PageRequest? = {
            guard case .success(let response) = result.outcome, let guess = requests.nextFromHeaders else { return nil }
            return guess(response, request)
        }()
        let submit = state.withLock { state -> [(PageRequest, Int)] in
            state.requests += result.requests
            state.held += result.held
            guard let slot = state.slots[request.identity], slot.arrival == nil,
                  !(result.outcome.failure is HTTPJobCancelled) else { return [] }
            state.slots[request.identity]?.arrival = Arrival(result: result, request: request)
            state.slots[request.identity]?.bytes = result.body.count
            room.arrived(bytes: result.body.count, reserved: slot.ahead)
            guard let next, !state.closed, state.slots[next.identity] == nil,
                  !state.deferred.contains(where: { $0.0.identity == next.identity }) else { return [] }
            state.deferred.append((next, index + 1))
            return takeDeferred(&state)
        }
        arrived.lock()
        arrived.broadcast()
        arrived.unlock()
        for (request, index) in submit { self.submit(request, index: index) }
    }

    /// The page `request` (wanted before), once it arrived; nil when `stop` says to give up
    /// waiting (checked whenever something arrives, and at least every `wake` seconds).
    func take(_ request: PageRequest, stop: () -> Bool) -> Arrival? {
        arrived.lock()
        defer { arrived.unlock() }
        while true {
            let (arrival, bytes, resumed) = state.withLock { state -> (Arrival?, Int, [(PageRequest, Int)]) in
                guard let slot = state.slots[request.identity], let arrival = slot.arrival else { return (nil, 0, []) }
                state.slots[request.identity] = nil
                return (arrival, slot.bytes, takeDeferred(&state))
            }
            if let arrival {
                room.release(bytes: bytes)
                for (request, index) in resumed { submit(request, index: index) }
                return arrival
            }
            if stop() { return nil }
            _ = arrived.wait(until: Date().addingTimeInterval(0.1))
        }
    }

    /// Cancels what is still outstanding (the source ended or failed).
    func close() {
        let (jobs, bytes, reservations) = state.withLock { state -> ([HTTPJob.ID], Int, Int) in
            state.closed = true
            defer {
                state.slots.removeAll()
                state.deferred.removeAll()
            }
            let slots = state.slots.values
            return (slots.compactMap { $0.arrival == nil ? $0.job : nil }, slots.reduce(0) { $0 + $1.room.bytes },
                    slots.reduce(0) { $0 + $1.room.reservations })
        }
        engine.cancel(jobs)
        room.forget(self)
        room.release(bytes: bytes, reservations: reservations)
    }

    /// Its requests outstanding now (requested, not arrived).
    var inFlight: Int { state.withLock { $0.slots.values.count { $0.arrival == nil } } }

    /// HTTP requests the stream's jobs made so far (attempts and redirect hops).
    var requestCount: Int { state.withLock { $0.requests } }

    /// Seconds its requests were held by budgets and server resets (overlaps counted once).
    var waitedSeconds: Double {
        let intervals = state.withLock { $0.held }.sorted { $0.lowerBound < $1.lowerBound }
        var total = 0.0
        var current: ClosedRange<Double>?
        for interval in intervals {
            if let open = current, interval.lowerBound <= open.upperBound {
                current = open.lowerBound...max(open.upperBound, interval.upperBound)
            } else {
                if let open = current { total += open.upperBound - open.lowerBound }
                current = interval
            }
        }
        if let open = current { total += open.upperBound - open.lowerBound }
        return total
    }
}

extension Result {
    /// The failure, if it is one.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
