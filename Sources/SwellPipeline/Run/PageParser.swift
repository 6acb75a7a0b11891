import SwellJSON
import SwellContexts

/// What `PageFetcher` feeds a page's bytes to: a reader for the page and where its
/// records go (`ProjectionPages`, over the sink of the source's `WriteStage`).
protocol PageParser {
    /// Starts (again: a retried attempt starts over) on the page at `url`.
    mutating func begin(url: String)
    /// Parses the page's next bytes, sending on the records completed in them.
    mutating func parse(_ bytes: UnsafeRawBufferPointer) throws
    /// Ends the page; returns the captured values (`JSONPageReader.finish`).
    mutating func finish() throws -> [[String]: JSONValue]
    /// Records the page has had so far.
    var recordCount: Int { get }
    /// Whether the page held its records array (a GraphQL answer without data holds none).
    var sawRecords: Bool { get }
    /// The page ended.
    mutating func endPage()
    /// Page `number` of the run (from 0, in page order) is complete — its records all handed
    /// on, its next request known — whatever it held (a 304 or an empty status included).
    mutating func pageCompleted(_ number: Int)
    /// Sends on the records held back (after the last page, or when the run fails).
    mutating func flush()
    /// No more records come: the stage after this one drains and stops.
    func close()
}

/// A sink a `ProjectionPages` reads records into, which sends its batches on by itself.
protocol ProjectingSink: JSONProjectionSink {
    /// The projection the reader follows.
    var projection: JSONProjection { get }
    /// Starts (again) on the page at `url`.
    mutating func begin(page url: String)
    /// The reader is about to read `bytes` (see `RecordWindow`).
    mutating func reading(_ bytes: UnsafeRawBufferPointer)
    /// The chunk is read; the page's bytes from `offset` on may still be needed.
    mutating func doneReading(keepingFrom offset: Int)
    /// Sends on the records held.
    mutating func handOff()
    /// Page `number` is complete (`PageParser.pageCompleted`).
    mutating func pageCompleted(_ number: Int)
    /// The page ended (its records all delivered).
    mutating func pageEnded()
}

extension ProjectingSink {
    /// Batches span pages: by default a page's end sends nothing on.
    mutating func pageEnded() {}
}

extension ColumnRecordSink: ProjectingSink {}
extension GraphRecordSink: ProjectingSink {}

/// Pages read by a `JSONProjectionReader` into the sink of the source's write stage
/// (`WriteStage`): columns (`ColumnRecordSink`, to the `ColumnWriter`), graph batches
/// (`GraphRecordSink`, to the `GraphWriter`) or trees (`TreeRecordSink`, to the workers).
struct ProjectionPages<Sink: ProjectingSink>: PageParser {
    private var sink: Sink
    /// Closes the queue the sink's batches go to.
    private let closeOutput: () -> Void
    private let format: JSONPageReader.Format
    private let recordsPath: [String]?
    private let capturePaths: [[String]]
    private let objectPageIsRecord: Bool
    private let recordsMayBeMissing: Bool
    private var reader: JSONProjectionReader

    init(sink: Sink, source: SourceSpec, capturePaths: [[String]], closeOutput: @escaping () -> Void) {
        self.sink = sink
        self.closeOutput = closeOutput
        format = source.isNDJSON ? .ndjson : .json
        recordsPath = source.records
        self.capturePaths = capturePaths
        objectPageIsRecord = source.objectPageIsRecord
        recordsMayBeMissing = source.isGraphQL
        reader = JSONProjectionReader(projection: sink.projection, format: format, recordsPath: recordsPath, capturePaths: capturePaths,
                                      objectPageIsRecord: objectPageIsRecord, recordsMayBeMissing: recordsMayBeMissing)
    }

    var recordCount: Int { reader.recordCount }
    var sawRecords: Bool { reader.sawRecords }

    mutating func begin(url: String) {
        reader = JSONProjectionReader(projection: sink.projection, format: format, recordsPath: recordsPath, capturePaths: capturePaths,
                                      objectPageIsRecord: objectPageIsRecord, recordsMayBeMissing: recordsMayBeMissing)
        sink.begin(page: url)
    }

    mutating func parse(_ bytes: UnsafeRawBufferPointer) throws {
        sink.reading(bytes)
        defer { sink.doneReading(keepingFrom: reader.earliestNeededOffset) }
        try reader.feed(bytes, into: &sink)
    }

    mutating func finish() throws -> [[String]: JSONValue] {
        try reader.finish(into: &sink)
    }

    mutating func endPage() { sink.pageEnded() }
    /// A full batch that waited for its page's end goes on now (`BatchPages`).
    mutating func pageCompleted(_ number: Int) { sink.pageCompleted(number) }
    mutating func flush() { sink.handOff() }
    func close() { closeOutput() }
}
