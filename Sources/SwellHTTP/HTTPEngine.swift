import CCurl
import Foundation
import SwellLocks

/// Many HTTP requests in flight on one thread: libcurl's multi interface (one event loop,
/// connections reused per host, HTTP/2 multiplexed where the server offers it), with the
/// run's budgets in front of it (Pipeline file reference, "Real networks").
///
/// Jobs (``HTTPJob``) wait in priority order. One starts when fewer than `concurrency`
/// requests are in flight, fewer than its host's cap go to its host, no server hold is on
/// its host (``ServerHold``), and every bucket it names has a token (the run's own, or
/// ``SharedTokenBuckets`` when runners share a store). A job held by a budget also holds back
/// the later jobs that need the same budget, so the request a sequential run would make first
/// goes first. Retries wait on the engine's clock, not a thread; redirects are followed hop
/// by hop with the credential rules of ``HTTPClient``. Each job's body is kept whole and
/// handed to its completion.
///
/// `@unchecked Sendable`: the inbox is behind a `LockedValue`; everything else is touched only by
/// the engine's thread.
public final class HTTPEngine: @unchecked Sendable {
    /// What the engine obeys.
    public struct Configuration: Sendable {
        /// Requests in flight at once (at least 1).
        public var concurrency: Int
        /// Sent as `User-Agent` unless a request gives its own.
        public var userAgent: String
        /// Buckets shared with other runners; nil: the run's own.
        public var sharedBuckets: (any SharedTokenBuckets)?

        /// Creates a configuration.
        public init(concurrency: Int, userAgent: String, sharedBuckets: (any SharedTokenBuckets)? = nil) {
            self.concurrency = max(1, concurrency)
            self.userAgent = userAgent
            self.sharedBuckets = sharedBuckets
        }
    }

    private enum Command {
        case submit(HTTPJob.ID, HTTPJob)
        case cancel([HTTPJob.ID])
        case stop
    }

    private struct Inbox {
        var commands: [Command] = []
        var nextID = 1
        var inFlight = 0
        var stopped = false
    }

    private let configuration: Configuration
    private let multi: UnsafeMutableRawPointer
    private let inbox = LockedValue(Inbox())
    private let finished = DispatchSemaphore(value: 0)
    private let loop: EngineLoop

    /// Starts the engine's thread.
    ///
    /// - Throws: ``HTTPError`` (`.connection`) when libcurl cannot start.
    public init(_ configuration: Configuration) throws(HTTPError) {
        guard CurlGlobal.isInitialised, let multi = curl_multi_init() else {
            throw HTTPError(kind: .connection, url: "", message: "libcurl's multi interface could not be initialised", isRetryable: false)
        }
        self.configuration = configuration
        self.multi = multi
        loop = EngineLoop(multi: multi, configuration: configuration)
        let thread = Thread { [unowned self] in
            self.run(self.loop)
            self.finished.signal()
        }
        thread.name = "swell.http"
        thread.start()
    }

    deinit {
        stop()
        curl_multi_cleanup(multi)
    }

    /// The engine's clock: seconds since boot (``HTTPJobResult/held`` is on it).
    public static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Queues `job`; returns its number.
    @discardableResult
    public func submit(_ job: HTTPJob) -> HTTPJob.ID {
        let id = inbox.withLock { inbox -> HTTPJob.ID in
            let id = inbox.nextID
            inbox.nextID += 1
            inbox.commands.append(.submit(id, job))
            return id
        }
        curl_multi_wakeup(multi)
        return id
    }

    /// Cancels jobs not yet completed: each completes with ``HTTPJobCancelled`` — a waiting one at
    /// once, one in flight when its transfer ends or at most 2 s later, aborted (the server is not
    /// asked for more at once than `concurrency`, and the connection is kept).
    public func cancel(_ ids: [HTTPJob.ID]) {
        guard !ids.isEmpty else { return }
        inbox.withLock { $0.commands.append(.cancel(ids)) }
        curl_multi_wakeup(multi)
    }

    /// Requests in flight now (for progress lines).
    public var inFlight: Int { inbox.withLock { $0.inFlight } }

    /// Cancels every job and waits for the thread to end. Called by `deinit` too.
    public func stop() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.stopped = true }
            if !inbox.stopped { inbox.commands.append(.stop) }
            return !inbox.stopped
        }
        guard first else { return }
        curl_multi_wakeup(multi)
        finished.wait()
    }

    private func run(_ loop: EngineLoop) {
        while true {
            let commands = inbox.withLock { inbox -> [Command] in
                defer { inbox.commands.removeAll() }
                return inbox.commands
            }
            for command in commands {
                switch command {
                case .submit(let id, let job): loop.add(id: id, job: job)
                case .cancel(let ids): loop.cancel(Set(ids))
                case .stop:
                    loop.cancelAll()
                    return
                }
            }
            let timeout = loop.turn()
            inbox.withLock { $0.inFlight = loop.activeCount }
            curl_multi_poll(multi, nil, 0, Int32(timeout), nil)
        }
    }
}
