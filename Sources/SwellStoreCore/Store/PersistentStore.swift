import Foundation

/// The persistent store behind a coordinator: where saved objects live.
///
/// The coordinator talks to its store only through this protocol (load, read a
/// consistent snapshot, commit a change set), so that another store (a
/// PostgreSQL-protocol one for runs that outgrow one machine) can slot in.
/// Implementations serialise their own access: any queue may call them.
package protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, kept in the store; part of every object ID's URI.
    var identifier: String { get }
    /// Where the store lives.
    var url: URL { get }
    /// Opens (creating if needed) and migrates the store to `model` (`ModelMigration`), doing in
    /// the same transaction what a stage of a staged migration asks (`MigrationStageWork`).
    func load(model: ManagedObjectModel, stage: MigrationStageWork) throws(StoreError)
    /// The model the store recorded when it was last loaded, read without changing anything
    /// (nil: a new store, or one that recorded none).
    func recordedModel() throws(StoreError) -> ManagedObjectModel?
    /// `count` new object IDs for `entity`, never handed out before to anyone writing this
    /// store, in this process or another: IDs are permanent from insert (Store guarantees 17, 49;
    /// PostgreSQL store guarantees 4 across runners).
    ///
    /// - Throws: when the store cannot reserve them (the SQLite store reserves through its
    ///   file: closed, unwritable, or busy past the timeout).
    func allocateIDs(for entity: String, count: Int64) throws(StoreError) -> Range<Int64>
    /// Whether a new row of `entity`, whose key is its table's rowid, may take its key as
    /// its ID: only where `allocateIDs` never hands that number out, to anyone (`ObjectIDSpace`).
    func mayUseKeyAsID(_ key: Int64, for entity: String) -> Bool
    /// Runs `body` against one consistent snapshot of the last committed state.
    /// Never waits for a commit in progress.
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    /// Opens a snapshot of the last committed state, taken now and kept until it is closed,
    /// for a pinned context's reads (Store guarantees 56). Never waits for a commit in progress.
    ///
    /// - Throws: `StoreError.noPersistentStore` when the store is closed, a store error when no
    ///   connection can be opened.
    func openPinnedReader() throws(StoreError) -> any PinnedStoreReader
    /// Commits one root save as one transaction: all of it or none of it.
    func commit(_ changes: StoreChangeSet) throws(StoreError) -> StoreCommitResult
    /// Turns persistent history on for the store (Store guarantees 46): its tables are made, and
    /// every later commit, by any process, records a transaction.
    func startHistory() throws(StoreError)
    /// The history transactions after `token` (all when nil), in order.
    func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction]
    /// Removes the history transactions before `token`.
    func deleteHistory(before token: HistoryToken) throws(StoreError)
    /// The newest history transaction's token — of those committed before `date`, when given
    /// (nil: none, or no history).
    func lastHistoryToken(before date: Date?) throws(StoreError) -> HistoryToken?
    /// Closes the store's connections on purpose; later reads and commits throw
    /// `StoreError.noPersistentStore`. Closing twice does nothing.
    func close() throws(StoreError)
}

extension PersistentStore {
    /// Opens (creating if needed) and migrates the store to `model`.
    package func load(model: ManagedObjectModel) throws(StoreError) {
        try load(model: model, stage: MigrationStageWork())
    }

    package func startHistory() throws(StoreError) {
        throw .unsupported(store: String(describing: type(of: self)), what: "persistent history")
    }
    package func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction] {
        throw .unsupported(store: String(describing: type(of: self)), what: "persistent history")
    }
    package func deleteHistory(before token: HistoryToken) throws(StoreError) {
        throw .unsupported(store: String(describing: type(of: self)), what: "persistent history")
    }
    package func lastHistoryToken(before date: Date?) throws(StoreError) -> HistoryToken? {
        try history(after: nil).last { date == nil || $0.timestamp < date! }?.token
    }
}

/// Reads from one snapshot of a store.
package protocol StoreReader {
    /// The rows matching a query, in its order.
    func rows(_ query: StoreQuery) throws -> [StoreRow]
    /// Calls `body` with each row matching a query, in order, one at a time (constant memory).
    func forEachRow(_ query: StoreQuery, _ body: (StoreRow) throws -> Void) throws
    /// Like `forEachRow`, with each row's values read in place (no copies), valid only inside `body`.
    func forEachRowCursor(_ query: StoreQuery, _ body: (StoreRowCursor) throws -> Void) throws
    /// A value Swell keeps in the store beside the data (`swell_state`).
    func metadata(forKey key: String) throws -> String?
    /// The number of rows matching a query's predicate (ignoring limit and offset).
    func count(_ query: StoreQuery) throws -> Int
    /// The rows with these primary keys (absent ones are left out).
    func rows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]]
    /// How many of these primary keys match the query's predicate.
    func countMatching(primaryKeys: [Int64], query: StoreQuery) throws -> Int
    /// The rows whose uniqueness-constraint values are among `keys`, by key.
    func rows(forKeys keys: [[StoreValue]], entity: EntityDescription) throws -> [[StoreValue]: StoreRow]
    /// For an entity whose key is one integer attribute: the rows whose key is among `keys`, by key.
    func rows(forIntegerKeys keys: [Int64], entity: EntityDescription) throws -> [Int64: StoreRow]
    /// For an entity whose key is one integer attribute: the stored rows of the keys of
    /// `keyedRows` (key → row of `columns`), compared with that row's values, where column
    /// `c` of `columns` is attribute `positions[c]`. See `RowComparison`.
    func compareRows(forIntegerKeys keyedRows: [Int64: Int], columns: BatchColumns, positions: [Int],
                     entity: EntityDescription) throws -> RowComparison
    /// `compareRows(forIntegerKeys:…)` for any other key (text, several attributes): `keyedRows`
    /// maps each key (its uniqueness-constraint values) to its row of `columns`.
    func compareRows(forKeys keyedRows: [[StoreValue]: Int], columns: BatchColumns, positions: [Int],
                     entity: EntityDescription) throws -> RowComparison
    /// The row whose uniqueness-constraint values are `key`.
    func row(forKey key: [StoreValue], entity: EntityDescription) throws -> StoreRow?
    /// For an entity whose key is its table's rowid: the rows whose object ID is among `ids`
    /// and is not their key (an ID kept in `_pk`), by ID. Empty for other entities.
    func rows(displacedIDs ids: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]]
    /// The owners whose join-table to-many lists `member` (the other side of a many-to-many), ascending.
    func owners(in join: JoinTable, linking member: Int64) throws -> [Int64]
}

extension StoreReader {
    /// `rows(forKeys:entity:)` with one-integer keys (stores without a faster way).
    package func rows(forIntegerKeys keys: [Int64], entity: EntityDescription) throws -> [Int64: StoreRow] {
        var result: [Int64: StoreRow] = [:]
        for (key, row) in try rows(forKeys: keys.map { [.integer($0)] }, entity: entity) {
            if case .integer(let int)? = key.first { result[int] = row }
        }
        return result
    }
}

extension StoreReader {
    /// `compareRows` over `rows(forIntegerKeys:)` (stores without a faster way).
    package func compareRows(forIntegerKeys keyedRows: [Int64: Int], columns: BatchColumns, positions: [Int],
                             entity: EntityDescription) throws -> RowComparison {
        try compareRowsReadingValues(forIntegerKeys: keyedRows, columns: columns, positions: positions, entity: entity)
    }

    /// `compareRows(forKeys:…)` over `rows(forKeys:)` (stores without a faster way).
    package func compareRows(forKeys keyedRows: [[StoreValue]: Int], columns: BatchColumns, positions: [Int],
                             entity: EntityDescription) throws -> RowComparison {
        Self.compare(try rows(forKeys: Array(keyedRows.keys), entity: entity), keyedRows, columns, positions, entity)
    }

    /// `compareRows` by reading the stored rows' values (`rows(forIntegerKeys:)`) and comparing them.
    package func compareRowsReadingValues(forIntegerKeys keyedRows: [Int64: Int], columns: BatchColumns, positions: [Int],
                                          entity: EntityDescription) throws -> RowComparison {
        Self.compare(try rows(forIntegerKeys: Array(keyedRows.keys), entity: entity), keyedRows, columns, positions, entity)
    }

    /// The stored rows of some keys compared by values with the rows of `keyedRows` (key → row of `columns`).
    private static func compare<Key: Hashable>(_ stored: [Key: StoreRow], _ keyedRows: [Key: Int], _ columns: BatchColumns,
                                               _ positions: [Int], _ entity: EntityDescription) -> RowComparison {
        var comparison = RowComparison()
        for (key, row) in stored {
            guard let incoming = keyedRows[key] else { continue }
            comparison.note(row, row: incoming, columns: columns, positions: positions, entity: entity)
        }
        return comparison
    }
}

/// How a batch's rows compare with the stored rows of their keys (`compareRows`).
package struct RowComparison: Sendable {
    /// Rows whose every carried value equals the stored one (a required attribute
    /// stored as nil never counts as equal): the row, and the stored row's primary key.
    package var unchanged: [(row: Int, primaryKey: Int64)] = []
    /// The stored rows of the other rows, by the batch row they meet.
    package var changed: [Int: StoreRow] = [:]
    /// Instead of `changed`, where the batch carries every attribute of the entity (and perhaps
    /// relationship columns) and the store compares in place: for each other key, the stored row's
    /// primary key and the attributes whose values differ (the update the row needs, under
    /// a policy that takes the carried values), no value read. By the batch row they meet.
    package var differing: [Int: (primaryKey: Int64, mask: AttributeMask)] = [:]

    package init() {}

    /// Notes `stored`, the stored row that batch row `row` meets, compared by values.
    package mutating func note(_ stored: StoreRow, row: Int, columns: BatchColumns, positions: [Int], entity: EntityDescription) {
        let equal = positions.enumerated().allSatisfy { column, position in
            let value = stored.values[position]
            return value == columns.value(row: row, column: column)
                && !(value.isNull && !entity.attributes[position].isOptional)
        }
        if equal {
            unchanged.append((row, stored.primaryKey))
        } else {
            changed[row] = stored
        }
    }

    /// Whether a comparison of columns at `positions` notes differing rows in `differing`
    /// (the columns carry every attribute of `entity`, and perhaps relationship columns: a
    /// package batch's to-one IDs and member lists) rather than reading them into `changed`.
    package static func notesDifferences(positions: [Int], entity: EntityDescription) -> Bool {
        Set(positions).isSuperset(of: entity.ownAttributeIndices)
    }
}

/// A row of an entity's table: its primary key and a value per attribute.
package struct StoreRow: Sendable {
    package var primaryKey: Int64
    package var values: [StoreValue]

    package init(primaryKey: Int64, values: [StoreValue]) {
        self.primaryKey = primaryKey
        self.values = values
    }
}

/// What a fetch asks of the store.
package struct StoreQuery: Sendable {
    package var entity: EntityDescription
    package var predicate: BoundPredicate?
    /// Attribute indices with direction; ties are broken ascending by the entity's rowid key
    /// when it has one (`TableLayout`), otherwise by the primary key.
    package var sort: [(attribute: Int, ascending: Bool)] = []
    package var limit: Int?
    package var offset: Int = 0
    /// Values read after the attributes, through relationships (key-path columns of exports).
    package var extraColumns: [KeyPathColumn] = []
    /// Sort keys beyond the attributes: a `sort` index from `entity.attributes.count` on
    /// names `sortKeyPaths[index - count]` (a to-one key path, `spot.name`).
    package var sortKeyPaths: [[String]] = []
    /// Rows may come in any order (no `sort`, no limit or offset): the store need not sort
    /// them, which for an `IN` list of thousands of values is most of the query's time.
    package var anyOrder = false

    package init(entity: EntityDescription, predicate: BoundPredicate?, sort: [(attribute: Int, ascending: Bool)] = [],
                 limit: Int? = nil, offset: Int = 0) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// One root save, in the order its changes were made.
package struct StoreChangeSet: Sendable {
    package struct Operation: Sendable {
        package var entity: String
        package var primaryKey: Int64
        package var row: PendingRow

        package init(entity: String, primaryKey: Int64, row: PendingRow) {
            self.entity = entity
            self.primaryKey = primaryKey
            self.row = row
        }
    }

    package var operations: [Operation]
    /// New rows given as columns (a batch insert's), written before `operations`: their
    /// keys were looked up and not stored. A store binds them straight from the buffers,
    /// or takes them as operations (`ColumnInsert.operation`).
    package var columnInserts: [ColumnInsert] = []
    /// Stored rows updated from columns (a batch insert's rows that differ from theirs), written
    /// after `operations` (`CommitDriver` keeps that order for every store). A store binds
    /// them straight from the buffers, or takes them as operations (`ColumnUpdate.operation`).
    package var columnUpdates: [ColumnUpdate] = []
    /// Join-table links of rows the column inserts and updates wrote (a batch insert's
    /// member lists), written after them (`CommitDriver`).
    package var linkWrites: [LinkWrite] = []
    /// Values kept beside the data, written in the same transaction (nil removes).
    package var metadata: [String: String?] = [:]
    /// The committing context's `transactionAuthor` and `name`, for the history.
    package var author: String? = nil
    package var contextName: String? = nil
    /// How the store resolves a key that already belongs to another row.
    package var mergePolicy: MergePolicy

    package init(operations: [Operation], columnInserts: [ColumnInsert] = [], columnUpdates: [ColumnUpdate] = [],
                 linkWrites: [LinkWrite] = [], metadata: [String: String?] = [:], author: String? = nil,
                 contextName: String? = nil, mergePolicy: MergePolicy) {
        self.operations = operations
        self.columnInserts = columnInserts
        self.columnUpdates = columnUpdates
        self.linkWrites = linkWrites
        self.metadata = metadata
        self.author = author
        self.contextName = contextName
        self.mergePolicy = mergePolicy
    }
}

/// New rows of one entity as columns: rows `rows` of `columns`, column `c` holding the
/// attribute at `positions[c]`, the row `rows[i]` getting the ID `ids[i]`.
package struct ColumnInsert: Sendable {
    package var entity: String
    package var columns: BatchColumns
    package var positions: [Int]
    package var rows: [Int]
    package var ids: [Int64]
    /// How many attributes the entity keeps (the operations' value count).
    package var attributeCount: Int

    package init(entity: String, columns: BatchColumns, positions: [Int], rows: [Int], ids: [Int64], attributeCount: Int) {
        self.entity = entity
        self.columns = columns
        self.positions = positions
        self.rows = rows
        self.ids = ids
        self.attributeCount = attributeCount
    }

    /// Row `n` of the insert as an operation: merged by the policy if its key is taken after all.
    package func operation(_ n: Int) -> StoreChangeSet.Operation {
        var values = [StoreValue](repeating: .null, count: attributeCount)
        var mask = AttributeMask.empty
        for (column, position) in positions.enumerated() {
            values[position] = columns.value(row: rows[n], column: column)
            mask.insert(position)
        }
        var row = PendingRow(kind: .inserted, values: values, mask: mask, sequence: UInt64(n))
        row.keyCheckedAgainstStore = true
        return .init(entity: entity, primaryKey: ids[n], row: row)
    }
}

/// Stored rows of one entity updated from columns: row `rows[i]` of `columns` (column `c`
/// holding the attribute at `positions[c]`) writes the attributes of `masks[i]` to the stored
/// row with the ID `primaryKeys[i]`. Only rows whose stored values were compared and found to
/// differ in exactly those attributes get here, so the update needs no stored values.
package struct ColumnUpdate: Sendable {
    package var entity: String
    package var columns: BatchColumns
    package var positions: [Int]
    package var rows: [Int]
    package var primaryKeys: [Int64]
    package var masks: [AttributeMask]
    /// How many attributes the entity keeps (the operations' value count).
    package var attributeCount: Int

    package init(entity: String, columns: BatchColumns, positions: [Int], attributeCount: Int) {
        self.entity = entity
        self.columns = columns
        self.positions = positions
        rows = []
        primaryKeys = []
        masks = []
        self.attributeCount = attributeCount
    }

    /// Adds row `row` of the columns, updating the attributes of `mask` of the stored row `primaryKey`.
    package mutating func append(row: Int, primaryKey: Int64, mask: AttributeMask) {
        rows.append(row)
        primaryKeys.append(primaryKey)
        masks.append(mask)
    }

    /// Update `n` as an operation (for a store without a columnar path, or a row that needs
    /// the policy after all).
    package func operation(_ n: Int) -> StoreChangeSet.Operation {
        var values = [StoreValue](repeating: .null, count: attributeCount)
        for (column, position) in positions.enumerated() where masks[n].contains(position) {
            values[position] = columns.value(row: rows[n], column: column)
        }
        return .init(entity: entity, primaryKey: primaryKeys[n], row: PendingRow(kind: .updated, values: values, mask: masks[n], sequence: UInt64(n)))
    }
}


/// The links of an unordered join-table to-many set for rows of its owner entity, from a
/// batch insert's member lists: owner `owners[i]` lists `members[ends[i - 1]..<ends[i]]`
/// (ascending, once each). For new owners (`replace` false) the links are added; for stored
/// ones, the lists replace the stored sets.
package struct LinkWrite: Sendable {
    package var entity: String
    /// The join column's attribute index.
    package var column: Int
    package var join: JoinTable
    /// How many attributes the entity keeps (the operations' value count).
    package var attributeCount: Int
    package var replace: Bool
    package var owners: [Int64] = []
    package var ends: [Int] = []
    package var members: [Int64] = []

    package init(entity: String, column: Int, join: JoinTable, attributeCount: Int, replace: Bool) {
        self.entity = entity
        self.column = column
        self.join = join
        self.attributeCount = attributeCount
        self.replace = replace
    }

    /// The owners, each a key conflict merged into a survivor (another writer's row, met at
    /// the insert) replaced by that survivor (`StoreCommitResult.merged`).
    package func owners(following merged: [ObjectID: ObjectID]) -> [Int64] {
        guard !merged.isEmpty else { return owners }
        var survivors: [Int64: Int64] = [:]
        for (incoming, survivor) in merged where incoming.entityName == entity { survivors[incoming.primaryKey] = survivor.primaryKey }
        return survivors.isEmpty ? owners : owners.map { survivors[$0] ?? $0 }
    }

    /// Owner `n`'s members.
    package func members(_ n: Int) -> ArraySlice<Int64> {
        members[(n == 0 ? 0 : ends[n - 1])..<ends[n]]
    }

    /// Adds `owner` with the members a join column's value lists (`JoinTable.encode`'s text).
    package mutating func append(owner: Int64, list: UnsafeBufferPointer<UInt8>?) {
        owners.append(owner)
        if let list {
            var value: Int64 = 0
            var digits = false
            for byte in list {
                if byte == UInt8(ascii: ",") {
                    if digits { members.append(value) }
                    value = 0
                    digits = false
                } else {
                    value = value &* 10 &+ Int64(byte &- UInt8(ascii: "0"))
                    digits = true
                }
            }
            if digits { members.append(value) }
        }
        ends.append(members.count)
    }

    /// Owner `n`'s list as an update of its join column (for a store without its own way).
    package func operation(_ n: Int) -> StoreChangeSet.Operation {
        var values = [StoreValue](repeating: .null, count: attributeCount)
        values[column] = JoinTable.encode(Array(members(n)), ordered: false)
        var mask = AttributeMask.empty
        mask.insert(column)
        return .init(entity: entity, primaryKey: owners[n], row: PendingRow(kind: .updated, values: values, mask: mask, sequence: UInt64(n)))
    }
}

/// What a commit did, for the did-save notification.
package struct StoreCommitResult: Sendable {
    package var inserted: Set<ObjectID> = []
    package var updated: [ObjectID: Set<String>] = [:]
    package var deleted: Set<ObjectID> = []
    /// Inserted objects that became an existing one (uniqueness constraint): incoming → survivor.
    package var merged: [ObjectID: ObjectID] = [:]
    /// Updated or deleted objects that had changed since the committing context read them, whose
    /// changes the merge policy narrowed, widened or dropped (Store guarantees 61): the context
    /// re-reads their values.
    package var resolvedConflicts: Set<ObjectID> = []

    package init() {}
}
