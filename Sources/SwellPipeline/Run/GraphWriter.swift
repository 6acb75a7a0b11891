import Foundation
import Logging
import SwellContexts

/// Writes batches of records with nested objects (`GraphBatch`) as batch inserts from a
/// private child context of the view context, whose `objectTrump` policy makes each an
/// upsert of the attributes it carries: first each nested entity's objects (in groups of
/// the attributes their mappings gave), which report their IDs; then the records, with a
/// column per to-one (the linked object's ID) and per join-table to-many (the members'
/// IDs: the stored set becomes exactly that). A record equal to its stored row in its
/// attributes and links counts as unchanged; one whose links changed, as updated.
///
/// A batch is one transaction (`executeLinkedInserts`): its nested objects, its records and
/// the source's position (`PositionBook`) are on disk together, or none of them is.
struct GraphWriter: Sendable {
    /// A columns batch insert of records the mappers checked against the attribute rules
    /// (the store does not check them again).
    static func checkedRequest(entityName: String, columns: BatchColumns) -> BatchInsertRequest {
        let request = BatchInsertRequest(entityName: entityName, columns: columns)
        request.rulesChecked = true
        return request
    }

    let source: SourceSpec
    let entity: PipelineEntity
    let shape: GraphShape
    let container: PersistentContainer
    let state: SourceRunState
    let redactor: Redactor
    let logger: Logger
    let positions: PositionBook

    /// Starts the writer's thread, taking from `queue`; it leaves `group` when the queue is closed and drained.
    func start(queue: BatchQueue<PositionedBatch<GraphBatch>>, group: DispatchGroup) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            let context = container.newBackgroundContext()
            context.name = "\(source.name).graph-writer"
            context.performAndWait { context.mergePolicy = .mergeByPropertyObjectTrump }
            while let batch = queue.take() {
                write(batch.batch, wholePages: batch.wholePages, in: context)
            }
        }
        thread.name = "swell.write.\(source.name)"
        thread.start()
    }

    /// Writes one batch, holding the pages before `wholePages` whole (nil: no position kept); a
    /// failure fails the run (later batches are still written).
    func write(_ batch: GraphBatch, wholePages: Int?, in context: ManagedObjectContext) {
        guard batch.count > 0 else { return }
        do {
            let (counts, refused) = try positions.committing(wholePages: wholePages) { metadata in
                try context.performAndWait { try write(batch, metadata: metadata, context) }
            }
            state.count(committed: [counts])
            if let refused {
                // Records of the batch were left out: the position stays before them.
                positions.freeze()
                state.fail(refused)
            }
        } catch let error as PipelineError {
            state.fail(error)
        } catch {
            state.fail(PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error))
        }
    }

    /// A nested object of the batch: its entity's index and its position among that entity's objects.
    private struct ObjectPosition: Hashable {
        let entity: Int
        let position: Int
    }

    /// Writes the batch; when a new nested object lacks a required attribute its mapping does not
    /// give, the records that link it are left out and the rest written (the object-by-object
    /// writer saves a failed batch's valid records too): the counts, and that failure.
    private func write(_ batch: GraphBatch, metadata: [String: String?], _ context: ManagedObjectContext) throws -> (SaveScheduler.BatchCounts, PipelineError?) {
        var batch = batch
        let records = batch.count
        let own = batch.takeRecords()
        var excluded = Set<ObjectPosition>()
        var dropped = Set<Int>()
        var refused: PipelineError?
        while true {
            do {
                // A batch that leaves records out keeps no position (they were not saved).
                return (try write(batch, own: own, records: records, excluded: excluded, dropped: dropped,
                                  metadata: refused == nil ? metadata : [:], context), refused)
            } catch let failure as RefusedObject {
                if refused == nil { refused = failure.error }
                excluded.insert(failure.object)
                for record in 0..<records {
                    for (plan, entity) in shape.entityOfPlan.enumerated() where entity == failure.object.entity {
                        if batch.links(record: record, plan: plan).contains(failure.object.position) { dropped.insert(record) }
                    }
                }
                if dropped.count == records { return (SaveScheduler.BatchCounts(), refused) }
            }
        }
    }

    /// A new nested object a mapping leaves without a required attribute.
    private struct RefusedObject: Error {
        let object: ObjectPosition
        let error: PipelineError
    }

    private func write(_ batch: GraphBatch, own: BatchColumns, records: Int, excluded: Set<ObjectPosition>, dropped: Set<Int>,
                       metadata: [String: String?], _ context: ManagedObjectContext) throws -> SaveScheduler.BatchCounts {
        // The nested objects first (a request per entity and set of attributes given): their
        // IDs go in the records' link columns. All of it is one transaction.
        var requests: [BatchInsertRequest] = []
        /// Per request (the nested ones, then the children's): its entity's index and the objects'
        /// positions (its rows), and the attributes it carries.
        var sources: [(entity: Int, rows: [Int], attributes: [Int])] = []
        for index in batch.objects.indices where !shape.isChildEntity[index] {
            for (columns, rows, attributes) in objectColumns(batch, entity: index, excluded: excluded) {
                requests.append(Self.checkedRequest(entityName: shape.entities[index].name, columns: columns))
                sources.append((index, rows, attributes))
            }
        }
        let kept = (0..<records).filter { !dropped.contains($0) }
        let found: [String: LinkedInsertCounts]
        do {
            found = try BulkSession(context).executeLinkedInserts(requests) { primaryKeys in
                var ids = batch.objects.map { [Int64](repeating: -1, count: $0.values.count) }
                for (source, keys) in zip(sources, primaryKeys) {
                    for (n, row) in source.rows.enumerated() { ids[source.entity][row] = keys[n] }
                }
                let columns = dropped.isEmpty ? own : own.selecting(rows: kept)
                let request = Self.checkedRequest(entityName: entity.name, columns: recordColumns(columns, of: kept, in: batch, ids: ids))
                request.storeMetadata = metadata
                return request
            } children: { recordKeys in
                children(of: kept, keys: recordKeys, in: batch, excluded: excluded, sources: &sources)
            }
        } catch let failure as LinkedInsertFailure {
            let source = sources[failure.request]
            let entity = shape.entities[source.entity]
            if let refused = failure.error as? StoreError, refused.kind == .invalidBatchRow,
               let n = refused.row, let attribute = refused.attribute, n < source.rows.count,
               !source.attributes.contains(where: { entity.attributes[$0].name == attribute }) {
                // A new object needs an attribute its mapping does not give (a stored one keeps its value).
                let values = batch.objects[source.entity].values[source.rows[n]]
                let key = zip(entity.uniquenessConstraint, entity.keyIndices.map { values[$0] }).map { "\($0)=\($1.messageText)" }
                    .joined(separator: ", ")
                throw RefusedObject(object: ObjectPosition(entity: source.entity, position: source.rows[n]),
                                    error: PipelineError(.data, "a new \(entity.name) (\(key)) needs \(attribute), which its nested mapping does not map"))
            }
            throw failure.error
        }
        var counts = SaveScheduler.BatchCounts()
        for (name, entityCounts) in found {
            let total = RunReport.Counts(inserted: entityCounts.inserted, updated: entityCounts.updated, unchanged: entityCounts.unchanged)
            if name == entity.name {
                (counts.inserted, counts.updated, counts.unchanged) = (total.inserted, total.updated, total.unchanged)
            } else {
                counts.nested[name] = total
            }
        }
        return counts
    }

    /// Entity `index`'s objects as columns, one set per set of attributes their mappings gave,
    /// leaving out `excluded` ones: each with its rows' positions and the attributes it carries.
    private func objectColumns(_ batch: GraphBatch, entity index: Int, excluded: Set<ObjectPosition>)
        -> [(columns: BatchColumns, rows: [Int], attributes: [Int])] {
        let entity = shape.entities[index]
        let objects = batch.objects[index]
        var requests: [(columns: BatchColumns, rows: [Int], attributes: [Int])] = []
        for (mask, grouped) in Self.groups(objects.mapped) {
            let rows = excluded.isEmpty ? grouped : grouped.filter { !excluded.contains(ObjectPosition(entity: index, position: $0)) }
            guard !rows.isEmpty else { continue }
            let attributes = entity.attributes.indices.filter { mask.contains($0) }
            var columns = ColumnBatch(entity: EntityDescription(name: entity.name, attributes: attributes.map { entity.attributes[$0] }))
            for row in rows { columns.append(attributes.map { objects.values[row][$0] }) }
            requests.append((columns.take(), rows, attributes))
        }
        return requests
    }

    /// The objects of the to-manys kept by their inverse to-one (`GraphShape`), each pointing at
    /// the last of the `records` that lists it — or at none when a later record of that key
    /// (the one the batch keeps) does not list it: what writing the records in order leaves.
    /// `keys`: the records' IDs, in `records` order. Appends each request's source.
    private func children(of records: [Int], keys: [Int64], in batch: GraphBatch, excluded: Set<ObjectPosition>,
                          sources: inout [(entity: Int, rows: [Int], attributes: [Int])]) -> [LinkedChildren] {
        var lastOfKey: [Int64: Int] = [:]
        for (index, key) in keys.enumerated() where key >= 0 { lastOfKey[key] = index }
        var groups: [LinkedChildren] = []
        for (plan, nested) in shape.plans.enumerated() {
            guard case .inverseToOne(_, let order) = nested.kind, let inverse = nested.relationship.inverse else { continue }
            let index = shape.entityOfPlan[plan]
            // Each object's owner: the record (by index in `records`) that lists it last, and
            // its place in that record's list (the later one when listed twice).
            var owner = [Int](repeating: -1, count: batch.objects[index].values.count)
            var place = [Int](repeating: 0, count: owner.count)
            for (n, record) in records.enumerated() {
                for (offset, position) in batch.links(record: record, plan: plan).enumerated() {
                    owner[position] = n
                    place[position] = offset
                }
            }
            var requests: [BatchInsertRequest] = []
            for (columns, rows, attributes) in objectColumns(batch, entity: index, excluded: excluded) {
                let listed = rows.indices.filter { owner[rows[$0]] >= 0 }
                guard !listed.isEmpty else { continue }
                var carried = listed.count == rows.count ? columns : columns.selecting(rows: listed)
                let column = carried.references(inverse)
                let positions = order == nil ? nil : carried.positions(inverseOf: inverse)
                for n in listed {
                    let record = owner[rows[n]], key = keys[record]
                    let points = key >= 0 && lastOfKey[key] == record
                    carried.append(points ? key : nil, to: column)
                    if let positions { carried.append(points ? Int64(place[rows[n]]) : nil, to: positions) }
                }
                requests.append(Self.checkedRequest(entityName: shape.entities[index].name, columns: carried))
                sources.append((index, listed.map { rows[$0] }, attributes))
            }
            groups.append(LinkedChildren(entity: shape.entities[index].name, requests: requests, relationship: inverse,
                                         inverse: nested.relationship.name,
                                         owners: keys.filter { $0 >= 0 }))
        }
        return groups
    }

    /// The records' own columns (`records`: which of the batch's records they hold, in order), with
    /// a column per to-one (the linked object's ID) and per join-table to-many (the members' IDs);
    /// `ids`: each nested object's ID, by entity and position.
    private func recordColumns(_ own: BatchColumns, of records: [Int], in batch: GraphBatch, ids: [[Int64]]) -> BatchColumns {
        var columns = own
        for (plan, nested) in shape.plans.enumerated() {
            let found = ids[shape.entityOfPlan[plan]]
            switch nested.kind {
            case .toOne:
                let column = columns.references(nested.relationship.name)
                for record in records {
                    let linked = batch.links(record: record, plan: plan).first.map { found[$0] }
                    columns.append(linked.flatMap { $0 >= 0 ? $0 : nil }, to: column)
                }
            case .joinOwner:
                let column = columns.memberLists(nested.relationship.name)
                var members: [Int64] = []
                for record in records {
                    members.removeAll(keepingCapacity: true)
                    for position in batch.links(record: record, plan: plan) where found[position] >= 0 { members.append(found[position]) }
                    columns.append(members: &members, to: column)
                }
            case .inverseToOne:
                break   // the children point at the records (`children(of:keys:in:excluded:sources:)`)
            case .joinInverse:
                preconditionFailure("GraphShape admits no other side of a many-to-many")
            }
        }
        return columns
    }

    /// Rows grouped by the attributes they carry, each group in row order.
    private static func groups(_ masks: [AttributeMask]) -> [(AttributeMask, [Int])] {
        var order: [AttributeMask] = []
        var rows: [AttributeMask: [Int]] = [:]
        for (row, mask) in masks.enumerated() {
            if rows[mask] == nil { order.append(mask) }
            rows[mask, default: []].append(row)
        }
        return order.map { ($0, rows[$0]!) }
    }
}
