import SwellCalendar
import SwellContexts

/// Builds a batch from a chunk of records for an upsert worker: maps each record (its key
/// came mapped from the router), sends bad ones to the rejects file or keeps the first as
/// the chunk's failure, drops what append mode refuses (keys stored already or seen
/// earlier in the run) and, for nested records, what names an unknown key — then counts
/// what it kept. The worker (`UpsertWorker`) writes and saves what it builds.
struct RecordBatchBuilder: Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let mapper: RecordMapper
    let state: SourceRunState
    let rejects: RejectsWriter
    /// Replace mode: where the keys seen go.
    let sweeper: ReplaceSweeper?
    /// Incremental sync: the cursor attribute whose largest value is kept.
    let cursor: IncrementalCursor?
    let redactor: Redactor
    let progress: SourceProgress
    /// `mode: append` keeping positions: where the keys of the records kept go (replace mode's go through the sweeper).
    var keyCollector: KeyChunkCollector? = nil
    /// `mode: append` resumed: the keys the run it resumes saved (`SavedKeys`).
    var savedKeys: SavedKeys? = nil

    /// A chunk of nested records, built: the records kept with their values, their trees in
    /// the same order, the records rejected, and the chunk's failure (`on_error: fail`).
    struct Nodes {
        var accepted: [(IncomingRecord, [StoreValue])]
        var nodes: [MappedNode]
        var rejected: Int
        var firstBad: PipelineError?
    }

    /// Maps a chunk of a flat source's records into `batch`; bad ones go to the rejects
    /// file, or the first is thrown after the valid ones are in the batch.
    /// `unwritten`: append mode's keys of the records in `batch` (not in the store yet).
    func map(_ chunk: [IncomingRecord], into batch: inout ColumnBatch, unwritten: inout Set<[StoreValue]>,
                     in context: ManagedObjectContext, patterns: DatePatterns) throws {
        var firstBad: PipelineError?
        var rejected = 0
        var accepted: [(IncomingRecord, [StoreValue])] = []
        accepted.reserveCapacity(chunk.count)
        for item in chunk {
            switch mapper.map(item.record, key: item.key, using: patterns) {
            case .success(let values): accepted.append((item, values))
            case .failure(let bad): try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
            }
        }
        if source.mode == .append {
            accepted = try dropExisting(accepted, in: context, seen: &unwritten, firstBad: &firstBad, rejected: &rejected)
        }
        for (_, values) in accepted { batch.append(values) }
        count(accepted, chunk: chunk, rejected: rejected)
        if let firstBad { throw firstBad }
    }

    /// Maps a chunk of records with nested objects into trees for `graph`: bad records and
    /// those that give a to-one by an unknown key are rejected before anything is written.
    func nodes(for chunk: [IncomingRecord], graph: inout NestedUpsert, in context: ManagedObjectContext,
               patterns: DatePatterns) throws -> Nodes {
        var firstBad: PipelineError?
        var rejected = 0
        var accepted: [(IncomingRecord, [StoreValue])] = []
        var trees: [String: MappedNode] = [:]
        for item in chunk {
            switch mapper.map(item.record, key: item.key, using: patterns) {
            case .success(let values):
                var padded = values
                padded += Array(repeating: .null, count: graph.root.attributes.count - values.count)
                switch NestedPlan.mapLinks(of: item.record, plans: graph.plans, place: "", patterns: patterns) {
                case .success(let links):
                    accepted.append((item, values))
                    trees["\(item.index)#\(item.page)"] = MappedNode(values: padded, key: mapper.keyIndices.map { values[$0] },
                                                                        mapped: Array(values.indices), links: links)
                case .failure(let bad):
                    try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
                }
            case .failure(let bad):
                try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
            }
        }
        if source.mode == .append {
            var seen = Set<[StoreValue]>()
            accepted = try dropExisting(accepted, in: context, seen: &seen, firstBad: &firstBad, rejected: &rejected)
        }
        var nodes = accepted.compactMap { trees["\($0.0.index)#\($0.0.page)"] }
        // A to-one given by an unknown key is a bad record (on_error applies), found before any write.
        let unknown = try graph.unknownKeyReferences(nodes, in: context)
        if !unknown.isEmpty {
            for (position, bad) in unknown.sorted(by: { $0.key < $1.key }) {
                try reject(accepted[position].0, message: bad.message, attribute: bad.path, firstBad: &firstBad, rejected: &rejected)
            }
            accepted = accepted.enumerated().filter { unknown[$0.offset] == nil }.map(\.element)
            nodes = nodes.enumerated().filter { unknown[$0.offset] == nil }.map(\.element)
        }
        return Nodes(accepted: accepted, nodes: nodes, rejected: rejected, firstBad: firstBad)
    }

    /// Counts a chunk's records, and notes their keys (replace) and cursor values.
    func count(_ accepted: [(IncomingRecord, [StoreValue])], chunk: [IncomingRecord], rejected: Int) {
        let keyIndices = mapper.keyIndices
        var keys: [[StoreValue]] = []
        var largest: StoreValue?
        for (_, values) in accepted {
            if sweeper != nil || keyCollector != nil { keys.append(keyIndices.map { values[$0] }) }
            if let cursor { largest = cursor.largest(largest, values) }
        }
        state.count(records: chunk.count, rejected: rejected, cursor: largest)
        sweeper?.saw(keys)
        keyCollector?.add(keys)
        progress.addRecords(chunk.count)
    }

    /// A bad record: into the rejects file (`on_error: skip`), or the chunk's failure (`fail`).
    private func reject(_ item: IncomingRecord, message: String, attribute: String?, firstBad: inout PipelineError?, rejected: inout Int) throws {
        let rejecter = RecordRejecter(source: source, rejects: rejects, redactor: redactor)
        if let failure = try rejecter.reject(page: item.page, index: item.index, record: item.record, message: message, attribute: attribute) {
            if firstBad == nil { firstBad = failure }
        } else {
            rejected += 1
        }
    }

    /// Append mode: a record whose key is stored already (or came earlier in the run) is a bad record.
    /// `seen`: the keys of records accepted earlier and not in the store yet.
    private func dropExisting(_ accepted: [(IncomingRecord, [StoreValue])], in context: ManagedObjectContext, seen: inout Set<[StoreValue]>,
                              firstBad: inout PipelineError?, rejected: inout Int) throws -> [(IncomingRecord, [StoreValue])] {
        let keyIndices = mapper.keyIndices
        let existing = try KeyLookup(entity: mapper.entity).existing(accepted.map { item in keyIndices.map { item.1[$0] } }, in: context)
        var kept: [(IncomingRecord, [StoreValue])] = []
        for (item, values) in accepted {
            let key = keyIndices.map { values[$0] }
            if existing.contains(key), let savedKeys, savedKeys.contains(key), seen.insert(key).inserted {
                // Saved by the run this one resumes, from a page fetched again: it stays as that run wrote it.
                continue
            }
            if existing.contains(key) || !seen.insert(key).inserted {
                let shown = zip(entity.key, key).map { "\($0)=\($1.messageText)" }.joined(separator: ", ")
                try reject(item, message: "\(entity.key.first ?? "key"): \(shown) exists already (mode: append)", attribute: entity.key.first,
                           firstBad: &firstBad, rejected: &rejected)
            } else {
                kept.append((item, values))
            }
        }
        return kept
    }
}
