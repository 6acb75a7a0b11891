import Foundation
import Logging
import SwellContexts
import SwellHTTP
import SwellLocks
import SwellPostgres

/// The run's token buckets kept in its store, when the store is shared by many runners
/// (a PostgreSQL store: Pipeline file reference, "One budget for many runners"): what the
/// HTTP engine takes its tokens from instead of the run's own buckets.
///
/// A denied take answers how long until every bucket holds a token; only time adds tokens, so
/// until then the same buckets are not asked for again (the engine tries again on each of its
/// turns, and each ask would be a round trip): the wait left is answered at once.
///
/// When the store cannot be reached or refuses a take, the engine falls back to the run's
/// own buckets (it goes on, within the file's rate alone, not the runners' together); this
/// says so once, at warning, and tries the store again `retryInterval` later rather than on
/// every request (a take that cannot connect waits up to its connect timeout). When the
/// store answers again, a notice says so and the shared buckets count again.
final class StoreTokenBuckets: SharedTokenBuckets {
    /// Seconds the run keeps to its own buckets after a failed take.
    static let retryInterval = 10.0

    private struct State {
        /// Until when (engine clock) takes go to the run's own buckets.
        var fallingBackUntil: Double?
        var warned = false
        /// Until when (engine clock) a take of these buckets was told to wait.
        var deniedUntil: [Set<String>: Double] = [:]
    }

    private let session: PostgresRateBudgetSession
    private let logger: Logger
    private let redactor: Redactor
    private let state = LockedValue(State())

    /// The store's buckets, when `coordinator`'s store shares them; nil for a store of one run
    /// at a time (SQLite, in memory): its runs keep their own.
    static func shared(by coordinator: PersistentStoreCoordinator, logger: Logger, redactor: Redactor) -> StoreTokenBuckets? {
        (coordinator.persistentStore as? PostgresStore).map {
            StoreTokenBuckets(session: $0.openRateBudget(), logger: logger, redactor: redactor)
        }
    }

    init(session: PostgresRateBudgetSession, logger: Logger, redactor: Redactor) {
        self.session = session
        self.logger = logger
        self.redactor = redactor
    }

    deinit { session.close() }

    func take(_ buckets: [TokenBucketSpec]) throws -> Double {
        let now = HTTPEngine.now
        let keys = Set(buckets.map(\.key))
        let (fallingBack, denied) = state.withLock { ($0.fallingBackUntil, $0.deniedUntil[keys]) }
        if let fallingBack, now < fallingBack { throw SharedBudgetUnavailable() }
        if let denied, now < denied { return denied - now }
        do {
            let wait = try session.takeToken(from: buckets.map {
                RateBucketSpec(key: $0.key, tokensPerSecond: $0.tokensPerSecond, burst: $0.burst)
            })
            let recovered = state.withLock { state -> Bool in
                defer { state.fallingBackUntil = nil }
                state.deniedUntil = state.deniedUntil.filter { $0.value > now }
                if wait > 0 { state.deniedUntil[keys] = now + wait }
                return state.fallingBackUntil != nil
            }
            if recovered {
                logger.notice("the store's shared rate budget answers again; the run's requests count against it again")
            }
            return wait
        } catch {
            let first = state.withLock { state -> Bool in
                state.fallingBackUntil = now + Self.retryInterval
                defer { state.warned = true }
                return !state.warned
            }
            let message = "the store's shared rate budget cannot be used; this run keeps to its own buckets until it can "
                + "(other runners' requests are not counted meanwhile), trying again every \(Int(Self.retryInterval)) s"
            let metadata: Logger.Metadata = ["error": "\(redactor("\(error)"))"]
            if first { logger.warning("\(message)", metadata: metadata) } else { logger.debug("\(message)", metadata: metadata) }
            throw error
        }
    }
}

/// A take while the run keeps to its own buckets (`StoreTokenBuckets`).
struct SharedBudgetUnavailable: Error {}
