import Foundation

/// The text forms a store keeps a history change's details in (the updated attribute
/// names, a deleted object's key values) and how they read back, shared by the stores.
package enum HistoryText {
    /// The updated names as a JSON array (`.null` when none).
    package static func updated(_ change: HistoryRecord.Change) -> StoreValue {
        change.updated.isEmpty ? .null : .text(json(change.updated))
    }

    /// The deleted key values as a JSON object (`.null` when none).
    package static func deletedKey(_ change: HistoryRecord.Change) -> StoreValue {
        change.deletedKey.map { .text(json($0)) } ?? .null
    }

    /// A change read back from its stored columns; nil when they are not a change.
    package static func change(entity: String, primaryKey: Int64, type: String, updated: StoreValue, deletedKey: StoreValue,
                               model: ManagedObjectModel, storeIdentifier: String) -> HistoryChange? {
        guard let changeType = HistoryChange.ChangeType(rawValue: type) else { return nil }
        var names: Set<String> = []
        if case .text(let text) = updated, let decoded = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) { names = Set(decoded) }
        var key: [String: Any]?
        if case .text(let text) = deletedKey { key = keyValues(text, entity: model.entitiesByName[entity]) }
        return HistoryChange(objectID: ObjectID(entityName: entity, primaryKey: primaryKey, storeIdentifier: storeIdentifier),
                             entityName: entity, changeType: changeType, updatedProperties: names, deletedKey: key)
    }

    static func json(_ names: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(names)) ?? Data("[]".utf8), as: UTF8.self)  // [String] always encodes
    }

    /// Key values as JSON: numbers, strings, null (a double as its shortest text).
    static func json(_ values: [String: StoreValue]) -> String {
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
    static func keyValues(_ text: String, entity: EntityDescription?) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return [:] }
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
