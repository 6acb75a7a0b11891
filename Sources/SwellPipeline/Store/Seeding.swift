import Foundation
import SwellContexts

/// `swell seed`: installs a seed store under the store's lock.
public enum Seeding {
    /// Copies the SQLite file `seed` (with its -wal and -shm files) to `store`, under the store's lock.
    /// Returns false, copying nothing, when a store is there already and `force` is false.
    ///
    /// - Throws: `PipelineError` `.usage` for a PostgreSQL store, `.locked` when another run
    ///   holds it (without `wait`), `.io` when the copy fails.
    public static func install(seed: String, store: StoreLocation, redactor: Redactor, force: Bool, wait: Bool) throws(PipelineError) -> Bool {
        try store.validate()
        if store.isPostgres {
            throw PipelineError(.usage, "swell seed installs a SQLite file; the store \(store) is a PostgreSQL database")
        }
        let lock = try StoreLock(store: store, wait: wait)
        defer { withExtendedLifetime(lock) {} }
        do {
            return try StoreSeeder.install(seed: URL(fileURLWithPath: seed), at: URL(fileURLWithPath: store.rawValue), replacing: force)
        } catch {
            throw PipelineError(.io, redactor("\(error)"), underlying: error)
        }
    }
}
