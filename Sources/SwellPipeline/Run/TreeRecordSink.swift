import SwellJSON

/// Records read whole, as `JSONValue` trees, for the object stage (`WriteStage.objects`:
/// appended records, nested records of the shapes `GraphShape` leaves out): the projection
/// reader builds each record whole (`JSONProjection.wholeRecords`, in its one pass over the
/// page) and the sink hands it to the `RecordRouter`, which converts its key and sends it to
/// its worker. The one page reader of every record path is the projection's; it builds a
/// tree here because a tree is what this stage maps from.
///
/// Used on the fetch thread only.
struct TreeRecordSink: ProjectingSink {
    private var router: RecordRouter
    private var page = ""
    private var built: JSONValue = .null

    /// Each record built whole.
    var projection: JSONProjection { .wholeRecords }

    init(router: RecordRouter) {
        self.router = router
    }

    mutating func begin(page url: String) { page = url }
    mutating func reading(_ bytes: UnsafeRawBufferPointer) {}
    mutating func doneReading(keepingFrom offset: Int) {}

    mutating func field(_ field: Int, value: JSONFieldValue) throws {}
    mutating func notAnObject(_ found: JSONFieldMismatch) throws {}
    mutating func record(_ value: JSONValue) throws { built = value }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        router.add(page: page, index: index, record: built)
        built = .null
    }

    /// A page's records go to the workers at its end, as a page is a fetch's unit.
    mutating func pageEnded() { router.flush() }
    mutating func handOff() { router.flush() }
    mutating func pageCompleted(_ number: Int) { router.pageCompleted(number) }
}

@available(*, unavailable)
extension TreeRecordSink: Sendable {}
