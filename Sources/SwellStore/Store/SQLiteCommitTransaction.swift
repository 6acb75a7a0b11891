/// A commit on the SQLite store's writer connection (`CommitDriver`'s primitives): `BEGIN
/// IMMEDIATE` … `COMMIT`, the rows written by `SQLiteCommitter`, metadata in `swell_state`.
struct SQLiteCommitTransaction: StoreCommitTransaction {
    let connection: SQLiteConnection
    var committer: SQLiteCommitter
    /// Told the operations applied so far (0 right after `BEGIN`, then every `interval`).
    let observer: (@Sendable (Int) -> Void)?
    let interval: Int
    private var metadataTableReady = false

    init(connection: SQLiteConnection, committer: SQLiteCommitter, observer: (@Sendable (Int) -> Void)?, interval: Int) {
        self.connection = connection
        self.committer = committer
        self.observer = observer
        self.interval = max(1, interval)
    }

    var result: StoreCommitResult { committer.result }
    var model: ManagedObjectModel { committer.model }

    mutating func begin() throws {
        try connection.execute("BEGIN IMMEDIATE")
        observer?(0)
    }

    mutating func insertColumns(_ insert: ColumnInsert) throws {
        try committer.insertColumns(insert)
    }

    mutating func apply(_ operations: [StoreChangeSet.Operation]) throws {
        committer.reserveCapacity(operations.count)
        for (index, operation) in operations.enumerated() {
            try committer.apply(operation)
            if let observer, (index + 1) % interval == 0 { observer(index + 1) }
        }
    }

    mutating func updateColumns(_ update: ColumnUpdate) throws {
        try committer.updateColumns(update)
    }

    mutating func writeLinks(_ links: LinkWrite) throws {
        try committer.writeLinks(links)
    }

    mutating func redirectReferences() throws {
        try committer.redirectReferences()
    }

    mutating func setMetadata(_ value: String?, forKey key: String) throws {
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

    mutating func commit() throws {
        try connection.execute("COMMIT")
    }

    /// A ROLLBACK that fails means SQLite already rolled the transaction back (as it does
    /// on a full disk or an I/O error).
    mutating func rollback() {
        try? connection.execute("ROLLBACK")
    }
}
