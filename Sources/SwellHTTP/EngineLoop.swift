import CCurl
import Foundation

/// The engine's state, on its thread only: jobs waiting, transfers in flight, holds, buckets.
final class EngineLoop {
    /// A job and what it went through so far.
    final class Entry {
        let id: HTTPJob.ID
        let job: HTTPJob
        var attempt = 1
        var requests = 0
        var renewed = false
        /// A redirect's next hop (sent without taking new tokens); nil: build the request anew.
        var hop: HTTPRequest?
        var redirects = 0
        var notBefore = 0.0
        /// Since when it waits, in line or first in line (the report's `waited_s`).
        var heldSince: Double?
        var held: [ClosedRange<Double>] = []
        /// Since when it waits first in line for a budget or a server's reset: the wait
        /// `max_wait` bounds. Waiting behind earlier jobs of the same bucket is the rate itself
        /// (40 requests at 4/s take 10 s) and does not count.
        var budgetSince: Double?
        /// Earlier waits first in line, summed.
        var budgetWaited = 0.0
        var body: [UInt8] = []
        /// The URL of the attempt's first hop (errors name it).
        var firstURL: String?
        /// Delivered: removed from `pending` at the end of the turn.
        var isDone = false
        /// When it was cancelled while its request was in flight: it ends as ``HTTPJobCancelled``
        /// when the transfer does (no retry, no redirect), or after `cancelGrace`, aborted.
        var cancelledAt: Double?

        init(id: HTTPJob.ID, job: HTTPJob) {
            self.id = id
            self.job = job
        }
    }

    struct Active {
        let entry: Entry
        let client: HTTPClient
        let hop: HTTPClient.ConfiguredHop
    }

    /// How long a cancelled transfer may still finish before it is aborted (a server that
    /// hangs must not hold a slot of the run).
    static let cancelGrace = 2.0

    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTPEngine.Configuration
    private var pending: [Entry] = []
    private var active: [UnsafeMutableRawPointer: Active] = [:]
    private var activeByOrigin: [String: Int] = [:]
    private var idle: [HTTPClient] = []
    /// Server holds by origin: until when (engine clock).
    private var holds: [String: Double] = [:]
    private var buckets = LocalTokenBuckets()
    /// When a bucket next has a token, to wake for it.
    private var bucketWake: Double?
    private var random = SystemRandomNumberGenerator()

    init(multi: UnsafeMutableRawPointer, configuration: HTTPEngine.Configuration) {
        self.multi = multi
        self.configuration = configuration
    }

    var activeCount: Int { active.count }

    func add(id: HTTPJob.ID, job: HTTPJob) {
        insert(Entry(id: id, job: job))
    }

    /// Into `pending`, after the entries of the same or a higher priority.
    private func insert(_ entry: Entry) {
        let index = pending.firstIndex { entry.job.priority.lexicographicallyPrecedes($0.job.priority) } ?? pending.endIndex
        pending.insert(entry, at: index)
    }

    /// Cancels jobs: a waiting one ends now; one in flight is let finish (its answer dropped), so
    /// the server never serves more of the run's requests at once than `concurrency` and the
    /// connection stays open for the next request. `abort`: in-flight transfers end now too.
    func cancel(_ ids: Set<HTTPJob.ID>, abort: Bool = false) {
        let now = HTTPEngine.now
        let (gone, kept) = (pending.filter { ids.contains($0.id) }, pending.filter { !ids.contains($0.id) })
        pending = kept
        for entry in gone { deliver(entry, .failure(HTTPJobCancelled()), now: now) }
        for (handle, transfer) in active where ids.contains(transfer.entry.id) {
            if abort {
                remove(handle)
                deliver(transfer.entry, .failure(HTTPJobCancelled()), now: now)
            } else if transfer.entry.cancelledAt == nil {
                transfer.entry.cancelledAt = now
            }
        }
    }

    func cancelAll() {
        cancel(Set(pending.map(\.id) + active.values.map(\.entry.id)), abort: true)
    }

    /// Starts what may start, performs, takes in what completed; returns how long curl may
    /// wait for activity before the next turn (milliseconds).
    func turn() -> Int {
        var running: Int32 = 0
        curl_multi_perform(multi, &running)
        collect()
        abortCancelled()
        startEligible()
        curl_multi_perform(multi, &running)
        // What completed after the starts above (a retry, a redirect's next hop, a free slot)
        // is started, or marked held, by the next turn: at once, not after curl's next wait.
        guard !collect() else { return 0 }
        let now = HTTPEngine.now
        var wake = now + 1
        for transfer in active.values { if let at = transfer.entry.cancelledAt { wake = min(wake, at + Self.cancelGrace) } }
        for entry in pending where entry.notBefore > now { wake = min(wake, entry.notBefore) }
        for until in holds.values where until > now { wake = min(wake, until) }
        if let bucketWake { wake = min(wake, bucketWake) }
        return max(0, Int(((wake - now) * 1000).rounded(.up)))
    }

    /// Ends the cancelled transfers whose grace is over.
    private func abortCancelled() {
        let now = HTTPEngine.now
        for (handle, transfer) in active {
            guard let at = transfer.entry.cancelledAt, now >= at + Self.cancelGrace else { continue }
            remove(handle)
            deliver(transfer.entry, .failure(HTTPJobCancelled()), now: now)
        }
    }

    private func startEligible() {
        let now = HTTPEngine.now
        bucketWake = nil
        var blockedBuckets = Set<String>()
        var started: Set<HTTPJob.ID> = []
        for entry in pending {
            guard active.count < configuration.concurrency else { break }
            guard entry.notBefore <= now else { continue }
            let origin = entry.job.origin
            if let until = holds[origin], until > now {
                hold(entry, until: until, now: now, reason: "the server's reset")
                continue
            }
            if let cap = entry.job.hostCap, activeByOrigin[origin, default: 0] >= cap { continue }
            if entry.hop == nil, !entry.job.buckets.isEmpty {
                let keys = Set(entry.job.buckets.map(\.key))
                if !keys.isDisjoint(with: blockedBuckets) {
                    hold(entry, until: nil, now: now, reason: "the rate limit")
                    continue
                }
                let wait = takeTokens(entry.job.buckets, now: now)
                if wait > 0 {
                    blockedBuckets.formUnion(keys)
                    bucketWake = min(bucketWake ?? .infinity, now + wait)
                    hold(entry, until: now + wait, now: now, reason: "the rate limit")
                    continue
                }
            }
            release(entry, now: now)
            if start(entry, now: now) { started.insert(entry.id) }
        }
        pending.removeAll { started.contains($0.id) || $0.isDone }
    }

    /// A token from each bucket: from the shared store when runners share one (by its clock),
    /// else from the run's own. A shared store that cannot be reached falls back to the run's own.
    private func takeTokens(_ specs: [TokenBucketSpec], now: Double) -> Double {
        // The shared store's error is dropped here on purpose: the adapter (StoreTokenBuckets) logs it once,
        // and the run keeps its manners with its own buckets.
        if let shared = configuration.sharedBuckets, let wait = try? shared.take(specs) { return wait }
        return buckets.take(specs, at: now)
    }

    /// Marks `entry` held by a budget: behind earlier jobs of its bucket (`until` nil), or first
    /// in line until `until`; fails it when its wait first in line would pass its `maxWait`.
    private func hold(_ entry: Entry, until: Double?, now: Double, reason: String) {
        entry.heldSince = entry.heldSince ?? now
        guard let until else { return }
        let since = entry.budgetSince ?? now
        entry.budgetSince = since
        if entry.budgetWaited + (until - since) > entry.job.maxWait {
            let back = Date().addingTimeInterval(until - now)
            entry.isDone = true
            deliver(entry, .failure(HTTPBudgetExceeded(origin: entry.job.origin, until: back, reason: reason, maxWait: entry.job.maxWait)),
                    now: now)
        }
    }

    private func release(_ entry: Entry, now: Double) {
        if let since = entry.heldSince {
            entry.held.append(since...max(since, now))
            entry.heldSince = nil
        }
        if let since = entry.budgetSince {
            entry.budgetWaited += max(0, now - since)
            entry.budgetSince = nil
        }
    }

    /// Builds and adds the transfer; false when it completed at once (a request that could not be built).
    private func start(_ entry: Entry, now: Double) -> Bool {
        let request: HTTPRequest
        do {
            request = try entry.hop ?? entry.job.prepare()
        } catch {
            deliver(entry, .failure(error), now: now)
            return true
        }
        let client: HTTPClient
        do {
            client = try idle.popLast() ?? HTTPClient(userAgent: configuration.userAgent)
        } catch {
            deliver(entry, .failure(error), now: now)
            return true
        }
        entry.body.removeAll(keepingCapacity: true)
        let hop: HTTPClient.ConfiguredHop
        do {
            hop = try client.configureHop(request, naming: entry.hop == nil ? request.url : (entry.firstURL ?? request.url)) { [entry] bytes in
                entry.body.append(contentsOf: bytes)
            }
        } catch {
            idle.append(client)
            deliver(entry, .failure(error), now: now)
            return true
        }
        if entry.hop == nil { entry.firstURL = request.url }
        entry.requests += 1
        active[client.easyHandle] = Active(entry: entry, client: client, hop: hop)
        activeByOrigin[entry.job.origin, default: 0] += 1
        curl_multi_add_handle(multi, client.easyHandle)
        return true
    }

    private func remove(_ handle: UnsafeMutableRawPointer) {
        guard let transfer = active.removeValue(forKey: handle) else { return }
        curl_multi_remove_handle(multi, handle)
        activeByOrigin[transfer.entry.job.origin, default: 1] -= 1
        idle.append(transfer.client)
    }

    /// Takes in every completed transfer; true when there was one.
    @discardableResult
    private func collect() -> Bool {
        var queued: Int32 = 0
        var collected = false
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let transfer = active[handle] else { continue }
            let code = message.pointee.data.result
            remove(handle)
            complete(transfer, code: code)
            collected = true
        }
        return collected
    }

    private func complete(_ transfer: Active, code: CURLcode) {
        let entry = transfer.entry
        let now = HTTPEngine.now
        guard entry.cancelledAt == nil else { return deliver(entry, .failure(HTTPJobCancelled()), now: now) }
        let hop: HTTPClient.Hop
        do {
            hop = try transfer.client.conclude(transfer.hop, code: code)
        } catch {
            switch error {
            case .body(let bodyError): deliver(entry, .failure(bodyError), now: now)
            case .http(let failure): retryOrFail(entry, failure, now: now)
            }
            return
        }
        switch hop {
        case .response(let response):
            holdHost(entry.job.origin, status: nil, headers: response.headers, now: now)
            deliver(entry, .success(response), now: now)
        case .redirect(let location, let status):
            entry.redirects += 1
            let firstURL = entry.firstURL ?? location
            guard entry.redirects <= HTTPClient.maxRedirects else {
                var failure = HTTPError(kind: .redirectLoop, url: firstURL, message: "more than \(HTTPClient.maxRedirects) redirects")
                failure.method = transfer.hop.request.method
                return deliver(entry, .failure(failure), now: now)
            }
            do {
                entry.hop = try HTTPClient.redirected(transfer.hop.request, to: location, status: status, naming: firstURL)
                insert(entry)
            } catch {
                deliver(entry, .failure(error), now: now)
            }
        }
    }

    private func retryOrFail(_ entry: Entry, _ failure: HTTPError, now: Double) {
        var status: Int?
        if case .status(let code) = failure.kind { status = code }
        let held = holdHost(entry.job.origin, status: status, headers: failure.headers, now: now)
        entry.hop = nil
        entry.redirects = 0
        if status == 401, !entry.renewed, let renew = entry.job.renewCredentials, renew() {
            entry.renewed = true
            return insert(entry)
        }
        guard failure.isRetryable, entry.attempt <= entry.job.retry.retries else {
            return deliver(entry, .failure(failure), now: now)
        }
        // A server's hold paces the retry (the host waits); otherwise the policy's backoff.
        let delay = held ? 0 : entry.job.retry.delay(beforeRetry: entry.attempt, retryAfter: nil, random: &random)
        entry.attempt += 1
        entry.notBefore = now + delay
        insert(entry)
    }

    /// Holds `origin` for what the response says; true when it says to wait.
    @discardableResult
    private func holdHost(_ origin: String, status: Int?, headers: [HTTPHeader], now: Double) -> Bool {
        guard let seconds = ServerHold.seconds(status: status, headers: headers) else { return false }
        holds[origin] = max(holds[origin] ?? 0, now + seconds)
        return true
    }

    private func deliver(_ entry: Entry, _ outcome: Result<HTTPResponse, any Error>, now: Double) {
        entry.isDone = true
        release(entry, now: now)
        let result = HTTPJobResult(outcome: outcome, body: entry.body, retries: entry.attempt - 1, requests: entry.requests, held: entry.held)
        entry.body = []
        entry.job.completion(result)
    }
}
