import Foundation
import Logging
import SwellStore

/// Writes batches of records with nested objects (`GraphBatch`) as batch inserts from a
/// private child context of the view context, whose `objectTrump` policy makes each an
/// upsert of the attributes it carries: first each nested entity's objects (in groups of
/// the attributes their mappings gave), which report their IDs; then the records, with a
/// column per to-one (the linked object's ID) and per join-table to-many (the members'
/// IDs: the stored set becomes exactly that). A record equal to its stored row in its
/// attributes and links counts as unchanged; one whose links changed, as updated.
///
/// Each request is its own transaction: a run stopped between them leaves the nested
/// objects of a batch without the records that list them, which the next run links.
struct GraphWriter: Sendable {
    let source: SourceSpec
    let entity: PipelineEntity
    let shape: GraphShape
    let container: PersistentContainer
    let state: SourceRunState
    let redactor: Redactor
    let logger: Logger

    /// Starts the writer's thread, taking from `queue`; it leaves `group` when the queue is closed and drained.
    func start(queue: BatchQueue<GraphBatch>, group: DispatchGroup) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            let context = container.newBackgroundContext()
            context.name = "\(source.name).graph-writer"
            context.performAndWait { context.mergePolicy = .mergeByPropertyObjectTrump }
            while let batch = queue.take() {
                write(batch, in: context)
            }
        }
        thread.name = "swell.write.\(source.name)"
        thread.start()
    }

    /// Writes one batch; a failure fails the run (later batches are still written).
    func write(_ batch: GraphBatch, in context: ManagedObjectContext) {
        guard batch.count > 0 else { return }
        do {
            let counts = try context.performAndWait { try write(batch, context) }
            state.count(committed: [counts])
        } catch let error as PipelineError {
            state.fail(error)
        } catch {
            state.fail(PipelineError(.io, redactor("source \(source.name): saving a batch failed: \(error)"), underlying: error))
        }
    }

    private func write(_ batch: GraphBatch, _ context: ManagedObjectContext) throws -> SaveScheduler.BatchCounts {
        var counts = SaveScheduler.BatchCounts()
        // The nested objects first: their IDs go in the records' link columns.
        var ids: [[Int64]] = []
        for (index, objects) in batch.objects.enumerated() {
            let entity = shape.entities[index]
            var found = [Int64](repeating: -1, count: objects.values.count)
            var total = RunReport.Counts()
            for (mask, rows) in Self.groups(objects.mapped) {
                let attributes = entity.attributes.indices.filter { mask.contains($0) }
                var columns = ColumnBatch(entity: EntityDescription(name: entity.name, attributes: attributes.map { entity.attributes[$0] }))
                for row in rows { columns.append(attributes.map { objects.values[row][$0] }) }
                let request = BatchInsertRequest(entityName: entity.name, columns: columns.take())
                request.resultType = .changes
                request.reportsPrimaryKeys = true
                let result: BatchResult
                do {
                    result = try context.execute(request)
                } catch StoreError.invalidBatchRow(_, let n, let attribute, _) where n < rows.count && !attributes.contains(where: {
                    entity.attributes[$0].name == attribute
                }) {
                    // A new object needs an attribute its mapping does not give (a stored one keeps its value).
                    let key = zip(entity.uniquenessConstraint, entity.keyIndices.map { objects.values[rows[n]][$0] })
                        .map { "\($0)=\(describe($1))" }.joined(separator: ", ")
                    throw PipelineError(.data, "a new \(entity.name) (\(key)) needs \(attribute), which its nested mapping does not map")
                }
                for (n, row) in rows.enumerated() { found[row] = result.primaryKeys[n] }
                total.inserted += result.inserted
                total.updated += result.updated
                total.unchanged += result.unchanged
            }
            ids.append(found)
            var sum = counts.nested[entity.name] ?? RunReport.Counts()
            sum.inserted += total.inserted
            sum.updated += total.updated
            sum.unchanged += total.unchanged
            counts.nested[entity.name] = sum
        }
        var batch = batch
        let records = batch.count
        var columns = batch.takeRecords()
        for (plan, nested) in shape.plans.enumerated() {
            let found = ids[shape.entityOfPlan[plan]]
            switch nested.kind {
            case .toOne:
                let column = columns.references(nested.relationship.name)
                for record in 0..<records {
                    let linked = batch.links(record: record, plan: plan).first.map { found[$0] }
                    columns.append(linked.flatMap { $0 >= 0 ? $0 : nil }, to: column)
                }
            case .joinOwner:
                let column = columns.memberLists(nested.relationship.name)
                var members: [Int64] = []
                for record in 0..<records {
                    members.removeAll(keepingCapacity: true)
                    for position in batch.links(record: record, plan: plan) where found[position] >= 0 { members.append(found[position]) }
                    columns.append(members: &members, to: column)
                }
            case .inverseToOne, .joinInverse:
                preconditionFailure("GraphShape admits only to-ones and owned join tables")
            }
        }
        let request = BatchInsertRequest(entityName: entity.name, columns: columns)
        request.resultType = .changes
        let result = try context.execute(request)
        counts.inserted = result.inserted
        counts.updated = result.updated
        counts.unchanged = result.unchanged
        return counts
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
