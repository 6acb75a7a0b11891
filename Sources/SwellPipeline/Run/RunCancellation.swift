import SwellLocks

/// The one way a run is stopped from outside (SIGINT or SIGTERM in `swell`): once cancelled,
/// every source's fetch loop ends at once (the page in transfer is abandoned; its records
/// already parsed go on with the rest), its workers save what was fetched,
/// no export is started and one in progress is dropped (its file is never put in place), and
/// the run fails with the reason — `.interrupted`, exit 1 in `swell`: run again.
///
/// Shared by reference between the thread that cancels and the run's threads, which read it
/// where they already look for a source's failure.
public final class RunCancellation: Sendable {
    private let reason = LockedValue<PipelineError?>(nil)

    public init() {}

    /// Stops the run with `error` (the first reason given is kept).
    public func cancel(_ error: PipelineError) {
        reason.withLock { if $0 == nil { $0 = error } }
    }

    /// Why the run was stopped; nil while it was not.
    public var error: PipelineError? { reason.withLock { $0 } }
}
