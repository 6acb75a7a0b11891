import Foundation
import SwellStoreCore

/// Persistent history in the PostgreSQL store (Store guarantees 46–48), as in SQLite: two tables in
/// the store's schema, `swell_history_transactions` (its `id` is the token) and
/// `swell_history_changes`, written by the committing transaction. Several runners commit
/// at once here, so a transaction takes the history table's lock before it numbers itself
/// and keeps it until it commits: tokens are handed out in commit order, and a reader that
/// has seen token n never later meets a smaller one.
enum PostgresHistory {
    static let transactions = "swell_history_transactions"
    static let changes = "swell_history_changes"

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
        var result: [RowReference: [String: StoreValue]] = [:]
        for (entityName, group) in Dictionary(grouping: rows, by: \.entity) {
            guard let entity = model.entitiesByName[entityName], !entity.uniquenessConstraint.isEmpty else { continue }
            let columns = entity.uniquenessConstraint.map(PostgresSQL.quote).joined(separator: ", ")
            let keys = group.map(\.primaryKey)
            for start in stride(from: 0, to: keys.count, by: 10_000) {
                let chunk = keys[start..<min(keys.count, start + 10_000)]
                let list = "{" + chunk.map(String.init).joined(separator: ",") + "}"
                let sql = "SELECT \"_pk\", \(columns) FROM \(PostgresSQL.quote(entityName)) WHERE \"_pk\" = ANY($1::bigint[])"
                for row in try connection.query(sql, [.text(list)]) {
                    guard case .integer(let id)? = row.first else { continue }
                    var values: [String: StoreValue] = [:]
                    for (index, name) in entity.uniquenessConstraint.enumerated() { values[name] = row[index + 1] }
                    result[RowReference(entity: entityName, primaryKey: id)] = values
                }
            }
        }
        return result
    }

    static func record(_ record: HistoryRecord, connection: PostgresConnection) throws {
        // The deferred foreign-key checks run now, before the lock: run at COMMIT, under it, they
        // could wait for a row another runner holds while that runner waits for the lock.
        try connection.query("SET CONSTRAINTS ALL IMMEDIATE")
        try connection.query("LOCK TABLE \(transactions) IN SHARE ROW EXCLUSIVE MODE")
        let inserted = try connection.query("INSERT INTO \(transactions) (timestamp, author, context_name) VALUES ($1::double precision, $2::text, $3::text) RETURNING id",
                                            [.real(record.timestamp.timeIntervalSince1970), record.author.map(StoreValue.text) ?? .null,
                                             record.contextName.map(StoreValue.text) ?? .null])
        guard case .integer(let token)? = inserted.first?.first else { return }
        for group in record.groups {
            try connection.query("INSERT INTO \(changes) (transaction_id, entity, change_type, updated, object_pks, deleted_keys) "
                                 + "VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text)",
                                 [.integer(token), .text(group.entity), .text(group.type.rawValue), HistoryText.updated(group),
                                  HistoryText.keys(group), HistoryText.deletedKeys(group)])
        }
    }

    static func transactions(after token: HistoryToken?, connection: PostgresConnection, model: ManagedObjectModel,
                             storeIdentifier: String) throws -> [HistoryTransaction] {
        guard try isOn(connection) else { return [] }
        let after = StoreValue.integer(token?.value ?? 0)
        var changesByToken: [Int64: [HistoryChange]] = [:]
        for row in try connection.query("SELECT transaction_id, entity, change_type, updated, object_pks, deleted_keys FROM \(changes) "
                                         + "WHERE transaction_id > $1::bigint ORDER BY transaction_id, ctid", [after]) {
            guard case .integer(let id) = row[0], case .text(let entity) = row[1], case .text(let type) = row[2] else { continue }
            changesByToken[id, default: []] += HistoryText.changes(entity: entity, type: type, updated: row[3], keys: row[4], deletedKeys: row[5],
                                                                   model: model, storeIdentifier: storeIdentifier)
        }
        return try connection.query("SELECT id, timestamp, author, context_name FROM \(transactions) WHERE id > $1::bigint ORDER BY id", [after])
            .compactMap { row in
                guard case .integer(let id)? = row.first else { return nil }
                return HistoryText.transaction(row, changes: changesByToken[id] ?? [])
            }
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
