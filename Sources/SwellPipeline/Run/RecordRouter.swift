import SwellCSV

/// Hands records from the fetch stage to the upsert workers in small chunks,
/// each record to the worker its key belongs to (so two records with one key
/// are upserted in the order they arrived: the later one wins). Used on the
/// fetch thread only (it owns that thread's date formatters).
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

    mutating func add(_ item: IncomingRecord) {
        let worker = mapper.worker(for: item.record, of: queues.count, using: patterns)
        pending[worker].append(item)
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
