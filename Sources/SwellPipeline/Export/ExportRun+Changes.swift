import Foundation
import SwellCSV
import SwellStore

/// A delta export (`changes: since_last`, README "Delta exports"): the rows inserted,
/// updated or deleted since the export last succeeded, read from the store's history,
/// after a first column `_change`; a deleted row carries its key columns only. The first
/// run exports every row as an insert. The position (a history token) is kept in the
/// store only once the file is in place, so a failed export sends the same changes again.
extension ExportRun {
    /// Where the export's position is kept (`swell_state`).
    static func positionKey(_ export: String) -> String { "export.\(export).history_token" }

    /// Net changes of the export's entity since `after`: what one object went through,
    /// folded (an insert then an update is an insert; an insert then a delete, nothing).
    struct NetChanges {
        enum Change { case insert, update, delete([String: Any]?) }
        var byKey: [Int64: Change] = [:]
        /// The deleted objects, in the order they went.
        var deletions: [Int64] = []

        init(_ transactions: [HistoryTransaction], entity: String) {
            for transaction in transactions {
                for change in transaction.changes where change.entityName == entity {
                    let key = change.objectID.primaryKey
                    switch (byKey[key], change.changeType) {
                    case (.delete?, .insert): byKey[key] = .update   // gone and back (an integer key as the ID): the consumer has it
                    case (nil, .insert): byKey[key] = .insert
                    case (.insert?, .update): break
                    case (_, .update): byKey[key] = .update
                    case (.insert?, .delete): byKey[key] = nil
                    case (_, .delete): byKey[key] = .delete(change.deletedKey)
                    case (_, .insert): byKey[key] = .insert
                    }
                }
            }
            deletions = byKey.compactMap { key, change in if case .delete = change { key } else { nil } }.sorted()
        }
    }

    /// Writes the delta; returns the report and the position to keep once the file is in place.
    func runChanges(in context: ManagedObjectContext, output: CSVOutput, writer: CSVWriter) throws -> HistoryToken? {
        let (columns, keyPaths) = try self.columns(in: context)
        if export.header { try writer.writeHeader(["_change"] + export.columns.map(\.name)) }
        let dates = DateWriter(formats: export.columns.map(\.format))
        let previous = try context.storeMetadata(forKey: Self.positionKey(export.name)).flatMap(Int64.init).map(HistoryToken.init(value:))
        guard let previous else {
            // The first run: every row, as of a position read before the rows (a change after it comes next time).
            let position = try context.lastHistoryToken()
            try context.enumerateRowCursors(request, keyPaths: keyPaths) { row in
                try writer.writeValueField("insert")
                for column in columns { try Self.write(row, column, dates: dates, to: writer) }
                try writer.endRow()
            }
            return position ?? HistoryToken(value: 0)
        }
        let transactions = try context.fetchHistory(after: previous)
        let changes = NetChanges(transactions, entity: entity.name)
        // Deletions first: a key deleted and then stored again (as another object) reads
        // `delete` then `insert`, which a consumer applying the file in order gets right.
        let width = try context.entityDescription(named: entity.name).attributes.count + keyPaths.count
        for key in changes.deletions {
            guard case .delete(let deletedKey)? = changes.byKey[key] else { continue }
            var values = [StoreValue](repeating: .null, count: width)
            for (index, attribute) in entity.attributes.enumerated() where entity.key.contains(attribute.name) {
                values[index] = StoreValue(swiftValue: deletedKey?[attribute.name], for: attribute.type) ?? .null
            }
            let row = StoreRowCursor(primaryKey: key, values: values)
            try writer.writeValueField("delete")
            for column in columns { try Self.write(row, column, dates: dates, to: writer) }
            try writer.endRow()
        }
        if !changes.byKey.isEmpty {
            try context.enumerateRowCursors(request, keyPaths: keyPaths) { row in
                let change: String
                switch changes.byKey[row.primaryKey] {
                case .insert?: change = "insert"
                case .update?: change = "update"
                default: return
                }
                try writer.writeValueField(change)
                for column in columns { try Self.write(row, column, dates: dates, to: writer) }
                try writer.endRow()
            }
        }
        return transactions.last?.token ?? previous
    }
}
