import Foundation
import Logging
import SwellStoreCore

/// A fetch request checked against the model.
struct FetchPlan {
    let entity: EntityDescription
    let predicate: BoundPredicate?
    /// Attribute indices; an index from `entity.attributes.count` on is `sortPaths[index - count]`.
    let sort: [(attribute: Int, ascending: Bool)]
    let limit: Int?
    let offset: Int
    /// To-one key paths sorted by (Store guarantees 33), with their SQL.
    var sortPaths: [[String]] = []

    var storeQuery: StoreQuery {
        var query = StoreQuery(entity: entity, predicate: predicate, sort: sort, limit: limit, offset: offset)
        query.sortKeyPaths = sortPaths
        return query
    }
}

/// An object's values seen through the unsaved changes of several levels.
enum ComposedRow {
    /// Deleted at some level.
    case deleted
    /// Every value known from the levels (an insert was reached).
    case complete([StoreValue])
    /// Only the masked values are known; the rest come from the store.
    case partial([StoreValue], AttributeMask)

    /// Composes a row from levels, nearest first; nil when no level changed it.
    static func compose(_ key: Int64, _ layers: some Collection<EntityChanges>, attributeCount: Int) -> ComposedRow? {
        var values: [StoreValue]?
        var mask = AttributeMask.empty
        for layer in layers {
            guard let row = layer.rows[key] else { continue }
            switch row.kind {
            case .deleted:
                return .deleted
            case .inserted:
                guard var known = values else { return .complete(row.values) }
                for index in 0..<attributeCount where !mask.contains(index) { known[index] = row.values[index] }
                return .complete(known)
            case .updated:
                var known = values ?? Array(repeating: .null, count: attributeCount)
                for index in row.mask.indices(below: attributeCount) where !mask.contains(index) {
                    known[index] = row.values[index]
                }
                mask.formUnion(row.mask)
                values = known
            }
        }
        guard let values else { return nil }
        return .partial(values, mask)
    }

    /// Every row any of the levels changed, composed.
    static func overlay(_ layers: [EntityChanges], attributeCount: Int) -> [Int64: ComposedRow] {
        var overlay: [Int64: ComposedRow] = [:]
        for layer in layers {
            for key in layer.rows.keys where overlay[key] == nil {
                overlay[key] = compose(key, layers, attributeCount: attributeCount)
            }
        }
        return overlay
    }

    /// The full values, filling what the levels did not set from `base` (the store's row).
    func values(base: [StoreValue]?) -> [StoreValue]? {
        switch self {
        case .deleted: return nil
        case .complete(let values): return values
        case .partial(let values, let mask):
            guard var result = base else { return nil }
            for index in result.indices where mask.contains(index) { result[index] = values[index] }
            return result
        }
    }
}

extension ManagedObjectContext {
    // MARK: Fetching

    /// The objects matching a request, as this context sees them: its own and
    /// every ancestor's unsaved changes over the store. Never waits for a
    /// root context's save in progress.
    ///
    /// - Throws: `StoreError.unknownEntity`, `.invalidPredicate`, `.invalidSortKey`, or a store error.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        assertOnQueue("fetch \(request.entityName)")
        let plan = try makePlan(request)
        let rows = try resolveRows(plan)
        if request.fetchBatchSize > 0 {
            let loader = BatchFaultLoader(context: self, entity: plan.entity, batchSize: request.fetchBatchSize)
            return rows.enumerated().map { position, row in
                let id = objectID(plan.entity.name, row.primaryKey)
                if let object = registeredObject(for: id) {
                    takeFetchedValues(row, into: object)
                    return object
                }
                let object = ManagedObject(id: id, entity: plan.entity,
                                           attributeIndex: coordinator?.attributeIndices[plan.entity.name] ?? [:], snapshot: [])
                object.faultLoader = loader
                object.faultIndex = position
                loader.append(object)
                register(object)
                return object
            }
        }
        let objects = try rows.map { try object(for: $0, entity: plan.entity) }
        if !request.relationshipKeyPathsForPrefetching.isEmpty {
            try prefetch(request.relationshipKeyPathsForPrefetching, for: objects, entity: plan.entity)
        }
        return objects
    }

    /// Whether the plan's predicate or sort follows key paths into an entity that has unsaved
    /// changes at this level or above (Store guarantees 33: key paths see unsaved values, also of the
    /// related objects of rows that are themselves unchanged; the store's SQL would read them
    /// as saved).
    func keyPathsReadUnsavedChanges(_ plan: FetchPlan, includingSort: Bool = true) -> Bool {
        var entities = plan.predicate?.pathEntities ?? []
        if includingSort, let coordinator {
            for path in plan.sortPaths {
                var current = plan.entity
                for name in path.dropLast() {
                    guard let relationship = current.relationship(named: name),
                          let next = coordinator.entitiesByName[relationship.destination] else { break }
                    entities.insert(next.name)
                    current = next
                }
            }
        }
        return entities.contains { !layerChain(entity: $0, includeSelf: true).isEmpty }
    }

    /// The number of objects `fetch` would return for the same request.
    public func count(for request: FetchRequest) throws -> Int {
        assertOnQueue("count \(request.entityName)")
        let plan = try makePlan(request)
        if keyPathsReadUnsavedChanges(plan, includingSort: false) { return try resolveRows(plan).count }
        let layers = layerChain(entity: plan.entity.name, includeSelf: true)
        let overlay = ComposedRow.overlay(layers, attributeCount: plan.entity.attributes.count)
        var query = plan.storeQuery
        query.limit = nil
        query.offset = 0
        let partialKeys = overlay.compactMap { key, row -> Int64? in if case .partial = row { return key } else { return nil } }
        let (stored, shadowed, bases) = try readStore { reader -> (Int, Int, [Int64: [StoreValue]]) in
            let stored = try reader.count(query)
            guard !overlay.isEmpty else { return (stored, 0, [:]) }
            return (stored, try reader.countMatching(primaryKeys: Array(overlay.keys), query: query),
                    try reader.rows(primaryKeys: partialKeys, entity: plan.entity))
        }
        // Unsaved rows are tested outside the read: a key path reads related objects.
        var matches = 0
        for (key, row) in overlay {
            guard let values = row.values(base: bases[key]) else { continue }
            if plan.predicate?.evaluate(values, primaryKey: key, resolver: self) ?? true { matches += 1 }
        }
        let total = stored - shadowed + matches
        let afterOffset = max(0, total - plan.offset)
        return plan.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    func makePlan(_ request: FetchRequest) throws(StoreError) -> FetchPlan {
        guard let coordinator else { throw .noPersistentStore }
        let entity = try coordinator.entity(named: request.entityName)
        var predicate: BoundPredicate?
        if let format = request.predicate {
            do {
                predicate = try format.bind(to: entity, entities: coordinator.entitiesByName)
            } catch {
                throw .invalidPredicate(error)
            }
        }
        let indices = coordinator.attributeIndices[entity.name] ?? [:]
        var sort: [(attribute: Int, ascending: Bool)] = []
        var sortPaths: [[String]] = []
        for descriptor in request.sortDescriptors {
            if let index = indices[descriptor.key] {
                sort.append((index, descriptor.ascending))
                continue
            }
            // A to-one key path (`spot.name`): sorted by the destination's value. A path the
            // key-path builder refuses is reported as the sort key it is (its error says less).
            let path = descriptor.key.split(separator: ".").map(String.init)
            guard path.count > 1, Self.isToOnePath(path, from: entity, entities: coordinator.entitiesByName),
                  (try? ResolvedKeyPath(KeyPathColumn(path: path, separator: nil), from: entity, entities: coordinator.entitiesByName)) != nil else {
                throw .invalidSortKey(entity: entity.name, key: descriptor.key)
            }
            sort.append((entity.attributes.count + sortPaths.count, descriptor.ascending))
            sortPaths.append(path)
        }
        var plan = FetchPlan(entity: entity, predicate: predicate, sort: sort,
                             limit: request.fetchLimit > 0 ? request.fetchLimit : nil, offset: max(0, request.fetchOffset))
        plan.sortPaths = sortPaths
        return plan
    }

    /// Whether `path` goes through to-one relationships only, to an attribute.
    private static func isToOnePath(_ path: [String], from entity: EntityDescription, entities: [String: EntityDescription]) -> Bool {
        var current = entity
        for name in path.dropLast() {
            guard let relationship = current.relationship(named: name), !relationship.isToMany,
                  let next = entities[relationship.destination] else { return false }
            current = next
        }
        return current.attributes.contains { $0.name == path.last && $0.destination == nil && $0.join == nil }
    }

    /// The value a to-one key path leads to from `row`, as this context sees it (null where a link is empty).
    func keyPathValue(_ path: [String], from row: [StoreValue], entity: EntityDescription) -> StoreValue {
        guard let coordinator else { return .null }
        var values = row
        var current = entity
        for name in path.dropLast() {
            guard let index = coordinator.attributeIndices[current.name]?[name], let relationship = current.relationship(named: name),
                  let next = coordinator.entitiesByName[relationship.destination],
                  case .integer(let key) = values[index], let destination = self.row(next, key) else { return .null }
            values = destination
            current = next
        }
        guard let last = path.last, let index = coordinator.attributeIndices[current.name]?[last] else { return .null }
        return values[index]
    }

    func storeOrThrow() throws(StoreError) -> any PersistentStore {
        guard let coordinator else { throw .noPersistentStore }
        return try coordinator.store
    }

    func objectID(_ entity: String, _ key: Int64) -> ObjectID {
        ObjectID(entityName: entity, primaryKey: key, storeIdentifier: coordinator?.storeIdentifier ?? "")
    }

    /// The unsaved changes of `entity` at each level, nearest first, from this
    /// context (or its parent) to the root. Read in the direction changes move,
    /// each level under its own lock, so a change moving up is never missed.
    func layerChain(entity: String, includeSelf: Bool) -> [EntityChanges] {
        var result: [EntityChanges] = []
        var context: ManagedObjectContext? = includeSelf ? self : parent
        while let current = context {
            current.level.withLock { level in
                for layer in level.layers {
                    if let changes = layer.entities[entity], !changes.rows.isEmpty { result.append(changes) }
                }
                for layer in level.inFlight.reversed() {
                    if let changes = layer.entities[entity], !changes.rows.isEmpty { result.append(changes) }
                }
            }
            context = current.parent
        }
        return result
    }

    /// The rows matching a plan, in order, with this context's current values.
    func resolveRows(_ plan: FetchPlan) throws -> [StoreRow] {
        let layers = layerChain(entity: plan.entity.name, includeSelf: true)
        let pathsSeeUnsaved = keyPathsReadUnsavedChanges(plan, includingSort: false)
        let sortSeesUnsaved = !pathsSeeUnsaved && keyPathsReadUnsavedChanges(plan)
        if layers.isEmpty && !pathsSeeUnsaved && !sortSeesUnsaved {
            return try readStore { try $0.rows(plan.storeQuery) }
        }
        let overlay = ComposedRow.overlay(layers, attributeCount: plan.entity.attributes.count)
        var query = plan.storeQuery
        if pathsSeeUnsaved {
            // The store's SQL would read the related rows as saved: every row is tested here.
            query.predicate = nil
            query.limit = nil
        } else if sortSeesUnsaved {
            // The store filters; the order (and so the limit) is this context's.
            query.limit = nil
        } else if let limit = plan.limit {
            query.limit = plan.offset + limit + overlay.count
        }
        query.offset = 0
        let partialKeys = overlay.compactMap { key, row -> Int64? in if case .partial = row { return key } else { return nil } }
        let (bases, stored) = try readStore { reader in
            (try reader.rows(primaryKeys: partialKeys, entity: plan.entity), try reader.rows(query))
        }
        var rows: [StoreRow] = stored.filter { overlay[$0.primaryKey] == nil }
        if pathsSeeUnsaved, let predicate = plan.predicate {
            rows = rows.filter { predicate.evaluate($0.values, primaryKey: $0.primaryKey, resolver: self) }
        }
        for (key, row) in overlay {
            guard let values = row.values(base: bases[key]) else { continue }
            if plan.predicate?.evaluate(values, primaryKey: key, resolver: self) ?? true { rows.append(StoreRow(primaryKey: key, values: values)) }
        }
        // Ties broken as the store breaks them (`StoreQuery.sort`): by a key that is the rowid, then the ID.
        let rowidKey = plan.entity.rowidKeyIndex
        let count = plan.entity.attributes.count
        if !plan.sortPaths.isEmpty {
            // Key-path sort values go after each row's attributes, where the sort's indices point.
            rows = rows.map { row in
                StoreRow(primaryKey: row.primaryKey, values: row.values + plan.sortPaths.map { keyPathValue($0, from: row.values, entity: plan.entity) })
            }
        }
        rows.sort { lhs, rhs in
            for (attribute, ascending) in plan.sort {
                let order = StoreValue.compare(lhs.values[attribute], rhs.values[attribute])
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            if let rowidKey {
                let order = StoreValue.compare(lhs.values[rowidKey], rhs.values[rowidKey])
                if order != 0 { return order < 0 }
            }
            return lhs.primaryKey < rhs.primaryKey
        }
        let start = min(plan.offset, rows.count)
        let end = plan.limit.map { min(rows.count, start + $0) } ?? rows.count
        if !plan.sortPaths.isEmpty {
            return rows[start..<end].map { StoreRow(primaryKey: $0.primaryKey, values: Array($0.values.prefix(count))) }
        }
        return Array(rows[start..<end])
    }

    /// The registered object for a fetched row, or a new one.
    private func object(for row: StoreRow, entity: EntityDescription) throws -> ManagedObject {
        let id = objectID(entity.name, row.primaryKey)
        if let object = registeredObject(for: id) {
            takeFetchedValues(row, into: object)
            return object
        }
        if pendingRow(for: id) != nil, let object = try materialize(id) { return object }
        let object = ManagedObject(id: id, entity: entity, attributeIndex: coordinator?.attributeIndices[entity.name] ?? [:],
                                   snapshot: row.values)
        register(object)
        return object
    }

    /// A fetch hands back a registered object with the values the fetch matched (better than
    /// Core Data, whose refetched objects keep the values they had): what the levels above
    /// changed since the object was loaded shows, so an object never disagrees with the
    /// fetch that returned it. The object's own unsaved changes stay on top; its snapshot
    /// stays the parent's values (what `rollback()` returns to).
    func takeFetchedValues(_ row: StoreRow, into object: ManagedObject) {
        guard !object.isFault else { return }
        switch pendingRow(for: object.objectID)?.kind {
        case nil:
            object.snapshot = row.values
        case .updated?:
            // The fetched row has this level's changes on top: the parent's own values are read
            // (and the change is based on them from now on: optimistic locking).
            if case .values(let values) = parentViewReporting(of: object.objectID, while: "taking a fetched object's values") {
                object.snapshot = values
                rebase(object.objectID, on: values)
            }
        case .inserted?, .deleted?:
            break
        }
    }

    /// The values of an object as this context's parent sees it; nil when it does not exist there.
    func parentView(of id: ObjectID) throws -> [StoreValue]? {
        guard let entity = coordinator?.entitiesByName[id.entityName] else { return nil }
        let layers = layerChain(entity: id.entityName, includeSelf: false)
        let composed = ComposedRow.compose(id.primaryKey, layers, attributeCount: entity.attributes.count)
        if case .deleted? = composed { return nil }
        if case .complete(let values)? = composed { return values }
        let base = try readStore { try $0.rows(primaryKeys: [id.primaryKey], entity: entity) }[id.primaryKey]
        guard let composed else { return base }
        return composed.values(base: base)
    }

    /// What `parentView(of:)` found, for the callers that cannot throw.
    enum ParentViewResult {
        case values([StoreValue])
        /// Deleted, or never saved where this context can see it.
        case gone
        /// The store could not be read; the context's `logger` has the error.
        case unreadable
    }

    /// `parentView(of:)` for a caller that cannot throw: a failed read is logged with what
    /// the context was doing (`action`), and reported as `.unreadable`, never as `.gone`.
    func parentViewReporting(of id: ObjectID, while action: String) -> ParentViewResult {
        do {
            return try parentView(of: id).map(ParentViewResult.values) ?? .gone
        } catch {
            reportUnreadable(id, while: action, error)
            return .unreadable
        }
    }

    /// `materialize(_:)` for a caller that cannot throw: a failed read is logged and gives nil.
    func materializeReporting(_ id: ObjectID, while action: String) -> ManagedObject? {
        do {
            return try materialize(id)
        } catch {
            reportUnreadable(id, while: action, error)
            return nil
        }
    }

    private func reportUnreadable(_ id: ObjectID, while action: String, _ error: any Error) {
        logger.error("cannot read an object's saved values", metadata: [
            "context": "\(displayName)", "object": "\(id)", "while": "\(action)", "error": "\(error)",
        ])
    }

    /// Creates and registers the object for an ID from the parent's view and this context's changes.
    func materialize(_ id: ObjectID) throws -> ManagedObject? {
        guard let coordinator, let entity = coordinator.entitiesByName[id.entityName] else { return nil }
        let own = pendingRow(for: id)
        let snapshot: [StoreValue]
        if let values = try parentView(of: id) {
            snapshot = values
        } else if own?.kind == .inserted {
            snapshot = Array(repeating: .null, count: entity.attributes.count)
        } else {
            return nil
        }
        let object = ManagedObject(id: id, entity: entity, attributeIndex: coordinator.attributeIndices[entity.name] ?? [:],
                                   snapshot: snapshot)
        register(object)
        return object
    }

    // MARK: Objects by ID

    /// The object for an ID in this context: its registered object, or one
    /// loaded with this context's view of its values. For an ID that exists
    /// nowhere this context can see, an object with no values is returned;
    /// use `existingObject(with:)` to get an error instead.
    public func object(with id: ObjectID) -> ManagedObject {
        assertOnQueue("look up \(id)")
        if let object = registeredObject(for: id) { return object }
        if let object = materializeReporting(id, while: "looking up an object by ID") { return object }
        return goneObject(for: id, registering: false)
    }

    /// The object for an ID, or `StoreError.objectNotFound` when it does not exist in this context's view.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        assertOnQueue("look up \(id)")
        if let object = registeredObject(for: id), object.managedObjectContext === self {
            if try object.isInserted || parentView(of: id) != nil { return object }
            // Its row is gone (Store guarantees 62): the registered object reads as deleted from now on.
            if shouldDeleteInaccessibleFaults { object.markGone() }
            throw StoreError.objectNotFound(id)
        }
        guard let object = try materialize(id) else { throw StoreError.objectNotFound(id) }
        return object
    }
}
