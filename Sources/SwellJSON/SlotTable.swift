/// A `RecordProjector`'s slots (one record's values) and its guesses of the
/// next key in each object, in memory of their own so that writing them
/// takes no check per write.
///
/// `@unchecked Sendable`: a table has one owner at a time. The projector
/// makes sure it holds the only reference (`isKnownUniquelyReferenced`, then a
/// copy) before each record and each step, so a reader that was copied or
/// moved to another thread never writes a table that another one reads.
final class SlotTable: @unchecked Sendable {
    let slots: UnsafeMutablePointer<FieldSlot>
    let slotCount: Int
    /// Per node of the plan: the index in its `keys` of the key expected next in the node's objects.
    let guesses: UnsafeMutablePointer<Int>
    let nodeCount: Int

    init(plan: ProjectionPlan) {
        slotCount = plan.slotKinds.count
        nodeCount = plan.nodes.count
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: FieldSlot(), count: slotCount)
        guesses = .allocate(capacity: nodeCount)
        for (index, node) in plan.nodes.enumerated() {
            (guesses + index).initialize(to: node.keysStart)
        }
    }

    /// A copy of `table`, for a projector that shares it.
    init(copying table: SlotTable) {
        slotCount = table.slotCount
        nodeCount = table.nodeCount
        slots = .allocate(capacity: slotCount)
        slots.initialize(from: table.slots, count: slotCount)
        guesses = .allocate(capacity: nodeCount)
        guesses.initialize(from: table.guesses, count: nodeCount)
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        guesses.deinitialize(count: nodeCount)
        guesses.deallocate()
    }
}
