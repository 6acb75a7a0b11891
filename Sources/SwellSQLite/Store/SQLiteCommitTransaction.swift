import SwellStoreCore

/// A commit on the SQLite store's writer connection (`CommitDriver`'s primitives): `BEGIN
/// IMMEDIATE` … `COMMIT`, the rows written by `SQLiteCommitter`, metadata in `swell_state`.
package struct SQLiteCommitTransaction: StoreCommitTransaction {
    package let connection: SQLiteConnection
    package var committer: SQLiteCommitter
    /// Told the operations applied so far (0 right after `BEGIN`, then every `interval`).
    package let observer: (@Sendable (Int) -> Void)?
    package let interval: Int
    private var metadataTableReady = false

    package init(connection: SQLiteConnection, committer: SQLiteCommitter, observer: (@Sendable (Int) -> Void)?, interval: Int) {
        self.connection = connection
        self.committer = committer
        self.observer = observer
        self.interval = max(1, interval)
    }

    package var result: StoreCommitResult { committer.result }
    package var model: ManagedObjectModel { committer.model }
    package var storeIdentifier: String { committer.storeIdentifier }

    /// Read on the writer's connection inside `BEGIN IMMEDIATE`: no other writer commits until this one ends.
    package mutating func currentRows(primaryKeys: [Int64], entity: EntityDescription) throws -> [Int64: [StoreValue]] {
        var result: [Int64: [StoreValue]] = [:]
        let reader = SQLiteStoreReader(connection: connection, model: committer.model, path: "")
        for start in stride(from: 0, to: primaryKeys.count, by: 10_000) {
            let chunk = Array(primaryKeys[start..<min(primaryKeys.count, start + 10_000)])
            result.merge(try reader.rows(primaryKeys: chunk, entity: entity)) { first, _ in first }
        }
        return result
    }

    package mutating func begin() throws {
        try connection.execute("BEGIN IMMEDIATE")
        observer?(0)
    }

    package mutating func insertColumns(_ insert: ColumnInsert) throws {
        try committer.insertColumns(insert)
    }

    package mutating func apply(_ operations: [StoreChangeSet.Operation]) throws {
        committer.reserveCapacity(operations.count)
        for (index, operation) in operations.enumerated() {
            try committer.apply(operation)
            if let observer, (index + 1) % interval == 0 { observer(index + 1) }
        }
    }

    package mutating func updateColumns(_ update: ColumnUpdate) throws {
        try committer.updateColumns(update)
    }

    package mutating func writeLinks(_ links: LinkWrite) throws {
        try committer.writeLinks(links)
    }

    package mutating func redirectReferences() throws {
        try committer.redirectReferences()
    }

    package mutating func setMetadata(_ value: String?, forKey key: String) throws {
        if !metadataTableReady {
            try connection.execute("CREATE TABLE IF NOT EXISTS swell_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            metadataTableReady = true
        }
        if let value {
            try connection.run("INSERT OR REPLACE INTO swell_state (key, value) VALUES (?, ?)", [.text(key), .text(value)])
        } else {
            try connection.run("DELETE FROM swell_state WHERE key = ?", [.text(key)])
        }
    }

    package mutating func commit() throws {
        try connection.execute("COMMIT")
    }

    /// A ROLLBACK that fails means SQLite already rolled the transaction back (as it does
    /// on a full disk or an I/O error).
    package mutating func rollback() {
        try? connection.execute("ROLLBACK")
    }
}
