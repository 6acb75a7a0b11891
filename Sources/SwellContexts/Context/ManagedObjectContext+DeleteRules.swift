import Foundation
import SwellStoreCore

/// Delete rules (Store guarantees 31; required relationships are validation: `validateForSave`), applied by
/// every context's `save()` before its changes move, so they hold at every
/// level: a parent applies them again to deletes that children saved into it
/// (objects related only at the parent are then reached too).
extension ManagedObjectContext {
    /// Applies the delete rules of this level's deleted objects until nothing new is
    /// deleted: `cascade` deletes destinations, `nullify` clears inverse to-ones, `deny`
    /// throws while a destination remains, `noAction` does nothing. To-one relationships
    /// without an inverse that point at a deleted object are cleared, so no row names a
    /// row that is gone.
    /// Returns the refusals of `deny` relationships (the save then fails listing them with
    /// every validation failure).
    func applyDeleteRules(coordinator: PersistentStoreCoordinator) throws -> [ValidationFailure] {
        guard coordinator.hasRelationships else { return [] }
        var denied: [(failure: ValidationFailure, destinations: [ObjectID])] = []
        var done = Set<ObjectID>()
        while true {
            let deleted = level.withLock { level -> [ObjectID] in
                var ids: [ObjectID] = []
                for (name, changes) in level.unsegmented.entities {
                    for (primaryKey, row) in changes.rows where row.kind == .deleted {
                        ids.append(objectID(name, primaryKey))
                    }
                }
                return ids
            }.filter { !done.contains($0) }
            guard !deleted.isEmpty else {
                // A refusal stands only while a destination remains: another delete's cascade
                // may have taken them all, whichever was met first.
                return denied.filter { refusal in refusal.destinations.contains { !done.contains($0) } }.map(\.failure)
            }
            for id in deleted {
                done.insert(id)
                try applyDeleteRules(toDeleted: id, coordinator: coordinator, denied: &denied)
            }
        }
    }

    private func applyDeleteRules(toDeleted id: ObjectID, coordinator: PersistentStoreCoordinator,
                                  denied: inout [(failure: ValidationFailure, destinations: [ObjectID])]) throws {
        guard let entity = coordinator.entitiesByName[id.entityName] else { return }
        let incoming = coordinator.incomingWithoutInverse[id.entityName] ?? []
        guard !entity.relationships.isEmpty || !incoming.isEmpty else { return }
        let object = object(with: id)
        for relationship in entity.relationships {
            let destinations = destinations(of: object, relationship).filter { !$0.isDeleted }
            guard !destinations.isEmpty else { continue }
            switch relationship.deleteRule {
            case .deny:
                denied.append((ValidationFailure(object: id, key: relationship.name, value: .integer(Int64(destinations.count)),
                                                 rule: .deleteDenied, isRelationship: true), destinations.map(\.objectID)))
            case .cascade:
                for destination in destinations { delete(destination) }
            case .nullify:
                guard let inverse = relationship.inverse,
                      let inverseRelationship = coordinator.entitiesByName[relationship.destination]?.relationship(named: inverse) else { continue }
                for destination in destinations {
                    if inverseRelationship.isToMany {
                        destination.unlink(object, from: inverseRelationship, in: self)
                    } else {
                        clear(destination, toOne: inverse, pointingAt: id)
                    }
                }
            case .noAction:
                continue
            }
        }
        for (source, relationship) in incoming {
            guard let column = coordinator.attributeIndices[source]?[relationship],
                  let sourceEntity = coordinator.entitiesByName[source] else { continue }
            if let join = sourceEntity.attributes[column].join {
                for owner in try owners(in: join, column: column, linking: id.primaryKey) {
                    let referrer = self.object(with: objectID(source, owner))
                    if let description = sourceEntity.relationship(named: relationship) { referrer.unlink(object, from: description, in: self) }
                }
            } else {
                var request = FetchRequest(entityName: source)
                request.predicate = FetchPredicate(format: "%K == %@", relationship, id.primaryKey)
                for referrer in try fetch(request) { clear(referrer, toOne: relationship, pointingAt: id) }
            }
        }
    }

    /// The objects a relationship of `object` holds in this context.
    private func destinations(of object: ManagedObject, _ relationship: RelationshipDescription) -> [ManagedObject] {
        object.members(of: relationship)
    }

    /// Sets `object`'s to-one `name` to nil when it still names `id`.
    private func clear(_ object: ManagedObject, toOne name: String, pointingAt id: ObjectID) {
        guard let index = object.attributeIndex[name], object.entity.attributes[index].destination != nil,
              object.storeValue(at: index) == .integer(id.primaryKey) else { return }
        recordChange(of: object, attribute: index, to: .null)
    }

    /// Lists, among a save's updated objects, the destinations whose to-many changed
    /// because a saved to-one (its inverse) changed: the new destination, and the old one
    /// where this context had it loaded (Store guarantees 36).
    func noteInverseToManyChanges(of layer: ChangeLayer, in changes: inout ContextDidSaveChanges,
                                  coordinator: PersistentStoreCoordinator) {
        for (name, entityChanges) in layer.entities {
            guard let entity = coordinator.entitiesByName[name] else { continue }
            // To-ones whose inverse is a to-many, and join-table to-manys with an inverse.
            let columns = entity.relationships.compactMap { relationship -> (index: Int, destination: String, inverse: String)? in
                guard let inverse = relationship.inverse,
                      relationship.isToMany || coordinator.entitiesByName[relationship.destination]?.relationship(named: inverse)?.isToMany == true,
                      let index = coordinator.attributeIndices[name]?[relationship.name] else { return nil }
                return (index, relationship.destination, inverse)
            }
            guard !columns.isEmpty else { continue }
            for (primaryKey, row) in entityChanges.rows {
                let id = objectID(name, primaryKey)
                let before = registeredObject(for: id)?.snapshot
                for column in columns where row.kind == .inserted || row.kind == .deleted || row.mask.contains(column.index) {
                    var now: [Int64] = []
                    var then: [Int64] = []
                    let isJoin = entity.attributes[column.index].join != nil
                    func keys(_ value: StoreValue) -> [Int64] {
                        if isJoin { return JoinTable.decode(value) }
                        if case .integer(let key) = value { return [key] }
                        return []
                    }
                    if row.kind != .deleted { now = keys(row.values[column.index]) }
                    if let before, column.index < before.count { then = keys(before[column.index]) }
                    // Destinations that joined or left (all of them when the old value is not known here).
                    let touched = before == nil ? Set(now) : Set(now).symmetricDifference(then)
                    for destination in touched {
                        let target = objectID(column.destination, destination)
                        guard !changes.deleted.contains(target), !changes.inserted.contains(target) else { continue }
                        changes.updated[target, default: []].insert(column.inverse)
                        changes.unchanged.remove(target)
                    }
                }
            }
        }
    }
}

extension ChangeLayer {
    /// Rows that name, in a to-one column, a new object that merged into an existing
    /// one with the same key, name the survivor instead (Store guarantees 32).
    mutating func redirectReferences(merged: [ObjectID: ObjectID], entities: [String: EntityDescription]) {
        var moved: [String: [Int64: Int64]] = [:]
        for (incoming, survivor) in merged where incoming != survivor {
            moved[incoming.entityName, default: [:]][incoming.primaryKey] = survivor.primaryKey
        }
        guard !moved.isEmpty else { return }
        for name in Array(entities.keys) {
            guard let entity = entities[name], self.entities[name] != nil else { continue }
            let columns = entity.attributes.indices.compactMap { index -> (Int, [Int64: Int64], JoinTable?)? in
                let attribute = entity.attributes[index]
                guard let destination = attribute.destination ?? attribute.join?.destination, let map = moved[destination] else { return nil }
                return (index, map, attribute.join)
            }
            guard !columns.isEmpty else { continue }
            modify(name) { changes in
                for primaryKey in Array(changes.rows.keys) {
                    guard var row = changes.rows[primaryKey], row.kind != .deleted else { continue }
                    var changed = false
                    for (index, map, join) in columns {
                        if let join {
                            let renamed = JoinTable.renaming(row.values[index], map, ordered: join.isOrdered)
                            if renamed != row.values[index] {
                                row.values[index] = renamed
                                changed = true
                            }
                        } else if case .integer(let old) = row.values[index], let new = map[old] {
                            row.values[index] = .integer(new)
                            changed = true
                        }
                    }
                    if changed { changes.rows[primaryKey] = row }
                }
            }
        }
    }
}
