import Foundation
import SwellStoreCore

/// Persistent history in a SQLite store (Store guarantees 46–48): two plain tables,
/// `swell_history_transactions` (one row per transaction; its `id` is the token) and
/// `swell_history_changes` (one row per changed object), written by the committing
/// transaction itself, so a change and its history are on disk together or not at all.
package enum SQLiteHistory {
    package static let transactions = HistoryText.transactionsTable
    package static let changes = HistoryText.changesTable

    package static let createSQL = [
        "CREATE TABLE IF NOT EXISTS \(transactions) (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp REAL NOT NULL, author TEXT, context_name TEXT)",
        // One row per entity, change type and set of updated names: `object_pks` lists the
        // objects as ascending ranges (`1..5000,5003`), `deleted_keys` their key values.
        "CREATE TABLE IF NOT EXISTS \(changes) (transaction_id INTEGER NOT NULL REFERENCES \(transactions)(id), entity TEXT NOT NULL, "
            + "change_type TEXT NOT NULL, updated TEXT, object_pks TEXT NOT NULL, deleted_keys TEXT)",
        "CREATE INDEX IF NOT EXISTS \(changes)_transaction ON \(changes) (transaction_id)",
    ]

    /// Whether the store records history (its tables exist).
    package static func isOn(_ connection: SQLiteConnection) throws -> Bool {
        try connection.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(transactions)]).first != nil
    }

    /// The key values of `rows`, by row.
    package static func keyValues(of rows: [RowReference], model: ManagedObjectModel, connection: SQLiteConnection) throws -> [RowReference: [String: StoreValue]] {
        try HistoryText.keyValues(of: rows, model: model) { entity, keys in
            let layout = TableLayout(entity)
            let columns = entity.uniquenessConstraint.map(quoteIdentifier).joined(separator: ", ")
            let list = "[" + keys.map(String.init).joined(separator: ",") + "]"
            return try connection.query("SELECT \(layout.id), \(columns) FROM \(layout.table) WHERE \(layout.idIn(jsonParameter: 1))", [.text(list)])
        }
    }

    /// Writes `record` (inside the committing transaction).
    package static func record(_ record: HistoryRecord, connection: SQLiteConnection) throws {
        try connection.run("INSERT INTO \(transactions) (timestamp, author, context_name) VALUES (?, ?, ?)", HistoryText.transactionRow(record))
        guard case .integer(let token)? = try connection.query("SELECT last_insert_rowid()").first?.first else { return }
        let statement = try connection.statement("INSERT INTO \(changes) (\(HistoryText.changeColumns)) VALUES (?, ?, ?, ?, ?, ?)")
        defer { statement.reset() }
        for group in record.groups {
            try statement.bind(HistoryText.changeRow(group, token: token))
            while try statement.step() {}
            statement.reset()
        }
    }

    /// The transactions after `token`, in order; `entities` gives attribute types for key values.
    package static func transactions(after token: HistoryToken?, connection: SQLiteConnection, model: ManagedObjectModel,
                             storeIdentifier: String) throws -> [HistoryTransaction] {
        guard try isOn(connection) else { return [] }
        let after = StoreValue.integer(token?.value ?? 0)
        return HistoryText.transactions(
            changes: try connection.query("SELECT \(HistoryText.changeColumns) FROM \(changes) WHERE transaction_id > ? ORDER BY transaction_id, rowid", [after]),
            transactions: try connection.query("SELECT \(HistoryText.transactionColumns) FROM \(transactions) WHERE id > ? ORDER BY id", [after]),
            model: model, storeIdentifier: storeIdentifier)
    }

    /// Removes the transactions before `token` (inside a write transaction).
    package static func delete(before token: HistoryToken, connection: SQLiteConnection) throws {
        guard try isOn(connection) else { return }
        try connection.run("DELETE FROM \(changes) WHERE transaction_id < ?", [.integer(token.value)])
        try connection.run("DELETE FROM \(transactions) WHERE id < ?", [.integer(token.value)])
        // How far it was ever purged, never moved back (ManagedObjectContext.historyPurgedBefore).
        try connection.execute("CREATE TABLE IF NOT EXISTS swell_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        try connection.run("INSERT INTO swell_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                           + "value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)",
                           [.text(PersistentHistoryKeys.purgedBefore), .text(String(token.value))])
    }
}

extension SQLiteCommitTransaction {
    package mutating func recordsHistory() throws -> Bool {
        try SQLiteHistory.isOn(connection)
    }

    package mutating func keyValues(of rows: [RowReference]) throws -> [RowReference: [String: StoreValue]] {
        try SQLiteHistory.keyValues(of: rows, model: committer.model, connection: connection)
    }

    package mutating func recordHistory(_ record: HistoryRecord) throws {
        try SQLiteHistory.record(record, connection: connection)
    }
}

extension SQLiteStore {
    package func startHistory() throws(StoreError) {
        // Already on (the usual case): a read, so opening never waits for a writer (`swell status` beside a run).
        do {
            if try read({ try SQLiteHistory.isOn(($0 as! SQLiteStoreReader).connection) }) { return }  // this store's own reader
        } catch {
            throw StoreError(converting: error, path: path)
        }
        try writeTransaction { writer in
            for sql in SQLiteHistory.createSQL { try writer.execute(sql) }
        }
    }

    package func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction] {
        do {
            return try read { reader in
                // The reader this store hands out is its own SQLite reader.
                let reader = reader as! SQLiteStoreReader
                return try SQLiteHistory.transactions(after: token, connection: reader.connection, model: reader.model, storeIdentifier: identifier)
            }
        } catch {
            throw StoreError(converting: error, path: path)
        }
    }

    package func deleteHistory(before token: HistoryToken) throws(StoreError) {
        try writeTransaction { writer in try SQLiteHistory.delete(before: token, connection: writer) }
    }

    package func lastHistoryToken(before date: Date?) throws(StoreError) -> HistoryToken? {
        do {
            return try read { reader in
                let connection = (reader as! SQLiteStoreReader).connection  // this store's own reader
                guard try SQLiteHistory.isOn(connection),
                      case .integer(let id)? = try (date.map { try connection.query("SELECT max(id) FROM \(SQLiteHistory.transactions) WHERE timestamp < ?", [.real($0.timeIntervalSince1970)]) }
                        ?? connection.query("SELECT max(id) FROM \(SQLiteHistory.transactions)")).first?.first else { return nil }
                return HistoryToken(value: id)
            }
        } catch {
            throw StoreError(converting: error, path: path)
        }
    }
}
