import Foundation
import SwellContexts
import SwellLocks

/// Replace mode's deletions (Pipeline file reference, `mode: replace`): collects the
/// keys the pages brought, and once every page arrived deletes the entity's
/// rows whose key none of them brought.
///
/// A key that is one integer attribute is kept as an `Int64` in one array (8 bytes
/// a record: a million records' keys in 8 MB), sorted once for the sweep; a key that
/// is one string attribute as its UTF-8 bytes in one arena (`SeenTexts`); other keys as
/// values in a set. The sweep reads the table once (keys and primary keys, no objects),
/// looks each key up, and deletes the unseen rows by primary key, without reading them
/// again. The deletions are saved into the view context; the writer's last save writes them.
///
/// `Sendable`: the keys seen are behind `LockedValue`s (workers add theirs concurrently).
final class ReplaceSweeper: Sendable {
    private let entity: EntityDescription
    /// The key's attribute index, when the key is one integer attribute.
    let integerKey: Int?
    /// The key's attribute index, when the key is one string attribute.
    private let textKey: Int?
    private let seenIntegers = LockedValue<[Int64]>([])
    private let seenTexts = LockedValue(SeenTexts())
    private let seen = LockedValue<Set<[StoreValue]>>([])
    /// Where the keys seen go too, for the source's position (nil: no position is kept).
    private let collector: KeyChunkCollector?

    init(entity: EntityDescription, collector: KeyChunkCollector? = nil) {
        self.entity = entity
        self.collector = collector
        let keyIndices = entity.keyIndices
        let single = keyIndices.count == 1 ? keyIndices[0] : nil
        integerKey = single.flatMap { entity.attributes[$0].type == .integer ? $0 : nil }
        textKey = single.flatMap { entity.attributes[$0].type == .string ? $0 : nil }
    }

    /// Keys (values of the entity's key attributes, in key order) a page brought.
    func saw(_ keys: [[StoreValue]]) {
        guard !keys.isEmpty else { return }
        collector?.add(keys)
        record(keys)
    }

    /// The keys an earlier run of the source saved before it stopped (its position's chunks).
    func sawEarlier(_ chunk: KeyChunk) {
        seenIntegers.withLock { $0.append(contentsOf: chunk.integers) }
        record(chunk.texts.map { [.text($0)] } + chunk.others)
    }

    private func record(_ keys: [[StoreValue]]) {
        guard !keys.isEmpty else { return }
        if textKey != nil {
            var others: [[StoreValue]] = []
            seenTexts.withLock { texts in
                for key in keys {
                    if case .text(let text)? = key.first { texts.append(text) } else { others.append(key) }
                }
            }
            if !others.isEmpty { seen.withLock { $0.formUnion(others) } }
            return
        }
        if integerKey != nil {
            var integers: [Int64] = []
            var others: [[StoreValue]] = []
            for key in keys {
                if case .integer(let value)? = key.first { integers.append(value) } else { others.append(key) }
            }
            if !integers.isEmpty { seenIntegers.withLock { $0.append(contentsOf: integers) } }
            if !others.isEmpty { seen.withLock { $0.formUnion(others) } }
            return
        }
        seen.withLock { $0.formUnion(keys) }
    }

    /// One-integer keys a page brought (`integerKey`).
    func saw(integers: [Int64]) {
        guard !integers.isEmpty else { return }
        collector?.add(integers: integers)
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
        var texts = seenTexts.withLock { texts in
            defer { texts = SeenTexts() }
            return texts
        }
        texts.sort()
        let keyIndices = entity.keyIndices
        let integerKey = integerKey, textKey = textKey
        let context = container.newBackgroundContext()
        context.name = "\(entity.name).replace"
        return try context.performAndWait { () throws -> Int in
            var doomed: [Int64] = []
            try BulkSession(context).enumerateRows(FetchRequest(entityName: entity.name)) { primaryKey, values in
                if let integerKey, case .integer(let key) = values[integerKey] {
                    if !Self.contains(integers, key) && (seen.isEmpty || !seen.contains([.integer(key)])) { doomed.append(primaryKey) }
                    return
                }
                if let textKey, case .text(let key) = values[textKey] {
                    if !texts.contains(key) && (seen.isEmpty || !seen.contains([.text(key)])) { doomed.append(primaryKey) }
                    return
                }
                if !seen.contains(keyIndices.map { values[$0] }) { doomed.append(primaryKey) }
            }
            BulkSession(context).deleteRows(entity: entity.name, primaryKeys: doomed)
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

/// One-string keys as UTF-8 bytes in one arena (no `String` a key): about the key's
/// length plus 8 bytes a record. `sort()` orders them by their bytes once; `contains`
/// then finds a key by binary search. A key that is not ASCII is kept in NFC, and looked
/// for in NFC: two keys are then the same exactly when Swift's `String` says so (canonical
/// equivalence, as the upsert matched them: a stored "é" is the key an "e" + U+0301 brings).
struct SeenTexts: Sendable {
    private var bytes: [UInt8] = []
    /// Where key `i` ends in `bytes` (it starts where key `i - 1` ends).
    private var ends: [Int] = []
    /// Key numbers in byte order, once sorted.
    private var order: [Int32] = []

    mutating func append(_ key: String) {
        bytes.append(contentsOf: Self.canonical(key).utf8)
        ends.append(bytes.count)
    }

    /// The key as compared: itself when ASCII, else its NFC form.
    private static func canonical(_ key: String) -> String {
        key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
    }

    private func range(_ key: Int) -> Range<Int> {
        Self.range(key, ends)
    }

    private static func range(_ key: Int, _ ends: [Int]) -> Range<Int> {
        (key == 0 ? 0 : ends[key - 1])..<ends[key]
    }

    /// Orders the keys by their bytes (call once, before `contains`).
    mutating func sort() {
        let bytes = self.bytes, ends = self.ends
        var sorted = (0..<Int32(ends.count)).map { $0 }
        sorted.sort { a, b in bytes[Self.range(Int(a), ends)].lexicographicallyPrecedes(bytes[Self.range(Int(b), ends)]) }
        order = sorted
    }

    /// Whether `key` was appended (after `sort()`).
    func contains(_ key: String) -> Bool {
        var key = Self.canonical(key)
        return key.withUTF8 { wanted in
            var low = 0, high = order.count
            while low < high {
                let middle = (low + high) / 2
                if bytes[range(Int(order[middle]))].lexicographicallyPrecedes(wanted) { low = middle + 1 } else { high = middle }
            }
            return low < order.count && bytes[range(Int(order[low]))].elementsEqual(wanted)
        }
    }
}
