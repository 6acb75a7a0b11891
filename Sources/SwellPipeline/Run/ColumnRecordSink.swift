import SwellCSV
import SwellCalendar
import SwellJSON
import SwellContexts

/// A flat source's records, read by `JSONProjectionReader` straight into columns
/// on the fetch thread: each record's projected fields are appended to the
/// `ColumnBatch`'s columns as they are delivered, the row completed at the record's end
/// or dropped if the record needs `RecordMapper`; every `batchSize` records the batch
/// goes to the `ColumnWriter` as one batch insert. No `JSONValue`, no `StoreValue`, no
/// staging copy per record.
///
/// A record the projection does not take as it is (see `RecordMapper.Projected`) is read
/// again from its own text (`RecordWindow`) and mapped by `RecordMapper`, so it
/// converts, or is rejected, exactly as the contract's Values table says.
///
/// Used on the fetch thread only (it owns that thread's date formatters).
struct ColumnRecordSink: JSONProjectionSink {
    private let mapping: RecordMapper.Projected
    private let mapper: RecordMapper
    private let rejecter: RecordRejecter
    private let batchSize: Int
    private let output: BatchQueue<PositionedBatch<BatchColumns>>
    private let patterns = DatePatterns()
    /// Which pages the batches hold whole (the source's position).
    private var pages: BatchPages

    private var batch: ColumnBatch
    /// The record being read goes to `RecordMapper` (its values appended so far are dropped at its end).
    private var needsMapper = false

    private var page = ""
    private var window = RecordWindow()
    /// Reads records again from their bytes, its stacks kept from one record to the next.
    private var parser = JSONValue.Parser()

    /// Since the last hand-off: records read, rejected, the largest cursor value, keys seen (replace).
    private var tally: SinkTally

    init(mapper: RecordMapper, rejecter: RecordRejecter, batchSize: Int, output: BatchQueue<PositionedBatch<BatchColumns>>,
         state: SourceRunState, progress: SourceProgress, sweeper: ReplaceSweeper?, cursor: IncrementalCursor?, positions: PositionBook) {
        self.mapping = mapper.projected
        self.mapper = mapper
        self.rejecter = rejecter
        self.batchSize = batchSize
        self.output = output
        tally = SinkTally(state: state, progress: progress, sweeper: sweeper, cursor: cursor, keyIndices: mapper.keyIndices)
        batch = ColumnBatch(entity: mapper.entity, expectedRows: batchSize)
        pages = BatchPages(defersCuts: positions.keepsPositions)
    }

    /// The projection the reader follows.
    var projection: JSONProjection { mapping.projection }

    /// Starts (again) on the page at `url`.
    mutating func begin(page url: String) {
        page = url
        window.begin()
        batch.abandonRow()
        needsMapper = false
    }

    /// The reader is about to read `bytes`, the page's next chunk.
    mutating func reading(_ bytes: UnsafeRawBufferPointer) {
        window.reading(bytes)
    }

    /// The chunk is read: keeps the page's bytes from `offset` on (`RecordWindow`).
    mutating func doneReading(keepingFrom offset: Int) {
        window.doneReading(keepingFrom: offset)
    }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        if pages.cutPending { handOff() }
        guard !needsMapper else { return }
        switch mapping.conversions[field].convert(value, patterns: patterns) {
        case .missing, .null:
            if mapping.needsValue[field] { needsMapper = true } else { batch.append(.null, at: field) }
        case .value(let converted):
            if mapping.rules.hasRules(field), !mapping.rules.keeps(attribute: field, converted.storeValue) {
                needsMapper = true
            } else {
                batch.append(converted, at: field)
            }
        case .unconverted:
            needsMapper = true
        }
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        if pages.cutPending { handOff() }
        needsMapper = true
    }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        if pages.cutPending { handOff() }
        tally.read()
        if needsMapper {
            batch.abandonRow()
            needsMapper = false
            try mapRecord(index: index, start: start.byteOffset, end: end)
        } else {
            let row = batch.count
            batch.endRow()
            tally.took { batch.value(row: row, attribute: $0) }
        }
        if batch.count >= batchSize, pages.batchFull() { handOff() }
    }

    /// Page `number` completed: a full batch waiting for it goes now, holding that page whole.
    mutating func pageCompleted(_ number: Int) {
        if pages.pageCompleted(number) { handOff() }
    }

    /// Reads record `index` (the page's bytes `start..<end`) again from its text and maps it
    /// as `RecordMapper` does.
    private mutating func mapRecord(index: Int, start: Int, end: Int) throws {
        let record = try window.record(index: index, start: start, end: end, page: page, source: rejecter.source.name, parser: &parser)
        let key = mapper.mapKey(record, using: patterns)
        switch mapper.map(record, key: key, using: patterns) {
        case .success(let values):
            batch.append(values)
            tally.took { values[$0] }
        case .failure(let bad):
            if let failure = try rejecter.reject(page: page, index: index, record: record, message: bad.message, attribute: bad.attribute) {
                throw failure
            }
            tally.rejectedOne()
        }
    }

    /// Counts the records read since the last hand-off and sends the batch to the writer
    /// (waiting while the writer is a batch behind: rows in flight stay bounded). Out of line:
    /// `field` checks for a pending cut at every value, and inlined there this made `field`
    /// too large to inline into the projection's loop (+10 % CPU on a 1M-record import).
    @inline(never)
    mutating func handOff() {
        pages.cut()
        tally.handOff()
        if batch.count > 0 { output.put(PositionedBatch(batch: batch.take(), wholePages: pages.mark)) }
    }
}

@available(*, unavailable)
extension ColumnRecordSink: Sendable {}
