import SwellCSV
import SwellCalendar
import SwellJSON
import SwellStore

/// A flat source's records, read by `JSONProjectionReader` straight into columns
/// on the fetch thread: each record's projected fields are staged (`StagedRow`) and,
/// once the record is complete, appended to the `ColumnBatch`; every `batchSize`
/// records the batch goes to the `ColumnWriter` as one batch insert. No `JSONValue`,
/// no `StoreValue` per record.
///
/// A record the projection does not take as it is (see `ProjectedMapping`) is read
/// again from its own text and mapped by `RecordMapper`, so it converts, or is
/// rejected, exactly as the contract's Values table says. For that the sink keeps
/// the page's bytes the reader may still complete a record from (`window`).
///
/// Used on the fetch thread only (it owns that thread's date formatters).
struct ColumnRecordSink: JSONProjectionSink {
    private let mapping: ProjectedMapping
    private let mapper: RecordMapper
    private let rejecter: RecordRejecter
    private let batchSize: Int
    private let output: BatchQueue<BatchColumns>
    private let state: SourceRunState
    private let progress: SourceProgress
    private let sweeper: ReplaceSweeper?
    private let cursor: IncrementalCursor?
    private let patterns = DatePatterns()

    private var batch: ColumnBatch
    private var row: StagedRow
    /// The record being read goes to `RecordMapper`.
    private var needsMapper = false

    private var page = ""
    /// The page's bytes from offset `windowBase` on, as fed.
    private var window: [UInt8] = []
    private var windowBase = 0

    /// Since the last hand-off: records read, rejected, the largest cursor value, keys seen (replace).
    private var records = 0
    private var rejected = 0
    private var largest: StoreValue?
    private var keys: [[StoreValue]] = []

    init(mapper: RecordMapper, rejecter: RecordRejecter, batchSize: Int, output: BatchQueue<BatchColumns>, state: SourceRunState,
         progress: SourceProgress, sweeper: ReplaceSweeper?, cursor: IncrementalCursor?) {
        self.mapping = ProjectedMapping(mapper: mapper)
        self.mapper = mapper
        self.rejecter = rejecter
        self.batchSize = batchSize
        self.output = output
        self.state = state
        self.progress = progress
        self.sweeper = sweeper
        self.cursor = cursor
        batch = ColumnBatch(entity: mapper.entity, expectedRows: batchSize)
        row = StagedRow(attributes: mapper.entity.attributes.count)
    }

    /// The projection the reader follows.
    var projection: JSONProjection { mapping.projection }

    /// Starts (again) on the page at `url`.
    mutating func begin(page url: String) {
        page = url
        window.removeAll(keepingCapacity: true)
        windowBase = 0
        row.clear()
        needsMapper = false
    }

    /// Keeps a chunk's bytes before the reader reads it (a record may need its own text).
    mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        window.append(contentsOf: bytes)
    }

    /// Lets go of the page's bytes before `offset` (the reader's `earliestNeededOffset`: the
    /// record under way, or bytes it holds back), so the window stays about a record long
    /// whatever comes before, between or after the records.
    mutating func trim(before offset: Int) {
        let drop = min(offset - windowBase, window.count)
        guard drop > 0 else { return }
        window.removeFirst(drop)
        windowBase += drop
    }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        switch value {
        case .missing, .null:
            if mapping.needsValue[field] { needsMapper = true }
        case .integer(let int):
            row.values[field] = .integer(int)
        case .double(let double):
            if case .unixDate(let divisor) = mapping.conversions[field], divisor != 1 {
                row.values[field] = .double(double / divisor)
            } else {
                row.values[field] = .double(double)
            }
        case .bool(let flag):
            row.values[field] = .integer(flag ? 1 : 0)
        case .string(let bytes):
            switch mapping.conversions[field] {
            case .isoDate:
                if let seconds = ISODate.seconds(fromUTF8: bytes.assumingMemoryBound(to: UInt8.self)) {
                    row.values[field] = .double(seconds)
                } else {
                    needsMapper = true
                }
            case .patternDate(let pattern):
                if let seconds = patterns.seconds(from: String(decoding: bytes, as: UTF8.self), pattern: pattern) {
                    row.values[field] = .double(seconds)
                } else {
                    needsMapper = true
                }
            default:
                row.setText(field, bytes)
            }
        case .json(let bytes):
            row.setText(field, bytes)
        case .mismatch:
            needsMapper = true
        }
    }

    mutating func notAnObject(_ found: JSONFieldMismatch) throws {
        needsMapper = true
    }

    mutating func recordEnd(index: Int, start: JSONPosition, end: Int) throws {
        records += 1
        if needsMapper {
            row.clear()
            needsMapper = false
            try mapRecord(index: index, text: (start.byteOffset - windowBase)..<(end - windowBase))
        } else {
            batch.append(row)
            if sweeper != nil { keys.append(mapper.keyIndices.map { row.storeValue($0) }) }
            if let cursor { largest = IncrementalCursor.larger(largest, row.storeValue(cursor.attributeIndex)) }
            row.clear()
        }
        if batch.count >= batchSize { handOff() }
    }

    /// Reads record `index` again from its text and maps it as `RecordMapper` does.
    private mutating func mapRecord(index: Int, text: Range<Int>) throws {
        let record: JSONValue
        do {
            guard text.lowerBound >= 0, text.upperBound <= window.count else {
                throw PipelineError(.other, "the record's bytes \(text) are not kept (\(window.count) bytes from offset \(windowBase))")
            }
            record = try JSONValue.parse(window[text])
        } catch {
            throw PipelineError(.other, "source \(rejecter.source.name): record \(index) of page \(page) could not be read again: \(error)",
                                underlying: error)
        }
        let key = mapper.mapKey(record, using: patterns)
        switch mapper.map(record, key: key, using: patterns) {
        case .success(let values):
            batch.append(values)
            if sweeper != nil { keys.append(mapper.keyIndices.map { values[$0] }) }
            if let cursor { largest = cursor.largest(largest, values) }
        case .failure(let bad):
            if let failure = try rejecter.reject(page: page, index: index, record: record, message: bad.message, attribute: bad.attribute) {
                throw failure
            }
            rejected += 1
        }
    }

    /// Counts the records read since the last hand-off and sends the batch to the writer
    /// (waiting while the writer is a batch behind: rows in flight stay bounded).
    mutating func handOff() {
        if records > 0 {
            state.count(records: records, rejected: rejected, cursor: largest)
            sweeper?.saw(keys)
            progress.addRecords(records)
            records = 0
            rejected = 0
            largest = nil
            keys.removeAll(keepingCapacity: true)
        }
        if batch.count > 0 { output.put(batch.take()) }
    }
}

@available(*, unavailable)
extension ColumnRecordSink: Sendable {}
