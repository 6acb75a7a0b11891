import Foundation
@testable import SwellSQLite
import SwellContexts
@testable import SwellPipeline
import SwellStoreCore
import SwellStore

/// Items keyed by an integer `id`, with an optional `title`.
package let itemEntity = PipelineEntity(name: "Item", key: ["id"], attributes: [
    AttributeDescription(name: "id", type: .integer),
    AttributeDescription(name: "title", type: .string, isOptional: true),
])

/// A loaded container on a fresh store in `workspace`, holding `entity` alone.
package func makeContainer(_ workspace: Workspace, entity: PipelineEntity) throws -> PersistentContainer {
    let container = PersistentContainer(name: "stages", managedObjectModel: ManagedObjectModel(entities: [entity.description]),
                                        storeURL: URL(fileURLWithPath: workspace.path(".swell/stages.sqlite")))
    try container.loadPersistentStores()
    return container
}

/// Inserts `rows` (values by attribute index) on a worker context and saves
/// them into the view context; with `toDisk`, on into the store.
package func insert(_ rows: [[StoreValue]], of entity: PipelineEntity, in container: PersistentContainer, toDisk: Bool = true) async throws {
    let worker = container.newBackgroundContext()
    try await worker.perform {
        for values in rows { worker.insertRow(entity: entity.description, values: values) }
        try worker.save()
    }
    if toDisk { try await container.saveToDisk() }
}
