import Foundation
import SwellContexts
import SwellStoreCore

// Batch requests over `@Entity` classes: the same requests, named by the class, with columns
// found by key path. A key path is turned into its attribute's name once, when the column is
// made; the rows then take exactly the path a described entity's rows take.

extension BatchInsertRequest {
    /// A batch insert of rows of `T`, one dictionary per row keyed by property name.
    public convenience init<T: PersistentModel>(entity: T.Type, objects: [[String: Any]]) {
        self.init(entityName: T.entityDescription.name, objects: objects)
    }

    /// A batch insert of rows of `T` that `dictionaryHandler` fills one at a time (see
    /// `init(entityName:dictionaryHandler:)`).
    public convenience init<T: PersistentModel>(entity: T.Type, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.init(entityName: T.entityDescription.name, dictionaryHandler: dictionaryHandler)
    }

    /// A batch insert of rows of `T` given as columns (made with `BatchColumns.column(_:)`).
    public convenience init<T: PersistentModel>(entity: T.Type, columns: BatchColumns) {
        self.init(entityName: T.entityDescription.name, columns: columns)
    }
}

extension BatchUpdateRequest {
    /// A batch update of `T`'s rows; set `predicate` and `propertiesToUpdate`.
    public convenience init<T: PersistentModel>(entity: T.Type) {
        self.init(entityName: T.entityDescription.name)
    }
}

extension BatchDeleteRequest {
    /// A batch delete of the rows a typed descriptor matches (its limit and offset included).
    public convenience init<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws {
        self.init(fetchRequest: try descriptor.fetchRequest())
    }
}

extension BatchColumns {
    /// The column of an `@Entity` attribute, by key path: `columns.column(\JournalEntry.id)`.
    /// A key path that is not a stored attribute (a `@Transient` or computed property) is a
    /// programming error.
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Int>) -> IntegerColumn { integers(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Int?>) -> IntegerColumn { integers(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Double>) -> DoubleColumn { doubles(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Double?>) -> DoubleColumn { doubles(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Bool>) -> BooleanColumn { booleans(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Bool?>) -> BooleanColumn { booleans(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Date>) -> DateColumn { dates(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, Date?>) -> DateColumn { dates(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, String>) -> TextColumn { strings(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, String?>) -> TextColumn { strings(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, JSONText>) -> TextColumn { strings(Self.name(of: keyPath)) }
    public mutating func column<T: PersistentModel>(_ keyPath: KeyPath<T, JSONText?>) -> TextColumn { strings(Self.name(of: keyPath)) }

    private static func name<T: PersistentModel>(of keyPath: PartialKeyPath<T>) -> String {
        guard let name = T._$storedName(for: keyPath) else {
            preconditionFailure("SwellStore: \(keyPath) is not a stored attribute of \(T.entityDescription.name)")
        }
        return name
    }
}
