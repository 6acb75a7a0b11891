import Foundation
import SwellStore
import SwellStoreTestSupport

/// The parent's steps in the child ← parent variant: the root the writers are children of
/// edits, deletes and inserts entries (unsaved: what its children save against), saves them
/// and rolls back. Its children's saves land in it, resolved by the child's policy against
/// what the parent shows now (the model's `store`).
extension ConflictRun {
    func parentStep() throws -> [String] {
        guard let parent else { return [] }
        let shown = model.store.keys.sorted()
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<45:
            guard let key = pick(Bool.random(using: &random) ? Array(shown.prefix(3)) : shown) else { return [] }
            let name = pick(ConflictModel.attributes)!
            let value = model.store[key]?[name] != nil && Int.random(in: 0..<100, using: &random) < 15 ? nil : freshValue(nil)
            log.append("P: entry \(key).\(name) = \(value ?? "nil")")
            try parent.performAndWait { try parentEntry(key)?[name] = value }
            model.store[key]?[name] = value
        case 45..<55:
            guard let key = pick(shown) else { return [] }
            log.append("P: delete entry \(key)")
            try parent.performAndWait { if let entry = try parentEntry(key) { parent.delete(entry) } }
            model.store[key] = nil
        case 55..<65:
            parentInsert()
        case 65..<90:
            try parentSave()
        default:
            // Only when no row its children may hold would come back: an object a merge or a
            // refresh marked deleted stays so (statement 62 knows no resurrection).
            guard Set(disk.keys).isSubset(of: model.store.keys) else { return [] }
            log.append("P.rollback()")
            parent.performAndWait { parent.rollback() }
            model.store = disk
        }
        storeChanged = true
        return []
    }

    func parentInsert() {
        guard let parent else { return }
        let key = nextKey
        nextKey += 1
        var row = Row()
        for name in ConflictModel.attributes where Int.random(in: 0..<100, using: &random) < 70 { row[name] = freshValue(nil) }
        log.append("P: insert entry \(key) \(row)")
        parent.performAndWait {
            let entry = insertEntry(parent, id: key)
            for name in ConflictModel.attributes { entry[name] = row[name] }
            keys[entry.objectID] = key
        }
        model.store[key] = row
    }

    func parentSave() throws {
        guard let parent else { return }
        log.append("P.save()")
        try parent.performAndWait { try parent.save() }
        disk = model.store
        diskChanged = true
    }

    /// The parent's object of an entry, fetched by its key.
    private func parentEntry(_ key: Int) throws -> ManagedObject? {
        var request = FetchRequest(entityName: "JournalEntry")
        request.predicate = FetchPredicate(format: "id == %@", key)
        return try parent?.fetch(request).first
    }

    /// Every entry the parent shows (its unsaved changes over the store's rows, statement 13).
    func parentRows(_ parent: ManagedObjectContext) throws -> [Int: Row] {
        try parent.performAndWait {
            var rows: [Int: Row] = [:]
            for entry in try parent.fetch(FetchRequest(entityName: "JournalEntry")) { rows[entry["id"] as? Int ?? -1] = Self.row(of: entry) }
            return rows
        }
    }
}
