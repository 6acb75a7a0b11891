import SwellCSV
import SwellCalendar
import SwellJSON
import SwellStore

/// A flat source's records, read by `JSONProjectionReader` straight into columns
/// on the fetch thread: each record's projected fields are appended to the
/// `ColumnBatch`'s columns as they are delivered, the row completed at the record's end
/// or dropped if the record needs `RecordMapper`; every `batchSize` records the batch
/// goes to the `ColumnWriter` as one batch insert. No `JSONValue`, no `StoreValue`, no
/// staging copy per record.
///
/// A record the projection does not take as it is (see `ProjectedMapping`) is read
/// again from its own text and mapped by `RecordMapper`, so it converts, or is
/// rejected, exactly as the contract's Values table says. For that the sink reads a
/// record from the chunk being fed (`chunk`, not copied) and keeps, between chunks,
/// the page's bytes the reader may still complete a record from (`window`).
///
/// Used on the fetch thread only (it owns that thread's date formatters); `chunk`
/// points into the caller's buffer only between `reading` and `doneReading`.
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
    /// The record being read goes to `RecordMapper` (its values appended so far are dropped at its end).
    private var needsMapper = false

    private var page = ""
    /// Bytes of earlier chunks of the page, from offset `windowBase` on, that a record may
    /// still be read from.
    private var window: [UInt8] = []
    private var windowBase = 0
    /// The chunk being fed, at page offset `chunkBase` (right after the window's bytes).
    private var chunk: UnsafeRawBufferPointer?
    private var chunkBase = 0

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
    }

    /// The projection the reader follows.
    var projection: JSONProjection { mapping.projection }

    /// Starts (again) on the page at `url`.
    mutating func begin(page url: String) {
        page = url
        window.removeAll(keepingCapacity: true)
        windowBase = 0
        batch.abandonRow()
        needsMapper = false
    }

    /// The reader is about to read `bytes`, the page's next chunk: a record may be read again
    /// from them until `doneReading`.
    mutating func reading(_ bytes: UnsafeRawBufferPointer) {
        chunk = bytes
        chunkBase = windowBase + window.count
    }

    /// The chunk is read: keeps its bytes from `offset` on (the reader's
    /// `earliestNeededOffset`: the record under way, or bytes it holds back) and lets go of
    /// the window's before it, so the window stays about a record long whatever comes
    /// before, between or after the records.
    mutating func doneReading(keepingFrom offset: Int) {
        defer { chunk = nil }
        let drop = min(offset - windowBase, window.count)
        if drop > 0 {
            window.removeFirst(drop)
            windowBase += drop
        }
        guard let chunk else { return }
        let from = min(max(0, offset - chunkBase), chunk.count)
        if window.isEmpty { windowBase = chunkBase + from }
        window.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[from...]))
    }

    /// The page's bytes `start..<end`: from the chunk being read, from the window, or (a
    /// record that began in an earlier chunk) from both; nil when they are not kept.
    private func bytes(_ start: Int, _ end: Int) -> [UInt8]? {
        if let chunk, start >= chunkBase {
            guard end - chunkBase <= chunk.count else { return nil }
            return Array(chunk[(start - chunkBase)..<(end - chunkBase)])
        }
        guard start >= windowBase else { return nil }
        if end <= windowBase + window.count { return Array(window[(start - windowBase)..<(end - windowBase)]) }
        guard let chunk, windowBase + window.count == chunkBase, end - chunkBase <= chunk.count else { return nil }
        return Array(window[(start - windowBase)...]) + chunk[..<(end - chunkBase)]
    }

    mutating func field(_ field: Int, value: JSONFieldValue) throws {
        guard !needsMapper else { return }
        switch value {
        case .missing, .null:
            if mapping.needsValue[field] { needsMapper = true } else { batch.append(.null, at: field) }
        case .integer(let int):
            batch.append(.integer(int), at: field)
        case .double(let double):
            if case .unixDate(let divisor) = mapping.conversions[field], divisor != 1 {
                batch.append(.double(double / divisor), at: field)
            } else {
                batch.append(.double(double), at: field)
            }
        case .bool(let flag):
            batch.append(.boolean(flag), at: field)
        case .string(let bytes):
            switch mapping.conversions[field] {
            case .isoDate:
                if let seconds = ISODate.seconds(fromUTF8: bytes.assumingMemoryBound(to: UInt8.self)) {
                    batch.append(.double(seconds), at: field)
                } else {
                    needsMapper = true
                }
            case .patternDate(let pattern):
                if let seconds = patterns.seconds(from: String(decoding: bytes, as: UTF8.self), pattern: pattern) {
                    batch.append(.double(seconds), at: field)
                } else {
                    needsMapper = true
                }
            default:
                batch.append(.text(bytes), at: field)
            }
        case .json(let bytes):
            batch.append(.text(bytes), at: field)
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
            batch.abandonRow()
            needsMapper = false
            try mapRecord(index: index, start: start.byteOffset, end: end)
        } else {
            let row = batch.count
            batch.endRow()
            if sweeper != nil { keys.append(mapper.keyIndices.map { batch.value(row: row, attribute: $0) }) }
            if let cursor { largest = IncrementalCursor.larger(largest, batch.value(row: row, attribute: cursor.attributeIndex)) }
        }
        if batch.count >= batchSize { handOff() }
    }

    /// Reads record `index` (the page's bytes `start..<end`) again from its text and maps it
    /// as `RecordMapper` does.
    private mutating func mapRecord(index: Int, start: Int, end: Int) throws {
        let record: JSONValue
        do {
            guard let text = bytes(start, end) else {
                throw PipelineError(.other, "the record's bytes \(start)..<\(end) are not kept (\(window.count) bytes from offset \(windowBase))")
            }
            record = try JSONValue.parse(text)
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
