import Foundation
import Logging
import SwellStoreCore

/// Loads the values of a batched fetch's objects one batch at a time,
/// letting the previous batch's values go.
final class BatchFaultLoader {
    private weak var context: ManagedObjectContext?
    private let entity: EntityDescription
    private let batchSize: Int
    private var objects: [WeakObject] = []
    private var loadedBatch: Int?
    /// The batch whose last read failed (logged once, not at every access while it fails).
    private var failedBatch: Int?

    init(context: ManagedObjectContext, entity: EntityDescription, batchSize: Int) {
        self.context = context
        self.entity = entity
        self.batchSize = batchSize
    }

    func append(_ object: ManagedObject) { objects.append(WeakObject(object)) }

    func load(_ object: ManagedObject) {
        let batch = object.faultIndex / batchSize
        if let previous = loadedBatch, previous != batch { evict(previous) }
        let range = (batch * batchSize)..<min(objects.count, (batch + 1) * batchSize)
        let members = range.compactMap { objects[$0].object }.filter { $0.snapshot.isEmpty }
        guard let context else { return }
        let layers = context.layerChain(entity: entity.name, includeSelf: false)
        var composed: [Int64: ComposedRow] = [:]
        for member in members {
            composed[member.objectID.primaryKey] = ComposedRow.compose(member.objectID.primaryKey, layers, attributeCount: entity.attributes.count)
        }
        let bases: [Int64: [StoreValue]]
        do {
            bases = try context.readStore { reader in
                try reader.rows(primaryKeys: members.map(\.objectID.primaryKey), entity: entity)
            }
        } catch {
            // Reading values cannot throw: the batch stays faults (read as nil, tried again on
            // the next access) and the failure is reported once, with what it was about.
            if failedBatch != batch {
                failedBatch = batch
                context.logger.error("cannot read a batch of faults", metadata: [
                    "context": "\(context.displayName)", "entity": "\(entity.name)",
                    "objects": "\(members.count)", "error": "\(error)",
                ])
            }
            return
        }
        failedBatch = nil
        let empty = Array(repeating: StoreValue.null, count: entity.attributes.count)
        for member in members {
            let key = member.objectID.primaryKey
            if let values = composed[key].map({ $0.values(base: bases[key]) }) ?? bases[key] {
                member.snapshot = values
            } else if member.managedObjectContext?.pendingRow(for: member.objectID)?.kind == .inserted {
                member.snapshot = empty
            } else if context.shouldDeleteInaccessibleFaults {
                // Its row went since the fetch (Store guarantees 62): a deleted object, not a ghost.
                member.markGone()
            } else {
                member.snapshot = empty
            }
        }
        loadedBatch = batch
    }

    private func evict(_ batch: Int) {
        let range = (batch * batchSize)..<min(objects.count, (batch + 1) * batchSize)
        for index in range {
            guard let object = objects[index].object, !object.hasChanges else { continue }
            object.snapshot = []
        }
    }
}

