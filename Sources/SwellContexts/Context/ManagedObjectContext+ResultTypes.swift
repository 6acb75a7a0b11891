import Foundation
import SwellStoreCore

/// Fetch result types other than objects (Store guarantees 44–45): object IDs and dictionaries,
/// with aggregates, grouping, a having predicate and distinct rows. Every result is
/// computed from the same rows an object fetch reads, through this context's and its
/// ancestors' unsaved changes, so the two always agree.
extension ManagedObjectContext {
    /// The IDs of the objects `fetch` would return for the same request, without making
    /// the objects.
    ///
    /// - Throws: the errors of `fetch`.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] {
        assertOnQueue("fetchObjectIDs \(request.entityName)")
        let plan = try makePlan(request)
        return try resolveRows(plan).map { objectID(plan.entity.name, $0.primaryKey) }
    }

    /// One dictionary per object matching the request — or, with expressions or
    /// `propertiesToGroupBy`, one per group — keyed by property name (`propertiesToFetch`;
    /// every attribute when empty). Values are `String`, `Int`, `Double`, `Bool`, `Date`,
    /// or `ObjectID` for a to-one relationship; a nil value leaves its key out, as Core
    /// Data's dictionaries do. Groups come in the order of their first object under the
    /// request's sort; `fetchLimit` and `fetchOffset` count result rows.
    ///
    /// - Throws: the errors of `fetch`; `StoreError.invalidFetch` for properties that do not
    ///   fit (an unknown name, a sum of text, a fetched property left out of the grouping).
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: Any]] {
        assertOnQueue("fetchDictionaries \(request.entityName)")
        guard let coordinator else { throw StoreError.noPersistentStore }
        var rowsRequest = request
        let entity = try coordinator.entity(named: request.entityName)
        let dictionaryPlan = try DictionaryFetchPlan(request, entity: entity, entities: coordinator.entitiesByName,
                                                     attributeIndex: coordinator.attributeIndices[entity.name] ?? [:])
        let limitsRows = !dictionaryPlan.isGrouped && !dictionaryPlan.distinct
        if !limitsRows {
            rowsRequest.fetchLimit = 0
            rowsRequest.fetchOffset = 0
        }
        let plan = try makePlan(rowsRequest)
        var accumulator = DictionaryFetchPlan.Accumulator(dictionaryPlan)
        if try !readSaved(plan, dictionaryPlan, into: &accumulator) {
            for row in try resolveRows(plan) {
                try accumulator.add { source in
                    switch source {
                    case .attribute(let index), .objectID(let index, _): row.values[index]
                    case .keyPath(let path): keyPathValue(path, from: row.values, entity: entity)
                    }
                }
            }
        }
        var results = accumulator.finish()
        if !limitsRows {
            let start = min(max(0, request.fetchOffset), results.count)
            let end = request.fetchLimit > 0 ? min(results.count, start + request.fetchLimit) : results.count
            results = Array(results[start..<end])
        }
        return results.map { values in
            var dictionary: [String: Any] = [:]
            for (index, column) in dictionaryPlan.columns.enumerated() {
                let value = values[index]
                if case .objectID(_, let destination) = column.source, column.aggregate == nil {
                    if case .integer(let key) = value { dictionary[column.name] = objectID(destination, key) }
                } else if let swift = value.swiftValue(for: column.type) {
                    dictionary[column.name] = swift
                }
            }
            return dictionary
        }
    }

    /// With nothing unsaved for the entity nor for the entities its key paths reach, reads
    /// the rows in one pass over the store's query (its SQL filters, sorts and follows the
    /// key paths), without making objects or keeping rows; false when unsaved state
    /// concerns them (or the store cannot read key paths), for the caller to merge.
    private func readSaved(_ plan: FetchPlan, _ dictionaryPlan: DictionaryFetchPlan,
                           into accumulator: inout DictionaryFetchPlan.Accumulator) throws -> Bool {
        guard let coordinator, layerChain(entity: plan.entity.name, includeSelf: true).isEmpty, !keyPathsReadUnsavedChanges(plan) else {
            return false
        }
        var keyPaths: [[String]] = []
        for column in dictionaryPlan.columns {
            if case .keyPath(let path) = column.source, !keyPaths.contains(path) { keyPaths.append(path) }
        }
        for case .keyPath(let path) in dictionaryPlan.groupBy where !keyPaths.contains(path) { keyPaths.append(path) }
        for path in keyPaths {
            var current = plan.entity
            for name in path.dropLast() {
                guard let relationship = current.relationship(named: name), let next = coordinator.entitiesByName[relationship.destination] else { return false }
                if !layerChain(entity: next.name, includeSelf: true).isEmpty { return false }
                current = next
            }
        }
        var query = plan.storeQuery
        query.extraColumns = keyPaths.map { KeyPathColumn(path: $0, separator: nil) }
        let count = plan.entity.attributes.count
        do {
            var reading = accumulator
            try readStore { reader in
                try reader.forEachRowCursor(query) { cursor in
                    try reading.add { source in
                        switch source {
                        case .attribute(let index), .objectID(let index, _): cursor.value(index)
                        case .keyPath(let path): cursor.value(count + keyPaths.firstIndex(of: path)!)
                        }
                    }
                }
            }
            accumulator = reading
            return true
        } catch StoreError.Kind.unsupported {
            return false    // the in-memory store runs no key-path SQL: its rows are merged as unsaved ones are
        }
    }
}
