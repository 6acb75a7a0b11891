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

/// Hands records from the fetch stage to the upsert workers in small chunks,
/// each record to the worker its key belongs to (so two records with one key
/// are upserted in the order they arrived: the later one wins). The key is
/// converted here, once, and travels with the record. Used on the fetch thread
/// only (it owns that thread's date formatters).
struct RecordRouter {
    private let queues: [BatchQueue<[IncomingRecord]>]
    private var pending: [[IncomingRecord]]
    private let chunk: Int
    private let mapper: RecordMapper
    private let patterns = DatePatterns()

    init(queues: [BatchQueue<[IncomingRecord]>], chunk: Int, mapper: RecordMapper) {
        self.queues = queues
        self.pending = Array(repeating: [], count: queues.count)
        self.chunk = max(1, chunk)
        self.mapper = mapper
    }

    /// Sends record `index` of `page` towards its worker.
    mutating func add(page: String, index: Int, record: JSONValue) {
        let key = mapper.mapKey(record, using: patterns)
        let worker = key.worker(of: queues.count)
        pending[worker].append(IncomingRecord(page: page, index: index, record: record, key: key))
        if pending[worker].count >= chunk {
            queues[worker].put(pending[worker])
            pending[worker] = []
        }
    }

    /// Sends every partly filled chunk.
    mutating func flush() {
        for worker in pending.indices where !pending[worker].isEmpty {
            queues[worker].put(pending[worker])
            pending[worker] = []
        }
    }

    func close() { queues.forEach { $0.close() } }
}
