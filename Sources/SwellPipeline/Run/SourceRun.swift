import Foundation
import Logging
import SwellCSV
import SwellHTTP
import SwellJSON
import SwellLocks
import SwellStore
import SwellCalendar

/// How a run's upsert stage is sized.
public struct RunOptions: Sendable {
    /// Upsert workers, each on its own private child context of the view context.
    public var workers: Int
    /// Records a worker context saves (and resets) at once.
    public var batchSize: Int

    public init(workers: Int = ProcessInfo.processInfo.activeProcessorCount, batchSize: Int = 5000) {
        self.workers = max(1, workers)
        self.batchSize = max(1, batchSize)
    }
}

/// One record on its way from the fetch stage to an upsert worker.
struct IncomingRecord: Sendable {
    var page: String
    var index: Int
    var record: JSONValue
}

/// Runs one source through the three-level stack: fetch pages (libcurl) and
/// parse them on this thread; upsert workers on private child contexts of the
/// view context save batches into it; the view context saves into the writer
/// and the writer to disk on their own queues, so the main queue never waits
/// for disk. Replace deletions, incremental state and HTTP validators go in
/// the last writer save.
///
/// `@unchecked Sendable`: the workers share `state` and `pendingValidators`, each a `LockedValue`.
final class SourceRun: @unchecked Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let mapper: RecordMapper
    let container: PersistentContainer
    let options: RunOptions
    let logger: Logger
    let redactor: Redactor
    let progress: ProgressCounter
    private let rejects: RejectsWriter

    private struct State {
        var report: RunReport.Source
        var failure: PipelineError?
        var seenKeys = Set<[StoreValue]>()
        var largestCursor: StoreValue?
        var saveScheduled = false
    }

    /// What one worker save did to the rows it moved: the report counts a
    /// batch once the writer has committed it, so it tells what is on disk.
    struct BatchCounts: Sendable {
        var inserted = 0
        var updated = 0
        var unchanged = 0
    }
    private let state: LockedValue<State>

    init(source: SourceSpec, entity: PipelineEntity, container: PersistentContainer, options: RunOptions,
         logger: Logger, redactor: Redactor, progress: ProgressCounter) {
        self.source = source
        self.entity = entity
        self.mapper = RecordMapper(source: source, entity: entity)
        self.container = container
        self.options = options
        self.logger = logger
        self.redactor = redactor
        self.progress = progress
        self.rejects = RejectsWriter(path: source.rejects, source: source.name, redactor: redactor)
        self.state = LockedValue(State(report: RunReport.Source(name: source.name, entity: source.entity)))
    }

    private func fail(_ error: PipelineError) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
        backlog.release()
    }

    private var failure: PipelineError? { state.withLock { $0.failure } }

    private var cursorKey: String { "incremental.\(source.name)" }
    private func validatorKey(_ url: String) -> String { "http.\(source.name).\(url)" }

    /// Runs the source; returns its report entry and the failure, if any.
    func run() -> (RunReport.Source, PipelineError?) {
        let started = Date()
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        let queues = (0..<options.workers).map { _ in BatchQueue<[IncomingRecord]>(capacity: 4) }
        let group = DispatchGroup()
        for number in 0..<options.workers {
            group.enter()
            let queue = queues[number]
            let thread = Thread { [self] in
                defer { group.leave() }
                work(queue: queue, number: number)
            }
            thread.name = "swell.upsert.\(source.name).\(number)"
            thread.start()
        }
        var complete = false
        var router = RecordRouter(queues: queues, chunk: min(options.batchSize, 500), mapper: mapper)
        do {
            complete = try fetchAll(into: &router)
        } catch let error as PipelineError {
            fail(error)
        } catch {
            fail(PipelineError(.other, redactor("source \(source.name): \(error)")))
        }
        // Also after a failure the workers drain what was fetched: earlier pages stay saved.
        router.flush()
        router.close()
        group.wait()
        rejects.close()
        finish(complete: complete && failure == nil)
        var report = state.withLock { $0.report }
        report.durationS = Self.rounded(Date().timeIntervalSince(started))
        return (report, failure)
    }

    static func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    // MARK: Fetching

    /// Fetches every page; returns true when the last page was reached.
    private func fetchAll(into router: inout RecordRouter) throws -> Bool {
        let client: HTTPClient
        do {
            client = try HTTPClient()
        } catch {
            throw PipelineError(.other, "cannot set up libcurl: \(error)")
        }
        var firstURL = source.url
        if let incremental = source.incremental, let cursor = try metadata(forKey: cursorKey) {
            firstURL = HTTPLinks.setting(query: incremental.parameter, to: cursor, in: firstURL)
        }
        var url: String? = firstURL
        var pageNumber: Int = {
            if case .page(_, let start)? = source.pagination { return start }
            return 1
        }()
        if case .page(let parameter, _)? = source.pagination {
            url = HTTPLinks.setting(query: parameter, to: String(pageNumber), in: firstURL)
        }
        var visited = Set<String>()
        let isFile = !(source.url.hasPrefix("http://") || source.url.hasPrefix("https://"))
        while let current = url {
            guard failure == nil else { return false }
            guard visited.insert(current).inserted else {
                throw PipelineError(.data, redactor("source \(source.name): pagination returned to \(current), a page already fetched"))
            }
            let page = try fetchPage(current, client: client, router: &router, streaming: isFile)
            guard failure == nil else { return false }
            switch source.pagination {
            case nil:
                url = nil
            case .next(let path)?:
                url = Self.text(page.captured[path]).flatMap { HTTPLinks.resolve($0, against: current) }
            case .linkHeader?:
                url = page.linkHeader.flatMap { HTTPLinks.nextLink(in: $0, base: current) }
            case .page(let parameter, _)?:
                pageNumber += 1
                url = page.records > 0 ? HTTPLinks.setting(query: parameter, to: String(pageNumber), in: firstURL) : nil
            case .cursor(let path, let parameter)?:
                url = Self.text(page.captured[path]).map { HTTPLinks.setting(query: parameter, to: $0, in: firstURL) }
            }
        }
        return true
    }

    /// Reads the source's state (incremental cursor, HTTP validators) on a
    /// private child of the view context: it sees what the view context holds,
    /// and the store read stays off the main queue. Used by the fetch stage only.
    private lazy var stateReader: ManagedObjectContext = {
        let context = container.newBackgroundContext()
        context.name = "\(source.name).state"
        return context
    }()

    private func metadata(forKey key: String) throws -> String? {
        let reader = stateReader
        do {
            return try reader.performAndWait { try reader.storeMetadata(forKey: key) }
        } catch {
            throw PipelineError(.io, "cannot read the store: \(error)")
        }
    }

    /// A pagination value as text: a non-empty string or a number; nil ends.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text.isEmpty ? nil : text
        case .number(let number)?: number.text
        default: nil
        }
    }

    private struct PageResult {
        var records = 0
        var captured: [[String]: JSONValue] = [:]
        var linkHeader: String?
    }

    /// Fetches one page. File pages stream records to the workers as they parse;
    /// an HTTP page's bytes are kept until it arrived whole (so a retried attempt
    /// never sends a record twice), then parsed and sent on the same way.
    private func fetchPage(_ url: String, client: HTTPClient, router: inout RecordRouter, streaming: Bool) throws -> PageResult {
        var request = HTTPRequest(url: url)
        request.headers = source.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        request.timeout = source.timeout
        request.maxBytes = source.maxBytes
        request.rejectsHTML = true
        let conditional = !streaming && source.mode != .replace
        if conditional, let validators = try metadata(forKey: validatorKey(url)) {
            let parts = validators.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 {
                request.ifNoneMatch = parts[0].isEmpty ? nil : parts[0]
                request.ifModifiedSince = parts[1].isEmpty ? nil : parts[1]
            }
        }
        let capturePaths: [[String]] = {
            switch source.pagination {
            case .next(let path)?: [path]
            case .cursor(let path, _)?: [path]
            default: []
            }
        }()
        var reader = JSONPageReader(format: source.isNDJSON ? .ndjson : .json, recordsPath: source.records, capturePaths: capturePaths)
        var parsed: [IncomingRecord] = []
        let emit: (Int, JSONValue) throws -> Void = { index, record in
            parsed.append(IncomingRecord(page: url, index: index, record: record))
        }
        /// Parses bytes and sends their records on, a chunk of records at a time.
        func parse(_ bytes: UnsafeRawBufferPointer) throws {
            try reader.feed(bytes, onRecord: emit)
            for item in parsed { router.add(item) }
            parsed.removeAll(keepingCapacity: true)
        }
        // An HTTP page's body, kept until the attempt completes (bytes are about
        // a third of the memory its parsed records would take).
        var body: [UInt8] = []
        var captured: [[String]: JSONValue] = [:]
        let response: HTTPResponse
        let retries: Int
        do {
            (response, retries) = try client.fetch(
                request, policy: RetryPolicy(retries: source.retries),
                onAttempt: { attempt in
                    if attempt > 1 { self.logger.info("retrying", metadata: ["source": "\(self.source.name)", "url": "\(self.redactor(url))", "attempt": "\(attempt)"]) }
                    body.removeAll(keepingCapacity: true)
                    reader = JSONPageReader(format: self.source.isNDJSON ? .ndjson : .json, recordsPath: self.source.records, capturePaths: capturePaths)
                    parsed.removeAll()
                },
                onBody: { bytes in
                    // A failed run stops reading (a big file need not be read to its end).
                    if let failure = self.failure { throw failure }
                    if streaming { try parse(bytes) } else { body.append(contentsOf: bytes) }
                    self.progress.addBytes(bytes.count)
                })
            if response.isNotModified {
                state.withLock { $0.report.notModified += 1; $0.report.pages += 1; $0.report.retries += retries }
                return PageResult(records: 0, captured: [:], linkHeader: response.header("link"))
            }
            if !streaming {
                let slice = 1 << 16
                var offset = 0
                try body.withUnsafeBytes { all in
                    while offset < all.count {
                        try parse(UnsafeRawBufferPointer(rebasing: all[offset..<min(offset + slice, all.count)]))
                        offset += slice
                    }
                }
                body = []
            }
            captured = try reader.finish(onRecord: emit)
        } catch let error as JSONError {
            router.flush()
            throw PipelineError(.data, redactor("source \(source.name): page \(url) is not valid \(source.isNDJSON ? "NDJSON" : "JSON"): \(error)"))
        } catch let error as HTTPError {
            throw PipelineError(.unavailable, redactor("source \(source.name): \(error)"))
        }
        for item in parsed { router.add(item) }
        parsed.removeAll()
        router.flush()
        let records = reader.recordCount
        state.withLock { state in
            state.report.pages += 1
            state.report.bytes += response.bodyBytes
            state.report.retries += retries
        }
        progress.addPage()
        if conditional, response.header("etag") != nil || response.header("last-modified") != nil {
            let validators = (response.header("etag") ?? "") + "\n" + (response.header("last-modified") ?? "")
            pendingValidators.withLock { $0[validatorKey(url)] = validators }
        }
        logger.debug("page fetched", metadata: ["source": "\(source.name)", "url": "\(redactor(url))", "records": "\(records)"])
        return PageResult(records: records, captured: captured, linkHeader: response.header("link"))
    }

    /// HTTP validators to keep, written with the last save.
    private let pendingValidators = LockedValue<[String: String]>([:])

    // MARK: Upserting

    /// An upsert worker: takes chunks of records from the fetch stage, inserts
    /// them into its private child context, and saves (then resets) every
    /// `batchSize` records — so records wait in small chunks, not whole batches.
    private func work(queue: BatchQueue<[IncomingRecord]>, number: Int) {
        let context = container.newBackgroundContext()
        context.name = "\(source.name).upsert.\(number)"
        var unsaved = 0
        while let chunk = queue.take() {
            let (saved, outcome) = context.performAndWait { () -> (BatchCounts?, PipelineError?) in
                do {
                    try insert(chunk, in: context)
                    unsaved += chunk.count
                    guard unsaved >= options.batchSize else { return (nil, nil) }
                    let counts = try saveBatch(in: context)
                    unsaved = 0
                    return (counts, nil)
                } catch {
                    // Valid records of this chunk (and earlier ones) are kept: save them, then stop.
                    let counts = try? saveBatch(in: context)
                    unsaved = 0
                    return (counts, error as? PipelineError ?? PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)")))
                }
            }
            if let saved { batchSaved(saved) }
            if let outcome {
                // The run fails, but this worker keeps saving the valid records already fetched.
                fail(outcome)
            }
            // Backpressure up the stack: wait until every saved batch is on disk before
            // taking more (the other worker goes on meanwhile). Measured: as fast as
            // letting batches queue up for the writer, with less memory (BENCHMARKS.md).
            if saved != nil { backlog.waitForRoom(limit: 0) { self.failure != nil } }
        }
        if unsaved > 0 {
            let (saved, outcome) = context.performAndWait { () -> (BatchCounts?, PipelineError?) in
                do {
                    return (try saveBatch(in: context), nil)
                } catch {
                    return (nil, error as? PipelineError ?? PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)")))
                }
            }
            if let outcome { fail(outcome) }
            if let saved { batchSaved(saved) }
        }
    }

    /// A worker's batch is in the view context: number it, keep its counts until
    /// the writer commits it, and ask for it to be written.
    private func batchSaved(_ counts: BatchCounts) {
        backlog.batchSaved(counts)
        requestSave()
    }

    /// Batches the writer committed: they count in the report now.
    private func count(_ committed: [BatchCounts]) {
        state.withLock { state in
            for counts in committed {
                state.report.inserted += counts.inserted
                state.report.updated += counts.updated
                state.report.unchanged += counts.unchanged
            }
        }
    }

    /// Batches saved into the view context and not yet committed by the writer.
    private let backlog = SaveBacklog<BatchCounts>()

    /// Maps and inserts a chunk of records into the worker's context (not saved yet).
    private func insert(_ chunk: [IncomingRecord], in context: ManagedObjectContext) throws {
        let description = entity.description
        var firstBad: PipelineError?
        var rejected = 0
        var keys: [[StoreValue]] = []
        var largest: StoreValue?
        let cursorIndex = source.incremental.flatMap { spec in entity.attributes.firstIndex { $0.name == spec.cursor } }
        var accepted: [(IncomingRecord, [StoreValue])] = []
        for item in chunk {
            switch mapper.map(item.record) {
            case .success(let values):
                accepted.append((item, values))
            case .failure(let bad):
                try reject(item, message: bad.message, attribute: bad.attribute, firstBad: &firstBad, rejected: &rejected)
            }
        }
        if source.mode == .append {
            accepted = try dropExisting(accepted, in: context, firstBad: &firstBad, rejected: &rejected)
        }
        let keyIndices = description.keyIndices
        for (_, values) in accepted {
            context.insertRow(entity: description, keyIndices: keyIndices, values: values)
            if source.mode == .replace { keys.append(mapper.keyIndices.map { values[$0] }) }
            if let cursorIndex, !values[cursorIndex].isNull,
               largest.map({ StoreValue.compare(values[cursorIndex], $0) > 0 }) ?? true {
                largest = values[cursorIndex]
            }
        }
        state.withLock { state in
            state.report.records += chunk.count
            state.report.rejected += rejected
            state.seenKeys.formUnion(keys)
            if let largest, state.largestCursor.map({ StoreValue.compare(largest, $0) > 0 }) ?? true {
                state.largestCursor = largest
            }
        }
        progress.addRecords(chunk.count)
        if let firstBad { throw firstBad }
    }

    /// Saves the worker's context into the view context and lets its rows go.
    private func saveBatch(in context: ManagedObjectContext) throws -> BatchCounts {
        let changes: ContextDidSaveChanges
        do {
            changes = try context.saveReturningChanges()
        } catch let error as StoreError {
            throw PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"))
        }
        context.reset()
        return BatchCounts(inserted: changes.inserted.count, updated: changes.updated.count, unchanged: changes.unchanged.count)
    }

    private func reject(_ item: IncomingRecord, message: String, attribute: String?, firstBad: inout PipelineError?, rejected: inout Int) throws {
        switch source.onError {
        case .skip:
            try rejects.write(page: item.page, index: item.index, error: message, record: item.record)
            rejected += 1
        case .fail:
            if firstBad == nil {
                firstBad = PipelineError(.data, redactor("source \(source.name): bad record at page \(item.page), index \(item.index), attribute \(attribute ?? "-"): \(message)"))
            }
        }
    }

    /// Append mode: a record whose key is stored already (or came earlier in the run) is a bad record.
    private func dropExisting(_ accepted: [(IncomingRecord, [StoreValue])], in context: ManagedObjectContext,
                              firstBad: inout PipelineError?, rejected: inout Int) throws -> [(IncomingRecord, [StoreValue])] {
        var seen = Set<[StoreValue]>()
        var kept: [(IncomingRecord, [StoreValue])] = []
        let existing = try existingKeys(accepted.map { values in mapper.keyIndices.map { values.1[$0] } }, in: context)
        for (item, values) in accepted {
            let key = mapper.keyIndices.map { values[$0] }
            if existing.contains(key) || !seen.insert(key).inserted {
                let shown = zip(entity.key, key).map { "\($0)=\(describe($1))" }.joined(separator: ", ")
                try reject(item, message: "\(entity.key.first ?? "key"): \(shown) exists already (mode: append)", attribute: entity.key.first,
                           firstBad: &firstBad, rejected: &rejected)
            } else {
                kept.append((item, values))
            }
        }
        return kept
    }

    private func existingKeys(_ keys: [[StoreValue]], in context: ManagedObjectContext) throws -> Set<[StoreValue]> {
        var found = Set<[StoreValue]>()
        let wanted = Set(keys)
        var request = FetchRequest(entityName: entity.name)
        if entity.key.count == 1, let attribute = entity.attributes.first(where: { $0.name == entity.key[0] }) {
            request.predicate = FetchPredicate(format: "%K IN %@", entity.key[0], keys.compactMap { $0.first?.swiftValue(for: attribute.type) })
        }
        try context.enumerateRows(request) { _, values in
            let key = mapper.keyIndices.map { values[$0] }
            if wanted.contains(key) { found.insert(key) }
        }
        return found
    }

    private func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let int): String(int)
        case .real(let double): String(double)
        case .text(let text): "\"\(text)\""
        }
    }

    // MARK: Saving up the stack

    /// Serialises the view → writer moves, off the main queue.
    private let saver = DispatchQueue(label: "swell.saver")

    /// Schedules a view → writer move and a writer save, at most one waiting at a time.
    /// The move runs on the saver's queue (the view context's changes all came
    /// from workers, so the main queue does no per-row work); the disk write runs
    /// on the writer's queue.
    private func requestSave() {
        let schedule = state.withLock { state -> Bool in
            if state.saveScheduled { return false }
            state.saveScheduled = true
            return true
        }
        guard schedule else { return }
        saver.async { [self] in
            state.withLock { $0.saveScheduled = false }
            let moved = backlog.savedCount
            do {
                try moveViewChangesToWriter()
            } catch {
                fail(PipelineError(.io, redactor("source \(source.name): saving into the writer failed: \(error)")))
                return
            }
            let writer = container.writerContext
            writer.perform { [self] in
                logger.debug("writer saving", metadata: ["source": "\(source.name)", "batches": "\(moved)"])
                do {
                    try writer.save()
                    count(backlog.committed(upTo: moved))
                } catch {
                    fail(PipelineError(.io, redactor("source \(source.name): writing the store failed: \(error)")))
                    backlog.committed(upTo: moved, written: false)
                }
            }
        }
    }

    /// Saves the view context into the writer: off the main queue when only
    /// workers' changes are there, else (something edited its objects) on it.
    private func moveViewChangesToWriter() throws {
        let view = container.viewContext
        if try view.saveIntoParentOffQueue() == nil {
            try view.performAndWait { try view.save() }
        }
    }

    /// The last saves: what the workers saved, then (only for a complete run)
    /// replace deletions, the incremental cursor and HTTP validators, in the writer's last transaction.
    private func finish(complete: Bool) {
        let view = container.viewContext
        let writer = container.writerContext
        var deleted = 0
        do {
            if complete {
                if source.mode == .replace { deleted = try deleteUnseen() }
                let cursor = state.withLock { $0.largestCursor }
                let validators = pendingValidators.withLock { $0 }
                view.performAndWait {
                    if let cursor, let incremental = source.incremental, let attribute = entity.attributes.first(where: { $0.name == incremental.cursor }) {
                        view.setStoreMetadata(Self.cursorText(cursor, type: attribute.type), forKey: cursorKey)
                    }
                    for (key, value) in validators { view.setStoreMetadata(value, forKey: key) }
                }
            }
            try saver.sync { try moveViewChangesToWriter() }
            try writer.performAndWait { try writer.save() }
            // Everything saved so far is on disk now.
            count(backlog.committed(upTo: .max))
            state.withLock { $0.report.deleted = deleted }
        } catch let error as PipelineError {
            fail(error)
        } catch {
            fail(PipelineError(.io, redactor("source \(source.name): writing the store failed: \(error)")))
        }
    }

    /// The text sent in the incremental parameter: ISO-8601 UTC for dates.
    static func cursorText(_ value: StoreValue, type: AttributeType) -> String {
        switch (value, type) {
        case (.real(let seconds), .date): ISODate.string(fromSeconds: seconds)
        case (.integer(let int), .date): ISODate.string(fromSeconds: Double(int))
        case (.integer(let int), .boolean): int != 0 ? "true" : "false"
        case (.integer(let int), _): String(int)
        case (.real(let double), _): CSVFormat.double(double)
        case (.text(let text), _): text
        case (.null, _): ""
        }
    }

    /// Replace: deletes the rows whose key no page brought, after every page
    /// arrived (saved into the view context; the writer's last save writes it).
    private func deleteUnseen() throws -> Int {
        let seen = state.withLock { $0.seenKeys }
        let context = container.newBackgroundContext()
        let deleted = try context.performAndWait { () throws -> Int in
            var doomed: [ObjectID] = []
            try context.enumerateRows(FetchRequest(entityName: entity.name)) { primaryKey, values in
                let key = mapper.keyIndices.map { values[$0] }
                if !seen.contains(key) { doomed.append(context.objectIDForRow(entity: entity.name, primaryKey: primaryKey)) }
            }
            context.deleteObjects(with: doomed)
            try context.save()
            return doomed.count
        }
        return deleted
    }
}
