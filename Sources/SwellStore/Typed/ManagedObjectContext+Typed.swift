import Foundation
import SwellContexts
import SwellStoreCore

/// Typed entities in a context: inserting, fetching and looking up `@Entity` objects.
extension ManagedObjectContext {
    /// Inserts a typed object made with its own initialiser, and the typed objects its
    /// relationships point to that are in no context yet. Inserting an object of another
    /// context is a programming error.
    public func insert<T: PersistentModel>(_ model: T) {
        assertOnQueue("insert a \(T.entityDescription.name)")
        _ = model._$backing.managedObject(for: model, in: self)
    }

    /// Marks a typed object deleted (one never inserted is just dropped).
    public func delete<T: PersistentModel>(_ model: T) {
        guard let object = model.managedObject else { return }
        delete(object)
    }

    /// The typed objects a descriptor matches, as `fetch(_:)` with its `FetchRequest` finds them.
    ///
    /// - Throws: `StoreError.invalidPredicate` when the predicate uses an operation
    ///   Swell cannot compile (the message names it), and whatever the fetch throws.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let objects = try fetch(descriptor.fetchRequest())
        return objects.map(T.model(for:))
    }

    /// How many objects a descriptor matches.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try count(for: descriptor.fetchRequest())
    }

    /// How many objects a descriptor matches: `fetchCount(_:)` under Core Data's name
    /// (`count(for:)`), the number `fetch` returns for it (Store guarantees 15).
    public func count<T: PersistentModel>(for descriptor: FetchDescriptor<T>) throws -> Int {
        try count(for: descriptor.fetchRequest())
    }

    /// The IDs of the objects a descriptor matches.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [ObjectID] {
        try fetchObjectIDs(descriptor.fetchRequest())
    }

    /// The typed object for an ID of `T`'s entity (see `object(with:)`). An ID of another
    /// entity is a programming error; `existingObject(with:as:)` throws instead.
    public func object<T: PersistentModel>(with id: ObjectID, as type: T.Type = T.self) -> T {
        precondition(id.entityName == T.entityDescription.name,
                     "SwellStore: \(id) is an ID of \(id.entityName), not of \(T.entityDescription.name)")
        return T.model(for: object(with: id))
    }

    /// The typed object for an ID, or `StoreError.objectNotFound` when it does not exist in
    /// this context's view or is of another entity than `T`.
    public func existingObject<T: PersistentModel>(with id: ObjectID, as type: T.Type = T.self) throws -> T {
        guard id.entityName == T.entityDescription.name else { throw StoreError.objectNotFound(id) }
        return T.model(for: try existingObject(with: id))
    }
}

extension ManagedObjectModel {
    /// A model of `@Entity` classes, mixed with described entities if you like:
    /// `ManagedObjectModel(entities: [JournalEntry.self, Spot.self])`, or
    /// `ManagedObjectModel(entities: [JournalEntry.self, Spot.self, noteEntity])`, in that order.
    /// Each element is an `@Entity` class or an `EntityDescription`; anything else is a
    /// programming error.
    ///
    /// A macro sees one class at a time, so inverses are completed here: a relationship
    /// another one names as its inverse names that one back, and a relationship with no inverse
    /// is paired with the one relationship of its destination that leads back without one (when
    /// there is exactly one on each side). One left without is a relationship with no inverse.
    /// (A list of descriptions alone, `JournalEntry.entityDescription` included, is taken as
    /// written: there both sides name their inverse.)
    @_disfavoredOverload
    public init(entities: [Any], described: [EntityDescription] = []) {
        var descriptions: [EntityDescription] = []
        var typed: Set<String> = []
        for element in entities {
            switch element {
            case let type as any PersistentModel.Type:
                descriptions.append(type.entityDescription)
                typed.insert(type.entityDescription.name)
            case let description as EntityDescription:
                descriptions.append(description)
            default:
                preconditionFailure("SwellStore: a model's entities are @Entity classes or EntityDescription values, "
                    + "not \(type(of: element))")
            }
        }
        descriptions += described
        InversePairing.complete(&descriptions, typed: typed)
        self.init(entities: descriptions)
    }
}

/// Completes the inverses of typed entities' relationships (see `ManagedObjectModel(entities:described:)`).
enum InversePairing {
    static func complete(_ entities: inout [EntityDescription], typed: Set<String>) {
        let index = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A named inverse whose other side names none: name it back.
        for entity in entities where typed.contains(entity.name) {
            for relationship in entity.relationships {
                guard let inverse = relationship.inverse, let other = index[relationship.destination],
                      let back = entities[other].relationships.firstIndex(where: { $0.name == inverse }),
                      entities[other].relationships[back].inverse == nil,
                      entities[other].relationships[back].destination == entity.name else { continue }
                entities[other].relationships[back].inverse = relationship.name
            }
        }
        // No inverse on either side: pair the one relationship each way.
        for (position, entity) in entities.enumerated() where typed.contains(entity.name) {
            for (slot, relationship) in entity.relationships.enumerated() where relationship.inverse == nil {
                guard relationship.destination != entity.name, let other = index[relationship.destination] else { continue }
                let here = entities[position].relationships.filter { $0.destination == relationship.destination && $0.inverse == nil }
                let there = entities[other].relationships.indices.filter {
                    entities[other].relationships[$0].destination == entity.name && entities[other].relationships[$0].inverse == nil
                }
                guard here.count == 1, there.count == 1, let back = there.first else { continue }
                entities[position].relationships[slot].inverse = entities[other].relationships[back].name
                entities[other].relationships[back].inverse = relationship.name
            }
        }
    }
}
