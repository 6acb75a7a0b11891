import Foundation
import SwellLocks
import SwellStoreCore

/// A store that keeps everything in memory (Core Data's in-memory store type):
/// `addPersistentStore(at: URL(string: "memory://name")!)`. Coordinators that add
/// the same URL share one store while any of them holds it; it is gone with the last.
///
/// It is the second conformer of `PersistentStore`, so the seam is proven by
/// a store that shares no code with SQLite: a commit applies the merge
/// policy's decisions (`MergePolicy`) to plain dictionaries, and a fetch
/// evaluates predicates in memory (`BoundPredicate.evaluate`, the same
/// implementation contexts use for unsaved objects). A read takes the state
/// as one value (copy on write): a snapshot that a commit in progress never
/// changes. Sorts by to-one key paths (`spot.name`) follow the stored links.
/// Not supported: export key-path columns (SQL expressions in `StoreQuery`),
/// which throw `StoreError.unsupported`.
///
/// `@unchecked Sendable`: `state`, `model` and `recorded` are only touched under `lock`.
package final class InMemoryStore: PersistentStore, @unchecked Sendable {
    package let url: URL
    package let identifier = UUID().uuidString
    private let lock = NSLock()
    private var model = ManagedObjectModel(entities: [])
    /// The model the store was last loaded with, with the entities later models removed (whose
    /// rows stay): what the next load migrates from.
    private var recorded = ManagedObjectModel(entities: [])
    private var state = InMemoryState()

    package init(url: URL) {
        self.url = url
    }

    /// The store a live coordinator holds for `url`, or a new one.
    package static func named(by url: URL) -> InMemoryStore {
        live.withLock { stores in
            stores = stores.filter { $0.value.store != nil }
            if let store = stores[url.absoluteString]?.store { return store }
            let store = InMemoryStore(url: url)
            stores[url.absoluteString] = WeakStore(store: store)
            return store
        }
    }

    private struct WeakStore: Sendable {
        weak var store: InMemoryStore?
    }

    private static let live = LockedValue<[String: WeakStore]>([:])

    /// Hands out object IDs above every one held when a coordinator added the store; shared
    /// by every coordinator of the store (they share this instance).
    private let ids = ObjectIDAllocator()
    /// The entities whose key is their table's rowid (`ObjectIDSpace`), set by `load`.
    private let rowidKeyed = LockedValue<Set<String>>([])

    /// Nothing to release: the data lives while a coordinator holds the store.
    package func close() throws(StoreError) {}

    package func allocateIDs(for entity: String, count: Int64) -> Range<Int64> {
        ids.allocate(for: entity, count: count)
    }

    package func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool {
        ObjectIDSpace.mayUseKeyAsID(key, rowidKeyed: rowidKeyed.withLock { $0.contains(entity) })
    }

    /// Loads `model`: a store a coordinator with another model added first migrates its rows
    /// (`ModelMigration`, Store guarantees 57; a stage's transforms and metadata with them, 58),
    /// all or nothing.
    package func load(model: ManagedObjectModel, stage: MigrationStageWork) throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        var tables = state.tables
        guard try stage.isDue(recorded: recorded.entities.isEmpty ? nil : recorded) else { return }
        if !recorded.entities.isEmpty {
            let plan = try ModelMigration(from: recorded, to: model)
            let flipped = Self.flippedLinks(plan, recorded: recorded, tables: tables)
            var moved: [String: InMemoryTable] = [:]
            for step in plan.entities {
                guard let previous = step.previous else { continue }
                moved[step.entity.name] = try Self.migrate(tables.removeValue(forKey: previous.name) ?? InMemoryTable(), step,
                                                           flipped: flipped[step.entity.name] ?? [:],
                                                           transform: stage.transforms[step.entity.name])
            }
            tables.merge(moved) { _, new in new }
            recorded = ManagedObjectModel(entities: model.entities + plan.removedEntities, versionIdentifier: model.versionIdentifier)
        } else {
            recorded = model
        }
        self.model = model
        var firstFree: [String: Int64] = [:]
        for entity in model.entities {
            let table = tables[entity.name] ?? InMemoryTable()
            tables[entity.name] = table
            // For an entity whose key is the rowid, IDs below the base are keys, not allocated ones.
            let rowidKeyed = entity.rowidKeyIndex != nil
            let allocated = table.rows.keys.filter { !rowidKeyed || $0 >= ObjectIDSpace.rowidKeyedBase }
            firstFree[entity.name] = ObjectIDSpace.firstFree(largestAllocated: allocated.max(), rowidKeyed: rowidKeyed)
        }
        state.tables = tables
        for (key, value) in stage.metadata { state.metadata[key] = value }
        ids.start(firstFree: firstFree)
        rowidKeyed.withLock { $0 = Set(model.entities.filter { $0.rowidKeyIndex != nil }.map(\.name)) }
    }

    /// The model the store was last loaded with (nil: none yet).
    package func recordedModel() throws(StoreError) -> ManagedObjectModel? {
        lock.withLock { recorded.entities.isEmpty ? nil : recorded }
    }

    package func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        let snapshot = lock.withLock { (state, model) }
        return try body(InMemoryStoreReader(state: snapshot.0, model: snapshot.1))
    }

    /// The state as one value, kept (copy on write): commits after it copy the tables they
    /// change, and the snapshot keeps the versions it saw alive until it is closed.
    package func openPinnedReader() -> any PinnedStoreReader {
        InMemoryPinnedReader(reader: lock.withLock { InMemoryStoreReader(state: state, model: model) })
    }

    package func commit(_ changes: StoreChangeSet) throws(StoreError) -> StoreCommitResult {
        lock.lock()
        defer { lock.unlock() }
        // All or nothing: the changes go to a copy, which replaces the state only at the end.
        var transaction = InMemoryCommitTransaction(
            committer: InMemoryCommitter(state: state, model: model, storeIdentifier: identifier, policy: changes.mergePolicy))
        do {
            let result = try CommitDriver.commit(changes, through: &transaction)
            if let committed = transaction.committed { state = committed }
            return result
        } catch {
            throw error as? StoreError ?? .underlying(error)
        }
    }
}

extension InMemoryStore {
    package func startHistory() throws(StoreError) {
        lock.lock()
        if state.history == nil { state.history = [] }
        lock.unlock()
    }

    package func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction] {
        lock.lock()
        let history = state.history ?? []
        let model = self.model
        lock.unlock()
        let after = token?.value ?? 0
        var transactions: [HistoryTransaction] = []
        for (number, record) in history where number > after {
            var changes: [HistoryChange] = []
            for group in record.groups {
                // The stores' one reading of a group (`HistoryText`), from its stored forms.
                changes += HistoryText.changes(entity: group.entity, type: group.type.rawValue, updated: HistoryText.updated(group),
                                               keys: HistoryText.keys(group), deletedKeys: HistoryText.deletedKeys(group),
                                               model: model, storeIdentifier: identifier)
            }
            transactions.append(HistoryTransaction(token: HistoryToken(value: number), timestamp: record.timestamp, author: record.author,
                                                   contextName: record.contextName, changes: changes))
        }
        return transactions
    }

    package func deleteHistory(before token: HistoryToken) throws(StoreError) {
        lock.lock()
        if state.history != nil {
            state.history?.removeAll { $0.token < token.value }
            // How far it was ever purged, never moved back (ManagedObjectContext.historyPurgedBefore).
            let key = PersistentHistoryKeys.purgedBefore
            state.metadata[key] = String(max(token.value, state.metadata[key].flatMap(Int64.init) ?? 0))
        }
        lock.unlock()
    }
}

/// A pinned snapshot of an in-memory store (Store guarantees 56): an immutable value, so its
/// reads need no lock; `close` lets the tables it holds go.
///
/// `@unchecked Sendable`: `reader` is only touched under `lock`, held just to take or drop it.
final class InMemoryPinnedReader: PinnedStoreReader, @unchecked Sendable {
    private let lock = NSLock()
    private var reader: InMemoryStoreReader?

    init(reader: InMemoryStoreReader) {
        self.reader = reader
    }

    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T {
        guard let reader = lock.withLock({ reader }) else { throw StoreError.noPersistentStore }
        return try body(reader)
    }

    func close() {
        lock.withLock { reader = nil }
    }
}

/// One entity's rows by object ID, and its uniqueness-constraint index.
package struct InMemoryTable: Sendable {
    package var rows: [Int64: [StoreValue]] = [:]
    package var keys: [[StoreValue]: Int64] = [:]
}

/// Everything an in-memory store holds: a value, so a read keeps a snapshot for free.
package struct InMemoryState: Sendable {
    package var tables: [String: InMemoryTable] = [:]
    package var metadata: [String: String] = [:]
    /// The history's transactions by token, oldest first (nil: history is off).
    package var history: [(token: Int64, record: HistoryRecord)]?
    package var lastHistoryToken: Int64 = 0
}

extension EntityDescription {
    /// The row's uniqueness-constraint values, or nil when it has no key or a key value is nil
    /// (as in SQL, nil keys never conflict).
    package func key(of values: [StoreValue]) -> [StoreValue]? {
        guard !uniquenessConstraint.isEmpty else { return nil }
        let key = keyIndices.map { values[$0] }
        return key.contains(where: \.isNull) ? nil : key
    }
}

/// Reads from one snapshot of an in-memory store.
package struct InMemoryStoreReader: StoreReader, PredicateResolver {
    package let state: InMemoryState
    package let model: ManagedObjectModel

    private func table(_ entity: EntityDescription) -> InMemoryTable {
        state.tables[entity.name] ?? InMemoryTable()
    }

    /// The rows matching the query's predicate, in its order, offset and limit applied.
    private func matching(_ query: StoreQuery) throws -> [StoreRow] {
        guard query.extraColumns.isEmpty else {
            throw StoreError.unsupported(store: "in-memory", what: "key-path columns (SQL expressions)")
        }
        let entity = query.entity
        let entities = query.sortKeyPaths.isEmpty ? [:] : model.entitiesByName
        var rows = table(entity).rows.compactMap { primaryKey, values -> StoreRow? in
            if let predicate = query.predicate, !predicate.evaluate(values, primaryKey: primaryKey, resolver: self) { return nil }
            // To-one key-path sort values go after the attributes, where the sort's indices point.
            let sortValues = query.sortKeyPaths.map { toOneValue($0, from: values, entity: entity, entities: entities) }
            return StoreRow(primaryKey: primaryKey, values: sortValues.isEmpty ? values : values + sortValues)
        }
        let tieKey = entity.rowidKeyIndex
        rows.sort { a, b in
            for (attribute, ascending) in query.sort {
                let order = StoreValue.compare(a.values[attribute], b.values[attribute])
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            if let tieKey { return StoreValue.compare(a.values[tieKey], b.values[tieKey]) < 0 }
            return a.primaryKey < b.primaryKey
        }
        let start = min(query.offset, rows.count)
        let end = query.limit.map { min(start + $0, rows.count) } ?? rows.count
        guard !query.sortKeyPaths.isEmpty else { return Array(rows[start..<end]) }
        let count = entity.attributes.count
        return rows[start..<end].map { StoreRow(primaryKey: $0.primaryKey, values: Array($0.values.prefix(count))) }
    }

    /// The value a to-one key path (`spot.name`) leads to from a stored row; null where a link is empty.
    private func toOneValue(_ path: [String], from row: [StoreValue], entity: EntityDescription,
                            entities: [String: EntityDescription]) -> StoreValue {
        var values = row
        var current = entity
        for name in path.dropLast() {
            guard let index = current.attributes.firstIndex(where: { $0.name == name }),
                  let destination = current.attributes[index].destination.flatMap({ entities[$0] }),
                  case .integer(let key) = values[index], let next = self.row(destination, key) else { return .null }
            values = next
            current = destination
        }
        guard let last = path.last, let index = current.attributes.firstIndex(where: { $0.name == last }) else { return .null }
        return values[index]
    }

    package func rows(_ query: StoreQuery) throws -> [StoreRow] {
        try matching(query)
    }

    package func forEachRow(_ query: StoreQuery, _ body: (StoreRow) throws -> Void) throws {
        for row in try matching(query) { try body(row) }
    }

    package func forEachRowCursor(_ query: StoreQuery, _ body: (StoreRowCursor) throws -> Void) throws {
        for row in try matching(query) { try body(StoreRowCursor(primaryKey: row.primaryKey, values: row.values)) }
    }

    package func metadata(forKey key: String) throws -> String? {
        state.metadata[key]
    }

    package func count(_ query: StoreQuery) throws -> Int {
        var all = query
        all.limit = nil
        all.offset = 0
        all.sort = []
        return try matching(all).count
    }

    package func rows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        let rows = table(entity).rows
        var result: [Int64: [StoreValue]] = [:]
        for key in primaryKeys { if let values = rows[key] { result[key] = values } }
        return result
    }

    package func countMatching(primaryKeys: [Int64], query: StoreQuery) throws -> Int {
        let rows = table(query.entity).rows
        return Set(primaryKeys).reduce(0) { count, key in
            guard let values = rows[key] else { return count }
            if let predicate = query.predicate, !predicate.evaluate(values, primaryKey: key, resolver: self) { return count }
            return count + 1
        }
    }

    package func rows(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: StoreRow] {
        var result: [[StoreValue]: StoreRow] = [:]
        for key in keys { if let row = try row(forKey: key, entity: entity) { result[key] = row } }
        return result
    }

    package func row(forKey key: [StoreValue], entity: EntityDescription) throws -> StoreRow? {
        let table = table(entity)
        guard let primaryKey = table.keys[key], let values = table.rows[primaryKey] else { return nil }
        return StoreRow(primaryKey: primaryKey, values: values)
    }

    package func rows(displacedIDs ids: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        guard let keyIndex = entity.rowidKeyIndex else { return [:] }
        let rows = table(entity).rows
        var result: [Int64: [StoreValue]] = [:]
        for id in ids {
            if let values = rows[id], values[keyIndex] != .integer(id) { result[id] = values }
        }
        return result
    }

    /// Reads memory only: it cannot fail.
    package func owners(in join: JoinTable, linking member: Int64) -> [Int64] {
        guard let owner = model.entitiesByName[join.owner],
              let index = owner.attributes.firstIndex(where: { $0.join == join }) else { return [] }
        return table(owner).rows.compactMap { primaryKey, values in
            JoinTable.decode(values[index]).contains(member) ? primaryKey : nil
        }.sorted()
    }

    // MARK: PredicateResolver (key paths, read from the same snapshot)

    package func row(_ entity: EntityDescription, _ primaryKey: Int64) -> [StoreValue]? {
        table(entity).rows[primaryKey]
    }

    package func owners(in join: JoinTable, column index: Int, listing member: Int64) -> [Int64] {
        owners(in: join, linking: member)
    }

    package func objects(of destination: EntityDescription, pointingAt primaryKey: Int64, through column: String) -> [(primaryKey: Int64, values: [StoreValue])] {
        guard let index = destination.attributes.firstIndex(where: { $0.name == column }) else { return [] }
        return table(destination).rows.compactMap { key, values in values[index] == .integer(primaryKey) ? (key, values) : nil }
            .sorted { $0.0 < $1.0 }
    }
}
