import SwellStore
import SwellLocks

/// Replace mode's deletions (pipeline-file.md, `mode: replace`): collects the
/// keys the pages brought, and once every page arrived deletes the entity's
/// rows whose key none of them brought.
///
/// The sweep reads the table once (keys and primary keys, no objects) and
/// deletes the unseen rows by primary key, without reading them again. The
/// deletions are saved into the view context; the writer's last save writes them.
///
/// `Sendable`: the keys seen are behind a `LockedValue` (workers add theirs concurrently).
final class ReplaceSweeper: Sendable {
    private let entity: EntityDescription
    private let seen = LockedValue<Set<[StoreValue]>>([])

    init(entity: EntityDescription) {
        self.entity = entity
    }

    /// Keys (values of the entity's key attributes, in key order) a page brought.
    func saw(_ keys: [[StoreValue]]) {
        guard !keys.isEmpty else { return }
        seen.withLock { $0.formUnion(keys) }
    }

    /// Deletes the rows of the entity whose key was not seen, in a new private
    /// child context of `container`'s view context saved into the view context;
    /// returns how many rows it deleted.
    ///
    /// - Throws: a store error from reading the table or from the save.
    func sweep(in container: PersistentContainer) throws -> Int {
        let seen = seen.withLock { $0 }
        let keyIndices = entity.keyIndices
        let context = container.newBackgroundContext()
        context.name = "\(entity.name).replace"
        return try context.performAndWait { () throws -> Int in
            var doomed: [Int64] = []
            try context.enumerateRows(FetchRequest(entityName: entity.name)) { primaryKey, values in
                if !seen.contains(keyIndices.map { values[$0] }) { doomed.append(primaryKey) }
            }
            context.deleteRows(entity: entity.name, primaryKeys: doomed)
            try context.save()
            return doomed.count
        }
    }
}
