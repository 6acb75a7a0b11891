import SwellCSV
import SwellCalendar
import SwellJSON

/// One record on its way from the fetch stage to an upsert worker, with its
/// key already converted (the worker converts only the other attributes).
struct IncomingRecord: Sendable {
    var page: String
    var index: Int
    var record: JSONValue
    var key: MappedKey
}

/// What an upsert worker takes from its queue: records, or word that a page is complete.
enum WorkerInput: Sendable {
    case records([IncomingRecord])
    /// Every record of page `number` (and of the pages before it) routed to this worker came
    /// before this (the source's position: `PositionBook`).
    case pageComplete(Int)

    /// The records, if these are records.
    var records: [IncomingRecord]? {
        if case .records(let records) = self { records } else { nil }
    }
}

/// Hands records from the fetch stage to the upsert workers in small chunks,
/// each record to the worker its key belongs to (so two records with one key
/// are upserted in the order they arrived: the later one wins). The key is
/// converted here, once, and travels with the record. When the source keeps positions, each
/// worker is told when a page is complete (`WorkerInput.pageComplete`). Used on the fetch
/// thread only (it owns that thread's date formatters).
struct RecordRouter {
    /// The most records a chunk holds (fewer when a batch is smaller).
    static let largestChunk = 500

    private let queues: [BatchQueue<WorkerInput>]
    private var pending: [[IncomingRecord]]
    private let chunk: Int
    private let mapper: RecordMapper
    private let patterns = DatePatterns()
    /// Tells the workers of complete pages.
    private let sendsPageMarks: Bool

    init(queues: [BatchQueue<WorkerInput>], chunk: Int, mapper: RecordMapper, sendsPageMarks: Bool = false) {
        self.queues = queues
        self.pending = Array(repeating: [], count: queues.count)
        self.chunk = max(1, chunk)
        self.mapper = mapper
        self.sendsPageMarks = sendsPageMarks
    }

    /// Sends record `index` of `page` towards its worker.
    mutating func add(page: String, index: Int, record: JSONValue) {
        let key = mapper.mapKey(record, using: patterns)
        let worker = key.worker(of: queues.count)
        pending[worker].append(IncomingRecord(page: page, index: index, record: record, key: key))
        if pending[worker].count >= chunk {
            queues[worker].put(.records(pending[worker]))
            pending[worker] = []
        }
    }

    /// Sends every partly filled chunk.
    mutating func flush() {
        for worker in pending.indices where !pending[worker].isEmpty {
            queues[worker].put(.records(pending[worker]))
            pending[worker] = []
        }
    }

    /// Page `number` is complete: every worker is told, after the page's records.
    mutating func pageCompleted(_ number: Int) {
        guard sendsPageMarks else { return }
        flush()
        for queue in queues { queue.put(.pageComplete(number)) }
    }

    func close() { queues.forEach { $0.close() } }
}
