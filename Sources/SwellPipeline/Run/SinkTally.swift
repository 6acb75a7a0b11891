import SwellJSON
import SwellContexts

/// What a projection sink (`ColumnRecordSink`, `GraphRecordSink`) notes between hand-offs
/// of its batch: records read and rejected, the largest cursor value and the keys seen
/// (replace mode); `handOff` reports them to the run. One place for both sinks.
struct SinkTally {
    let state: SourceRunState
    let progress: SourceProgress
    let sweeper: ReplaceSweeper?
    let cursor: IncrementalCursor?
    let keyIndices: [Int]

    private var records = 0
    private var rejected = 0
    private var largest: StoreValue?
    private var keys: [[StoreValue]] = []
    /// Keys that are one integer attribute (`ReplaceSweeper.integerKey`): no array a record.
    private var integerKeys: [Int64] = []

    init(state: SourceRunState, progress: SourceProgress, sweeper: ReplaceSweeper?, cursor: IncrementalCursor?, keyIndices: [Int]) {
        self.state = state
        self.progress = progress
        self.sweeper = sweeper
        self.cursor = cursor
        self.keyIndices = keyIndices
    }

    /// A record was read.
    mutating func read() { records += 1 }

    /// A record went to the rejects file.
    mutating func rejectedOne() { rejected += 1 }

    /// A record was taken; `value(i)` is its attribute `i` as the store keeps it.
    mutating func took(_ value: (Int) -> StoreValue) {
        if let sweeper {
            if let index = sweeper.integerKey, case .integer(let key) = value(index) {
                integerKeys.append(key)
            } else {
                keys.append(keyIndices.map(value))
            }
        }
        if let cursor { largest = IncrementalCursor.larger(largest, value(cursor.attributeIndex)) }
    }

    /// Reports what was noted since the last hand-off to the run, and starts over.
    mutating func handOff() {
        guard records > 0 else { return }
        state.count(records: records, rejected: rejected, cursor: largest)
        sweeper?.saw(keys)
        sweeper?.saw(integers: integerKeys)
        progress.addRecords(records)
        records = 0
        rejected = 0
        largest = nil
        keys.removeAll(keepingCapacity: true)
        integerKeys.removeAll(keepingCapacity: true)
    }
}

extension RecordWindow {
    /// Record `index` of `page` (the page's bytes `start..<end`) read again from its text, for
    /// a mapper; an error names the source, the page and the record.
    /// `parser`: the sink's own, whose stacks every record reuses.
    func record(index: Int, start: Int, end: Int, page: String, source: String, parser: inout JSONValue.Parser) throws -> JSONValue {
        do {
            guard let parsed = try withBytes(start, end, { bytes throws(JSONError) in try parser.parse(bytes) }) else {
                throw PipelineError(.other, "the record's bytes \(start)..<\(end) are not kept (\(description))")
            }
            return parsed
        } catch {
            throw PipelineError(.other, "source \(source): record \(index) of page \(page) could not be read again: \(error)",
                                underlying: error)
        }
    }
}
