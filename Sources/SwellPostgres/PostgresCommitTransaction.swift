import SwellStoreCore

/// A commit on the PostgreSQL store's writer session (`CommitDriver`'s primitives): `BEGIN`
/// … `COMMIT`, rows written by `PostgresCommitter` (runs of inserts and of plain updates as
/// one binary `COPY` each), metadata in `swell_state`.
struct PostgresCommitTransaction: StoreCommitTransaction {
    let connection: PostgresConnection
    var committer: PostgresCommitter
    /// The advisory lock `startHistory` takes to turn history on (`PostgresHistory.lockKey`).
    let historyLock: String

    var result: StoreCommitResult { committer.result }
    var model: ManagedObjectModel { committer.model }
    var storeIdentifier: String { committer.storeIdentifier }

    /// The rows are locked first (`FOR UPDATE`, in key order so two runners never deadlock on
    /// them), then read: under read committed the read sees the newest committed values, and no
    /// other runner changes them before this transaction ends.
    mutating func currentRows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        let sorted = primaryKeys.sorted()
        let table = PostgresSQL.quote(entity.name)
        let reader = PostgresReader(connection: connection, model: committer.model)
        for start in stride(from: 0, to: sorted.count, by: 10_000) {
            let chunk = Array(sorted[start..<min(sorted.count, start + 10_000)])
            let list = "{" + chunk.map(String.init).joined(separator: ",") + "}"
            try connection.query("SELECT \"_pk\" FROM \(table) WHERE \"_pk\" = ANY($1::bigint[]) ORDER BY \"_pk\" FOR UPDATE", [.text(list)])
            result.merge(try reader.rows(primaryKeys: chunk, entity: entity)) { first, _ in first }
        }
        return result
    }

    mutating func begin() throws {
        try connection.query("BEGIN")
    }

    mutating func insertColumns(_ insert: ColumnInsert) throws {
        try committer.insertColumns(insert)
    }

    mutating func writeLinks(_ links: LinkWrite) throws {
        try committer.writeLinks(links)
    }

    /// Runs of new objects of one entity go in one `COPY` (the fast path), as do runs of
    /// updates `COPY` can stage; the rest row by row.
    mutating func apply(_ operations: [StoreChangeSet.Operation]) throws {
        var start = 0
        while start < operations.count {
            var end = start + 1
            let kind = operations[start].row.kind
            if kind == .inserted || committer.canBatchUpdate(operations[start]) {
                while end < operations.count, operations[end].entity == operations[start].entity,
                      kind == .inserted ? operations[end].row.kind == .inserted : committer.canBatchUpdate(operations[end]) { end += 1 }
            }
            if end - start >= PostgresCommitter.copyThreshold {
                if kind == .inserted {
                    try committer.insertBatch(operations[start..<end])
                } else {
                    try committer.updateBatch(operations[start..<end])
                }
            } else {
                for operation in operations[start..<end] { try committer.apply(operation) }
            }
            start = end
        }
    }

    /// As operations: their runs go in one staged `COPY` (`apply`).
    mutating func updateColumns(_ update: ColumnUpdate) throws {
        try apply(update.rows.indices.map(update.operation))
    }

    mutating func redirectReferences() throws {
        try committer.redirectReferences()
    }

    mutating func setMetadata(_ value: String?, forKey key: String) throws {
        if let value {
            try connection.query("INSERT INTO swell_state (key, value) VALUES ($1::text, $2::text) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                 [.text(key), .text(value)])
        } else {
            try connection.query("DELETE FROM swell_state WHERE key = $1::text", [.text(key)])
        }
    }

    mutating func commit() throws {
        try connection.query("COMMIT")
    }

    /// A failed ROLLBACK means a dead connection, which PostgreSQL rolls back itself and
    /// the next use reports.
    mutating func rollback() {
        _ = try? connection.query("ROLLBACK")
    }
}
