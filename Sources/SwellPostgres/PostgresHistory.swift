import Foundation
import SwellStoreCore

/// Persistent history in the PostgreSQL store (Store guarantees 46–48), as in SQLite: two tables in
/// the store's schema, `swell_history_transactions` (its `id` is the token) and
/// `swell_history_changes`, written by the committing transaction. Several runners commit
/// at once here, so a transaction takes the history table's lock before it numbers itself
/// and keeps it until it commits: tokens are handed out in commit order, and a reader that
/// has seen token n never later meets a smaller one.
enum PostgresHistory {
    static let transactions = HistoryText.transactionsTable
    static let changes = HistoryText.changesTable

    static let createSQL = [
        "CREATE TABLE IF NOT EXISTS \(transactions) (id bigserial PRIMARY KEY, timestamp double precision NOT NULL, author text, context_name text)",
        "CREATE TABLE IF NOT EXISTS \(changes) (transaction_id bigint NOT NULL REFERENCES \(transactions)(id) ON DELETE CASCADE, "
            + "entity text NOT NULL, change_type text NOT NULL, updated text, object_pks text NOT NULL, deleted_keys text)",
        "CREATE INDEX IF NOT EXISTS \(changes)_transaction ON \(changes) (transaction_id)",
    ]

    /// The advisory lock between turning history on (held exclusively) and commits (held
    /// shared from when they ask whether it is on until they end): a commit either sees the
    /// history tables or finishes before they exist and before the first position is read.
    static func lockKey(schema: String) -> String { "swell.history.\(schema)" }

    /// Whether the history tables exist in the store's schema. Read from `pg_class` with the
    /// statement's own snapshot: `to_regclass` goes through the session's catalog cache, which
    /// a commit that waited for `startHistory` may not have refreshed yet.
    static func isOn(_ connection: PostgresConnection) throws -> Bool {
        let exists = try connection.query("SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                                          + "WHERE c.relname = $1::text AND n.nspname = current_schema()", [.text(transactions)])
        return exists.first?.first != .integer(0)
    }

    static func keyValues(of rows: [RowReference], model: ManagedObjectModel, connection: PostgresConnection) throws -> [RowReference: [String: StoreValue]] {
        try HistoryText.keyValues(of: rows, model: model) { entity, keys in
            let columns = entity.uniquenessConstraint.map(PostgresSQL.quote).joined(separator: ", ")
            let list = "{" + keys.map(String.init).joined(separator: ",") + "}"
            return try connection.query("SELECT \"_pk\", \(columns) FROM \(PostgresSQL.quote(entity.name)) WHERE \"_pk\" = ANY($1::bigint[])", [.text(list)])
        }
    }

    static func record(_ record: HistoryRecord, connection: PostgresConnection) throws {
        // The deferred foreign-key checks run now, before the lock: run at COMMIT, under it, they
        // could wait for a row another runner holds while that runner waits for the lock.
        try connection.query("SET CONSTRAINTS ALL IMMEDIATE")
        try connection.query("LOCK TABLE \(transactions) IN SHARE ROW EXCLUSIVE MODE")
        let inserted = try connection.query("INSERT INTO \(transactions) (timestamp, author, context_name) VALUES ($1::double precision, $2::text, $3::text) RETURNING id",
                                            HistoryText.transactionRow(record))
        guard case .integer(let token)? = inserted.first?.first else { return }
        for group in record.groups {
            try connection.query("INSERT INTO \(changes) (\(HistoryText.changeColumns)) VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text)",
                                 HistoryText.changeRow(group, token: token))
        }
    }

    static func transactions(after token: HistoryToken?, connection: PostgresConnection, model: ManagedObjectModel,
                             storeIdentifier: String) throws -> [HistoryTransaction] {
        guard try isOn(connection) else { return [] }
        let after = StoreValue.integer(token?.value ?? 0)
        return HistoryText.transactions(
            changes: try connection.query("SELECT \(HistoryText.changeColumns) FROM \(changes) WHERE transaction_id > $1::bigint ORDER BY transaction_id, ctid", [after]),
            transactions: try connection.query("SELECT \(HistoryText.transactionColumns) FROM \(transactions) WHERE id > $1::bigint ORDER BY id", [after]),
            model: model, storeIdentifier: storeIdentifier)
    }
}

extension PostgresCommitTransaction {
    mutating func recordsHistory() throws -> Bool {
        try connection.query("SELECT pg_advisory_xact_lock_shared(hashtext($1::text))", [.text(historyLock)])
        return try PostgresHistory.isOn(connection)
    }

    mutating func keyValues(of rows: [RowReference]) throws -> [RowReference: [String: StoreValue]] {
        try PostgresHistory.keyValues(of: rows, model: committer.model, connection: connection)
    }

    mutating func recordHistory(_ record: HistoryRecord) throws {
        try PostgresHistory.record(record, connection: connection)
    }
}
