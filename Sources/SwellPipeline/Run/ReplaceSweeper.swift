import SwellStore
import SwellLocks

/// Replace mode's deletions (pipeline-file.md, `mode: replace`): collects the
/// keys the pages brought, and once every page arrived deletes the entity's
/// rows whose key none of them brought.
///
/// A key that is one integer attribute is kept as an `Int64` in one array (8 bytes
/// a record: a million records' keys in 8 MB), sorted once for the sweep; other keys
/// as values in a set. The sweep reads the table once (keys and primary keys, no objects),
/// looks each key up, and deletes the unseen rows by primary key, without reading them
/// again. The deletions are saved into the view context; the writer's last save writes them.
///
/// `Sendable`: the keys seen are behind `LockedValue`s (workers add theirs concurrently).
final class ReplaceSweeper: Sendable {
    private let entity: EntityDescription
    /// The key's attribute index, when the key is one integer attribute.
    let integerKey: Int?
    private let seenIntegers = LockedValue<[Int64]>([])
    private let seen = LockedValue<Set<[StoreValue]>>([])

    init(entity: EntityDescription) {
        self.entity = entity
        let keyIndices = entity.keyIndices
        integerKey = keyIndices.count == 1 && entity.attributes[keyIndices[0]].type == .integer ? keyIndices[0] : nil
    }

    /// Keys (values of the entity's key attributes, in key order) a page brought.
    func saw(_ keys: [[StoreValue]]) {
        guard !keys.isEmpty else { return }
        if integerKey != nil {
            var integers: [Int64] = []
            var others: [[StoreValue]] = []
            for key in keys {
                if case .integer(let value)? = key.first { integers.append(value) } else { others.append(key) }
            }
            saw(integers: integers)
            if !others.isEmpty { seen.withLock { $0.formUnion(others) } }
            return
        }
        seen.withLock { $0.formUnion(keys) }
    }

    /// One-integer keys a page brought (`integerKey`).
    func saw(integers: [Int64]) {
        guard !integers.isEmpty else { return }
        seenIntegers.withLock { $0.append(contentsOf: integers) }
    }

    /// Deletes the rows of the entity whose key was not seen, in a new private
    /// child context of `container`'s view context saved into the view context;
    /// returns how many rows it deleted.
    ///
    /// - Throws: a store error from reading the table or from the save.
    func sweep(in container: PersistentContainer) throws -> Int {
        let seen = seen.withLock { $0 }
        var integers = seenIntegers.withLock { keys in
            defer { keys = [] }
            return keys
        }
        integers.sort()
        let keyIndices = entity.keyIndices
        let integerKey = integerKey
        let context = container.newBackgroundContext()
        context.name = "\(entity.name).replace"
        return try context.performAndWait { () throws -> Int in
            var doomed: [Int64] = []
            try context.enumerateRows(FetchRequest(entityName: entity.name)) { primaryKey, values in
                if let integerKey, case .integer(let key) = values[integerKey] {
                    if !Self.contains(integers, key) && (seen.isEmpty || !seen.contains([.integer(key)])) { doomed.append(primaryKey) }
                    return
                }
                if !seen.contains(keyIndices.map { values[$0] }) { doomed.append(primaryKey) }
            }
            context.deleteRows(entity: entity.name, primaryKeys: doomed)
            try context.save()
            return doomed.count
        }
    }

    /// Whether the sorted `keys` hold `key` (binary search).
    private static func contains(_ keys: [Int64], _ key: Int64) -> Bool {
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key
    }
}
