/// A batch on its way to its writer, with the pages it completes: every record of the pages
/// before `wholePages` (this run's page numbers) is in it or in an earlier batch. nil: the
/// source keeps no position (`PositionBook.keepsPositions`).
struct PositionedBatch<Batch: Sendable>: Sendable {
    var batch: Batch
    var wholePages: Int?
}

/// Which pages a sink's batches hold whole, for the source's position: pages before `whole`
/// are complete in what the sink handed off and holds. When positions are kept, a batch that
/// is full waits to be handed off until the next record starts or its page completes — so a
/// batch that ends with its page's last record says so, and with `--batch-size` equal to the
/// page size every page is a resume point.
struct BatchPages {
    /// Positions are kept: cuts wait for the next record or the page's end.
    let defersCuts: Bool
    /// Pages before this one are complete (this run's page numbers).
    private(set) var whole = 0
    /// The batch is full: hand it off before the next record's first value, or at its page's end.
    private(set) var cutPending = false

    init(defersCuts: Bool) {
        self.defersCuts = defersCuts
    }

    /// The batch reached its size: whether to hand it off now (else `cutPending`).
    mutating func batchFull() -> Bool {
        guard defersCuts else { return true }
        cutPending = true
        return false
    }

    /// Page `number` completed: whether a full batch waits to be handed off.
    mutating func pageCompleted(_ number: Int) -> Bool {
        whole = max(whole, number + 1)
        return cutPending
    }

    /// The batch is handed off.
    mutating func cut() {
        cutPending = false
    }

    /// What the batch handed off now says (`PositionedBatch.wholePages`).
    var mark: Int? { defersCuts ? whole : nil }
}
