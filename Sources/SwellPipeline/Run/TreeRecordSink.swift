import SwellJSON

/// Records read whole, as `JSONValue` trees, for the object stage (`WriteStage.objects`:
/// appended records, nested records of the shapes `GraphShape` leaves out): the projection
/// reader delimits each record (it projects no field), and at its end the record is read
/// from its own text (`RecordWindow`) and handed to the `RecordRouter`, which converts its
/// key and sends it to its worker. The one page reader of every record path is the
/// projection's; the tree is made here because it is what these stages map from.
///
/// Used on the fetch thread only.
struct TreeRecordSink: ProjectingSink {
    private var router: RecordRouter
    private let sourceName: String
    private var page = ""
    private var window = RecordWindow()
    /// Reads records again from their bytes, its stacks kept from one record to the next.
    private var parser = JSONValue.Parser()

    /// No field: the reader only finds where each record starts and ends.
    let projection = JSONProjection(fields: [])

    init(router: RecordRouter, source: SourceSpec) {
        self.router = router
        self.sourceName = source.name
    }

    mutating func begin(page url: String) {
        page = url
        window.begin()
    }

    mutating func reading(_ bytes: UnsafeRawBufferPointer) { window.reading(bytes) }
    mutating func doneReading(keepingFrom offset: Int) { window.doneReading(keepingFrom: offset) }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {}
    mutating func notAnObject(_ found: JSONFieldMismatch) throws {}

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        let record = try window.record(index: index, start: start.byteOffset, end: end, page: page, source: sourceName, parser: &parser)
        router.add(page: page, index: index, record: record)
    }

    /// A page's records go to the workers at its end, as a page is a fetch's unit.
    mutating func pageEnded() { router.flush() }
    mutating func handOff() { router.flush() }
    mutating func pageCompleted(_ number: Int) { router.pageCompleted(number) }
}

@available(*, unavailable)
extension TreeRecordSink: Sendable {}
