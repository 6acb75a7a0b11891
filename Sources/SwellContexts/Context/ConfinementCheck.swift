import Foundation
import SwellStoreCore

/// What a context does when it is touched off its queue (GRDB's
/// `SchedulingWatchdog.preconditionValidQueue`, Core Data's `ConcurrencyDebug`).
enum ConfinementCheck: Sendable, Equatable {
    /// Not checked: release builds without `SWELL_CONCURRENCY_DEBUG=1`, or `SWELL_CONCURRENCY_DEBUG=0`.
    case off
    /// A warning naming the context on stderr, once per context: debug builds by default.
    case warn
    /// The program stops with a message naming the context: `SWELL_CONCURRENCY_DEBUG=1` (Store guarantees 3).
    case stop

    /// The process's setting, read from the environment once (at the first context made).
    ///
    /// Debug builds warn rather than stop by default: Store guarantees 3 ties stopping to the
    /// variable, and code written against the contract may touch objects off their queue
    /// where the contract only promises a check with the variable set.
    static let current = ConfinementCheck(environment: ProcessInfo.processInfo.environment["SWELL_CONCURRENCY_DEBUG"])

    init(environment value: String?) {
        switch value {
        case "1": self = .stop
        case "0": self = .off
        default:
            #if DEBUG
            self = .warn
            #else
            self = .off
            #endif
        }
    }
}
