import Foundation
import SwellCSV
import SwellContexts

/// A delta export (`changes: since_last`, README "Delta exports"): the rows inserted,
/// updated or deleted since the export last succeeded, read from the store's history,
/// after a first column `_change`; a deleted row carries its key columns only. The first
/// run exports every row as an insert. The position (a history token) is kept in the
/// store only once the file is in place, so a failed export sends the same changes again.
///
/// The file is for a consumer that keeps rows by key and applies it in order: `insert` and
/// `update` store the row under its key, `delete` drops the key if held. So:
/// - a key a consumer may hold and that no longer names a matching row is deleted: the
///   object was deleted, its key changed, or it stopped matching the export's `where`;
/// - deletions come first, so a key dropped and then stored again (by another object) ends
///   up held;
/// - a row whose key-path columns read objects that changed is an update too.
extension ExportRun {
    /// Where the export's position is kept (`swell_state`).
    static func positionKey(_ export: String) -> String { "export.\(export).history_token" }

    /// Net changes of the export's entity since `after`: what one object went through,
    /// folded (an insert then an update is an insert; an insert then a delete, nothing).
    struct NetChanges {
        enum Change { case insert, update, delete }
        var byKey: [Int64: Change] = [:]
        var ids: [Int64: ObjectID] = [:]
        /// The key a consumer holds an object under where it may no longer be the object's
        /// key: its key before its first key change or deletion in the window (objects
        /// inserted in the window are held under no older key).
        var heldKeys: [Int64: [String: Any]] = [:]
        /// The objects that changed, by entity, the export's own included (for key paths,
        /// which may lead back to it: `parent.title`).
        var related: [String: Set<Int64>] = [:]

        init(_ transactions: [HistoryTransaction], entity: String) {
            for transaction in transactions {
                for change in transaction.changes {
                    let key = change.objectID.primaryKey
                    related[change.entityName, default: []].insert(key)
                    guard change.entityName == entity else { continue }
                    ids[key] = change.objectID
                    switch change.changeType {
                    case .insert:
                        // Gone and back (an integer key as the ID): the consumer may hold it.
                        byKey[key] = byKey[key] == .delete ? .update : .insert
                    case .update:
                        guard byKey[key] != .insert else { continue }
                        byKey[key] = .update
                        if heldKeys[key] == nil, let previous = change.previousKey { heldKeys[key] = previous }
                    case .delete:
                        if byKey[key] == .insert {
                            byKey[key] = nil
                        } else {
                            byKey[key] = .delete
                            if heldKeys[key] == nil { heldKeys[key] = change.deletedKey ?? [:] }
                        }
                    }
                }
            }
        }
    }

    /// Writes the delta; returns the report and the position to keep once the file is in place.
    func runChanges(in context: ManagedObjectContext, output: CSVOutput, writer: CSVWriter) throws -> HistoryToken? {
        let (columns, keyPaths) = try self.columns(in: context)
        if export.header { try writer.writeHeader(["_change"] + export.columns.map(\.name)) }
        let dates = DateWriter(formats: export.columns.map(\.format))
        let previous = try context.storeMetadata(forKey: Self.positionKey(export.name)).flatMap(Int64.init).map(HistoryToken.init(value:))
        guard let previous else {
            // The first run: every row, as of a position read before the rows (a change after it
            // comes next time). With the history purged to nothing, the purge's bound is the position.
            let purged = try context.historyPurgedBefore().map { $0.value - 1 } ?? 0
            let position = try context.lastHistoryToken().map { HistoryToken(value: max($0.value, purged)) } ?? HistoryToken(value: purged)
            var rows = 0
            try BulkSession(context).enumerateRowCursors(request, keyPaths: keyPaths) { row in
                try checkCancelled(&rows)
                try writer.writeValueField("insert")
                for column in columns { try Self.write(row, column, dates: dates, to: writer) }
                try writer.endRow()
            }
            if let interrupted = cancellation.error { throw interrupted }
            return position
        }
        let transactions = try context.fetchHistory(after: previous)
        // Read after the history: a purge in between is seen.
        if let purged = try context.historyPurgedBefore(), previous.value + 1 < purged.value {
            throw PipelineError(.cannotCreate, "export \(export.name): its position (history token \(previous.value)) is older than the "
                                + "store's history, purged before token \(purged.value): the changes since cannot be listed. Give the "
                                + "export a new name to start again from every row as insert")
        }
        let changes = NetChanges(transactions, entity: entity.name)
        let stored = try BulkSession(context).entity(named: entity.name)
        let width = stored.attributes.count + keyPaths.count

        func writeDelete(primaryKey: Int64, key: [String: StoreValue]) throws {
            var values = [StoreValue](repeating: .null, count: width)
            for (index, attribute) in entity.attributes.enumerated() { values[index] = key[attribute.name] ?? .null }
            try writer.writeValueField("delete")
            for column in columns { try Self.write(StoreRowCursor(primaryKey: primaryKey, values: values), column, dates: dates, to: writer) }
            try writer.endRow()
        }

        // Keys a consumer holds that no longer name the object: deleted, or changed since.
        for key in changes.heldKeys.keys.sorted() {
            guard let held = changes.heldKeys[key] else { continue }
            let heldValues = keyValues(held)
            if changes.byKey[key] != .delete, let id = changes.ids[key], let current = try existingObject(id, in: context),
               keyValues(entity.key.reduce(into: [String: Any]()) { $0[$1] = current.value(forKey: $1) }) == heldValues {
                continue   // back under the same key, or a key set to what it was
            }
            try writeDelete(primaryKey: key, key: heldValues)
        }

        // A `where` that reads through a relationship (`maker.name == 'Acme'`) moves rows in and
        // out when the objects it reads change: then every matching row is listed and every
        // other row deleted (which rows moved is not followed).
        let whereMoves = try !BulkSession(context).predicatePathEntities(request).isDisjoint(with: changes.related.keys)
        let related = whereMoves ? .all : try relatedRows(changes, stored: stored, keyPaths: keyPaths, in: context)
        guard !changes.byKey.isEmpty || related != .none else { return transactions.last?.token ?? previous }
        var listed: Set<Int64> = []
        var rows = 0
        try BulkSession(context).enumerateRowCursors(request, keyPaths: keyPaths) { row in
            try checkCancelled(&rows)
            let change: String
            switch changes.byKey[row.primaryKey] {
            case .insert?: change = "insert"
            case .update?: change = "update"
            case .delete?: return
            case nil:
                guard related.contains(row) else { return }
                change = "update"
            }
            listed.insert(row.primaryKey)
            try writer.writeValueField(change)
            for column in columns { try Self.write(row, column, dates: dates, to: writer) }
            try writer.endRow()
        }
        // Updated rows that no longer match `where`: a consumer may hold them.
        let unlisted = changes.byKey.filter { $0.value == .update && !listed.contains($0.key) }
        if !unlisted.isEmpty || whereMoves {
            var all = FetchRequest(entityName: entity.name)
            all.sortDescriptors = request.sortDescriptors
            let keyIndices = stored.keyIndices
            try BulkSession(context).enumerateRowCursors(all) { row in
                guard whereMoves ? !listed.contains(row.primaryKey) && changes.byKey[row.primaryKey] != .insert
                                 : unlisted[row.primaryKey] != nil else { return }
                var key: [String: StoreValue] = [:]
                for index in keyIndices { key[stored.attributes[index].name] = row.value(index) }
                try writeDelete(primaryKey: row.primaryKey, key: key)
            }
        }
        if let interrupted = cancellation.error { throw interrupted }
        return transactions.last?.token ?? previous
    }

    /// The object, or nil when it is gone (its key is then deleted); any other store error is thrown.
    private func existingObject(_ id: ObjectID, in context: ManagedObjectContext) throws -> ManagedObject? {
        do {
            return try context.existingObject(with: id)
        } catch StoreError.Kind.objectNotFound {
            return nil
        }
    }

    /// Key values (`HistoryChange.deletedKey`'s form, or an object's) as stored values, to compare and write.
    private func keyValues(_ values: [String: Any]) -> [String: StoreValue] {
        var result: [String: StoreValue] = [:]
        for attribute in entity.attributes where entity.key.contains(attribute.name) {
            result[attribute.name] = StoreValue(swiftValue: values[attribute.name], for: attribute.type) ?? .null
        }
        return result
    }

    /// Rows listed because objects their key-path columns read changed.
    enum RelatedRows: Equatable {
        case none
        /// Every row: a path goes through more than one relationship or a to-many, and an
        /// entity on it changed (which rows reach the change is not followed).
        case all
        /// Rows whose to-one column (by index) holds one of these IDs.
        case referencing([Int: Set<Int64>])

        func contains(_ row: StoreRowCursor) -> Bool {
            switch self {
            case .none: return false
            case .all: return true
            case .referencing(let byColumn):
                return byColumn.contains { index, ids in
                    row.withField(index) { field in if case .integer(let id) = field { ids.contains(id) } else { false } }
                }
            }
        }
    }

    private func relatedRows(_ changes: NetChanges, stored: EntityDescription, keyPaths: [KeyPathColumn],
                             in context: ManagedObjectContext) throws -> RelatedRows {
        guard !changes.related.isEmpty else { return .none }
        var byColumn: [Int: Set<Int64>] = [:]
        for keyPath in keyPaths {
            var entity = stored
            var passed: [String] = []
            for name in keyPath.path.dropLast() {
                guard let relationship = entity.relationship(named: name) else { break }
                entity = try BulkSession(context).entity(named: relationship.destination)
                passed.append(entity.name)
            }
            guard passed.contains(where: { changes.related[$0] != nil }) else { continue }
            guard keyPath.path.count == 2, let relationship = stored.relationship(named: keyPath.path[0]), !relationship.isToMany,
                  let column = stored.attributes.firstIndex(where: { $0.name == relationship.name && $0.destination != nil }),
                  column < stored.columnCount else { return .all }
            byColumn[column, default: []].formUnion(changes.related[relationship.destination] ?? [])
        }
        return byColumn.isEmpty ? .none : .referencing(byColumn)
    }
}
