import Dispatch
import Foundation
import Logging
import SwellPipeline

/// SIGINT and SIGTERM during a run: the first one cancels the run (`RunCancellation`), which
/// stops fetching, saves what was fetched, writes no export and exits 1; a second one ends
/// the process at once, as the signal does by default (what a commit had not finished is
/// rolled back by the store).
final class InterruptHandler {
    private let sources: [any DispatchSourceSignal]

    init(cancelling cancellation: RunCancellation, logger: Logger) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)   // delivered to the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let name = number == SIGINT ? "SIGINT" : "SIGTERM"
                logger.warning("interrupted: saving what was fetched, then stopping (again to stop at once)", metadata: ["signal": "\(name)"])
                cancellation.cancel(PipelineError(.interrupted, "interrupted by \(name): what was fetched before is saved; "
                                                  + "exports were not written; run again to finish"))
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
            }
            source.resume()
            return source
        }
    }

    /// The run is over: signals act as by default again.
    func stop() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
