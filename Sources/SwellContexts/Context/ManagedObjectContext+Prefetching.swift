import SwellStoreCore

/// `relationshipKeyPathsForPrefetching` (Store guarantees 34): the destinations of a whole
/// fetch loaded with one query per key path (and level of a dotted one), so that
/// reading the relationship of every fetched object issues no further query.
extension ManagedObjectContext {
    /// Loads the destinations of `paths` for `objects` (all of one entity).
    func prefetch(_ paths: [String], for objects: [ManagedObject], entity: EntityDescription) throws {
        guard let coordinator, !objects.isEmpty else { return }
        for path in paths {
            var current = objects
            var currentEntity = entity
            for name in path.split(separator: ".").map(String.init) {
                guard let relationship = currentEntity.relationship(named: name),
                      let destination = coordinator.entitiesByName[relationship.destination] else {
                    throw StoreError.invalidSortKey(entity: currentEntity.name, key: path + " (relationshipKeyPathsForPrefetching: '\(name)' is not a relationship)")
                }
                let loaded = try prefetch(relationship, of: current, destination: destination)
                // The fetched objects keep their prefetched destinations alive (the context holds
                // objects weakly): reading the relationship then finds them registered.
                for object in current { object.prefetchedObjects += loaded }
                current = loaded
                currentEntity = destination
                if current.isEmpty { break }
            }
        }
    }

    /// Loads one relationship's destinations for `objects`; returns them.
    private func prefetch(_ relationship: RelationshipDescription, of objects: [ManagedObject],
                          destination: EntityDescription) throws -> [ManagedObject] {
        guard let sample = objects.first, let storage = sample.storage(of: relationship) else { return [] }
        switch storage {
        case .toOne(let index):
            let keys = objects.compactMap { object -> Int64? in
                if case .integer(let key) = object.storeValue(at: index) { return key }
                return nil
            }
            return try materialize(keys, entity: destination)
        case .joinOwner(let index, _):
            return try materialize(objects.flatMap { JoinTable.decode($0.storeValue(at: index)) }, entity: destination)
        case .inverseOfToOne(let inverse, let order):
            // One query for every owner's members; each owner keeps its list until this level or the store changes.
            var request = FetchRequest(entityName: destination.name)
            request.predicate = FetchPredicate(format: "%K IN %@", inverse, objects.map { Int($0.objectID.primaryKey) })
            if let order { request.sortDescriptors = [FetchSortDescriptor(key: destination.attributes[order].name)] }
            let members = try fetch(request)
            guard let column = members.first?.attributeIndex[inverse] else {
                for object in objects { object.cacheMembers([], of: relationship.name, version: membersVersion) }
                return []
            }
            var byOwner: [Int64: [ObjectID]] = [:]
            for member in members {
                if case .integer(let owner) = member.storeValue(at: column) { byOwner[owner, default: []].append(member.objectID) }
            }
            let version = membersVersion
            for object in objects { object.cacheMembers(byOwner[object.objectID.primaryKey] ?? [], of: relationship.name, version: version) }
            return members
        case .joinInverse:
            // The other side of a many-to-many: read per object (its owners' join column decides).
            return objects.flatMap { $0.members(of: relationship) }
        }
    }

    /// The objects for these IDs of one entity, those not registered yet loaded with one
    /// store read (this context's and its parents' unsaved changes over the stored rows).
    func materialize(_ keys: [Int64], entity: EntityDescription) throws -> [ManagedObject] {
        guard let coordinator else { return [] }
        var result: [ManagedObject] = []
        var missing: [Int64] = []
        var seen = Set<Int64>()
        for key in keys where seen.insert(key).inserted {
            if let object = registeredObject(for: objectID(entity.name, key)) { result.append(object) } else { missing.append(key) }
        }
        guard !missing.isEmpty else { return result }
        let layers = layerChain(entity: entity.name, includeSelf: false)
        var composed: [Int64: ComposedRow] = [:]
        for key in missing {
            composed[key] = ComposedRow.compose(key, layers, attributeCount: entity.attributes.count)
        }
        let needed = missing.filter { key in
            if case .complete? = composed[key] { return false }
            if case .deleted? = composed[key] { return false }
            return true
        }
        let bases = needed.isEmpty ? [:] : try readStore { try $0.rows(primaryKeys: needed, entity: entity) }
        for key in missing {
            let values: [StoreValue]?
            switch composed[key] {
            case .deleted?: values = nil
            case let row?: values = row.values(base: bases[key])
            case nil: values = bases[key]
            }
            guard let values else { continue }
            let object = ManagedObject(id: objectID(entity.name, key), entity: entity,
                                       attributeIndex: coordinator.attributeIndices[entity.name] ?? [:], snapshot: values)
            register(object)
            result.append(object)
        }
        return result
    }

    /// Changes whenever this context's view of the data may have: its own or an
    /// ancestor's unsaved changes, a commit to the store, or the query generation it reads at.
    var membersVersion: UInt64 {
        var version = coordinator?.commitGeneration ?? 0
        if let coordinator, coordinator.queryGenerationsUsed.load(ordering: .acquiring) {
            version = version &* 31 &+ UInt64(queryGenerationLease?.generation.number ?? 0)
        }
        var context: ManagedObjectContext? = self
        while let current = context {
            version = version &* 31 &+ current.level.withLock { $0.pendingVersion }
            context = current.parent
        }
        return version
    }
}

extension ManagedObject {
    /// A prefetched to-many's members, valid while the context's `membersVersion` stays.
    func cacheMembers(_ members: [ObjectID], of relationship: String, version: UInt64) {
        prefetchedMembers[relationship] = (version, members)
    }

    /// The prefetched members of a to-many, if still valid.
    func cachedMembers(of relationship: String) -> [ObjectID]? {
        guard let cached = prefetchedMembers[relationship], let context = managedObjectContext,
              cached.version == context.membersVersion else { return nil }
        return cached.members
    }
}
