import Foundation

/// The text forms a store keeps a history change's details in (the updated attribute
/// names, a deleted object's key values) and how they read back, shared by the stores.
package enum HistoryText {
    /// The table of transactions (one row per transaction; its `id` is the token), in every store.
    package static let transactionsTable = "swell_history_transactions"
    /// The table of changes (one row per entity, change type and set of updated names).
    package static let changesTable = "swell_history_changes"
    /// The columns of a change row, in the order `changeRow` gives its values and
    /// `transactions(changes:transactions:…)` reads them back.
    package static let changeColumns = "transaction_id, entity, change_type, updated, object_pks, deleted_keys"
    /// The columns of a transaction row, in the order `transaction(_:changes:)` reads them.
    package static let transactionColumns = "id, timestamp, author, context_name"
    /// How many primary keys one key-value query asks for at a time.
    package static let keyChunk = 10_000

    /// The values of one change row of transaction `token` (`changeColumns`' order).
    package static func changeRow(_ group: HistoryRecord.Group, token: Int64) -> [StoreValue] {
        [.integer(token), .text(group.entity), .text(group.type.rawValue), updated(group), keys(group), deletedKeys(group)]
    }

    /// The values of a transaction row without its `id`: timestamp, author, context name.
    package static func transactionRow(_ record: HistoryRecord) -> [StoreValue] {
        [.real(record.timestamp.timeIntervalSince1970), record.author.map(StoreValue.text) ?? .null,
         record.contextName.map(StoreValue.text) ?? .null]
    }

    /// The key values of `rows` (for deleted objects' history), by row: `select` reads, for
    /// an entity with a uniqueness constraint and up to `keyChunk` of its primary keys, rows
    /// of `[primary key, key values…]` in the constraint's order.
    package static func keyValues(
        of rows: [RowReference], model: ManagedObjectModel,
        select: (_ entity: EntityDescription, _ primaryKeys: ArraySlice<Int64>) throws -> [[StoreValue]]
    ) throws -> [RowReference: [String: StoreValue]] {
        var result: [RowReference: [String: StoreValue]] = [:]
        for (entityName, group) in Dictionary(grouping: rows, by: \.entity) {
            guard let entity = model.entitiesByName[entityName], !entity.uniquenessConstraint.isEmpty else { continue }
            let keys = group.map(\.primaryKey)
            for start in stride(from: 0, to: keys.count, by: keyChunk) {
                for row in try select(entity, keys[start..<min(keys.count, start + keyChunk)]) {
                    guard case .integer(let id)? = row.first else { continue }
                    var values: [String: StoreValue] = [:]
                    for (index, name) in entity.uniquenessConstraint.enumerated() { values[name] = row[index + 1] }
                    result[RowReference(entity: entityName, primaryKey: id)] = values
                }
            }
        }
        return result
    }

    /// The transactions read back from their rows (`transactionColumns`, in token order) and
    /// their changes' rows (`changeColumns`, in token and then insertion order).
    package static func transactions(changes changeRows: [[StoreValue]], transactions transactionRows: [[StoreValue]],
                                     model: ManagedObjectModel, storeIdentifier: String) -> [HistoryTransaction] {
        var changesByToken: [Int64: [HistoryChange]] = [:]
        for row in changeRows {
            guard row.count >= 6, case .integer(let id) = row[0], case .text(let entity) = row[1], case .text(let type) = row[2] else { continue }
            changesByToken[id, default: []] += changes(entity: entity, type: type, updated: row[3], keys: row[4], deletedKeys: row[5],
                                                       model: model, storeIdentifier: storeIdentifier)
        }
        return transactionRows.compactMap { row in
            guard case .integer(let id)? = row.first else { return nil }
            return transaction(row, changes: changesByToken[id] ?? [])
        }
    }

    /// The updated names as a JSON array (`.null` when none).
    package static func updated(_ group: HistoryRecord.Group) -> StoreValue {
        group.updated.isEmpty ? .null : .text(json(group.updated))
    }

    /// The primary keys as ascending ranges, `1..5000,5003,5010..5020` (keys may be negative:
    /// an integer key can be its object's ID).
    package static func keys(_ group: HistoryRecord.Group) -> StoreValue {
        var text = ""
        var index = 0
        let keys = group.primaryKeys
        while index < keys.count {
            var end = index
            while end + 1 < keys.count, keys[end + 1] == keys[end] &+ 1 { end += 1 }
            if !text.isEmpty { text += "," }
            text += end == index ? "\(keys[index])" : "\(keys[index])..\(keys[end])"
            index = end + 1
        }
        return .text(text)
    }

    /// The deleted objects' key values as a JSON array of objects (`.null` when none).
    package static func deletedKeys(_ group: HistoryRecord.Group) -> StoreValue {
        group.keysBefore.map { .text("[" + $0.map(json).joined(separator: ",") + "]") } ?? .null
    }

    /// A transaction read back from its stored row (`id, timestamp, author, context_name`)
    /// with its changes; nil when the row is not one.
    package static func transaction(_ row: [StoreValue], changes: [HistoryChange]) -> HistoryTransaction? {
        guard row.count >= 4, case .integer(let id) = row[0] else { return nil }
        let seconds: Double = switch row[1] { case .real(let value): value; case .integer(let value): Double(value); default: 0 }
        let author: String? = if case .text(let text) = row[2] { text } else { nil }
        let name: String? = if case .text(let text) = row[3] { text } else { nil }
        return HistoryTransaction(token: HistoryToken(value: id), timestamp: Date(timeIntervalSince1970: seconds), author: author,
                                  contextName: name, changes: changes)
    }

    /// The changes of one stored group, one per object; empty when the columns are not a group.
    package static func changes(entity: String, type: String, updated: StoreValue, keys: StoreValue, deletedKeys: StoreValue,
                                model: ManagedObjectModel, storeIdentifier: String) -> [HistoryChange] {
        guard let changeType = HistoryChange.ChangeType(rawValue: type), case .text(let keyText) = keys else { return [] }
        var names: Set<String> = []
        // The stores write these texts themselves (`updated`, `deletedKeys`); one another hand
        // mangled reads as no names or no key values rather than losing the whole history.
        if case .text(let text) = updated, let decoded = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) { names = Set(decoded) }
        var deleted: [[String: Any]] = []
        if case .text(let text) = deletedKeys, let objects = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] {
            deleted = objects.map { keyValues($0, entity: model.entitiesByName[entity]) }
        }
        var changes: [HistoryChange] = []
        for range in keyText.split(separator: ",") {
            let dots = range.range(of: "..")
            guard let low = Int64(dots.map { range[..<$0.lowerBound] } ?? range),
                  let high = dots.map({ Int64(range[$0.upperBound...]) }) ?? low, low <= high else { continue }
            for key in low...high {
                let before: [String: Any]? = changes.count < deleted.count ? deleted[changes.count] : nil
                let deletedKey: [String: Any]? = changeType == .delete ? before ?? [:] : nil
                let previousKey: [String: Any]? = changeType == .update && before?.isEmpty == false ? before : nil
                changes.append(HistoryChange(objectID: ObjectID(entityName: entity, primaryKey: key, storeIdentifier: storeIdentifier),
                                             entityName: entity, changeType: changeType, updatedProperties: names,
                                             deletedKey: deletedKey, previousKey: previousKey))
            }
        }
        return changes
    }

    package static func json(_ names: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(names)) ?? Data("[]".utf8), as: UTF8.self)  // [String] always encodes
    }

    /// Key values as JSON: numbers, strings, null (a double as its shortest text).
    package static func json(_ values: [String: StoreValue]) -> String {
        let members = values.sorted { $0.key < $1.key }.map { name, value -> String in
            let encoded: String = switch value {
            case .null: "null"
            case .integer(let int): String(int)
            case .real(let double): double.isFinite ? "\(double)" : "null"
            case .text(let text): String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)  // a String always encodes
            }
            return "\(json([name]).dropFirst().dropLast()):\(encoded)"
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Key values read back as Swift values of their attributes' types.
    package static func keyValues(_ object: [String: Any], entity: EntityDescription?) -> [String: Any] {
        var values: [String: Any] = [:]
        for (name, raw) in object {
            let type = entity?.attributes.first { $0.name == name }?.type ?? .string
            let stored: StoreValue = switch raw {
            case let text as String: .text(text)
            case let number as NSNumber where type == .integer || type == .boolean: .integer(number.int64Value)
            case let number as NSNumber: .real(number.doubleValue)
            default: .null
            }
            if let value = stored.swiftValue(for: type) { values[name] = value }
        }
        return values
    }
}
