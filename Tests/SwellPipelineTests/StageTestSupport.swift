import SwellStore
@testable import SwellPipeline

/// Items keyed by an integer `id`, with an optional `title`.
let itemEntity = PipelineEntity(name: "Item", key: ["id"], attributes: [
    AttributeDescription(name: "id", type: .integer),
    AttributeDescription(name: "title", type: .string, isOptional: true),
])
