/// A `JSONProjection`'s fields as a trie of object keys, in flat tables that
/// a `RecordProjector` walks while it reads a record. Node 0 is the record's
/// root.
///
/// Slots are the fields by index, then one last slot (`excerptSlot`) on the
/// root for the record's own excerpt (kept when the record is not an object).
///
/// `@unchecked Sendable`: the tables are written once, in `init`, and only
/// read afterwards.
final class ProjectionPlan: @unchecked Sendable {
    /// What a slot holds: a field's kind, or the record's excerpt.
    enum SlotKind: UInt8, Sendable {
        case integer, double, boolean, string, json, text
        /// The record's root, kept (as an excerpt) only when it is not an object.
        case recordExcerpt

        init(_ kind: JSONProjection.Kind) {
            switch kind {
            case .integer: self = .integer
            case .double: self = .double
            case .boolean: self = .boolean
            case .string: self = .string
            case .json: self = .json
            case .text: self = .text
            }
        }
    }

    struct Node: Sendable {
        /// The slots whose path ends here, as a range of `nodeSlots`.
        var slotsStart: Int
        var slotsEnd: Int
        /// The keys of the node's children, as a range of `keys`.
        var keysStart: Int
        var keysEnd: Int
        /// The slots whose path ends below the node, as a range of `descendantSlots`.
        var descendantsStart: Int
        var descendantsEnd: Int
        /// The node's slot when it has exactly one, of kind `.string` or `.text`; else -1.
        var soleTextSlot: Int
        /// The node's slot when it has exactly one, of kind `.integer`; else -1.
        var soleIntegerSlot: Int
        /// Whether an object here is captured (for a `.json` slot or a mismatch's excerpt).
        var capturesObjects: Bool
        /// Whether an array here is captured.
        var capturesArrays: Bool
    }

    /// A key from a node to one of its children.
    struct Key: Sendable {
        /// The key's length in UTF-8 bytes.
        var count: Int
        /// Its first (up to) 8 bytes, little-endian, zero-padded.
        var prefix: UInt64
        /// The bits of `prefix` that are the key's (all of them from 8 bytes on).
        var mask: UInt64
        /// Where its bytes start in `keyBytes`.
        var offset: Int
        /// The child it leads to.
        var node: Int
        /// That child's `descendantsStart` and `descendantsEnd`.
        var descendantsStart: Int
        var descendantsEnd: Int
        /// The key expected after this one in the same object: the next of its
        /// node's keys, in the order the fields named them (then the first).
        var next: Int
        /// Whether JSON writes the key as it is, without escapes (no `"`, `\`
        /// or control character): then its bytes between quotes in a page are the key.
        var isRaw: Bool
    }

    let nodes: UnsafeMutableBufferPointer<Node>
    let keys: UnsafeMutableBufferPointer<Key>
    let keyBytes: UnsafeMutableBufferPointer<UInt8>
    let nodeSlots: UnsafeMutableBufferPointer<Int>
    let descendantSlots: UnsafeMutableBufferPointer<Int>
    let slotKinds: UnsafeMutableBufferPointer<SlotKind>

    /// The slot of the record's excerpt (after the fields' slots).
    var excerptSlot: Int { slotKinds.count - 1 }

    init(fields: [JSONProjection.Field]) {
        // A plain tree first, then laid out breadth first, which keeps each
        // node's children, own slots and descendants' slots together.
        final class TreeNode {
            var number = 0
            var slots: [Int] = []
            var children: [(key: String, node: TreeNode)] = []

            func child(_ key: String) -> TreeNode {
                if let found = children.first(where: { $0.key == key }) { return found.node }
                let node = TreeNode()
                children.append((key, node))
                return node
            }

            var descendantSlots: [Int] {
                children.flatMap { $0.node.slots + $0.node.descendantSlots }
            }
        }
        let root = TreeNode()
        for (index, field) in fields.enumerated() {
            var node = root
            for key in field.path { node = node.child(key) }
            node.slots.append(index)
        }
        root.slots.append(fields.count)

        var order = [root]
        var next = 0
        while next < order.count {
            for (_, child) in order[next].children {
                child.number = order.count
                order.append(child)
            }
            next += 1
        }
        let kinds = fields.map { SlotKind($0.kind) } + [.recordExcerpt]
        var nodes: [Node] = []
        var keys: [Key] = []
        var keyBytes: [UInt8] = []
        var nodeSlots: [Int] = []
        var descendantSlots: [Int] = []
        var descendantRanges: [Range<Int>] = []
        for node in order {
            descendantRanges.append(descendantSlots.count..<(descendantSlots.count + node.descendantSlots.count))
            descendantSlots.append(contentsOf: node.descendantSlots)
        }
        for node in order {
            let slotsStart = nodeSlots.count
            nodeSlots.append(contentsOf: node.slots)
            let keysStart = keys.count
            for (position, (key, child)) in node.children.enumerated() {
                let bytes = Array(key.utf8)
                var prefix: UInt64 = 0
                for (shift, byte) in bytes.prefix(8).enumerated() {
                    prefix |= UInt64(byte) << (8 * UInt64(shift))
                }
                keys.append(Key(
                    count: bytes.count,
                    prefix: prefix,
                    mask: bytes.count >= 8 ? ~0 : (1 << (8 * UInt64(bytes.count))) - 1,
                    offset: keyBytes.count,
                    node: child.number,
                    descendantsStart: descendantRanges[child.number].lowerBound,
                    descendantsEnd: descendantRanges[child.number].upperBound,
                    next: keysStart + (position + 1) % node.children.count,
                    isRaw: !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
                ))
                keyBytes.append(contentsOf: bytes)
            }
            let sole = node.slots.count == 1 ? node.slots[0] : -1
            nodes.append(Node(
                slotsStart: slotsStart, slotsEnd: nodeSlots.count,
                keysStart: keysStart, keysEnd: keys.count,
                descendantsStart: descendantRanges[node.number].lowerBound, descendantsEnd: descendantRanges[node.number].upperBound,
                soleTextSlot: sole >= 0 && (kinds[sole] == .string || kinds[sole] == .text) ? sole : -1,
                soleIntegerSlot: sole >= 0 && kinds[sole] == .integer ? sole : -1,
                capturesObjects: node.slots.contains { kinds[$0] != .recordExcerpt },
                capturesArrays: !node.slots.isEmpty
            ))
        }
        self.nodes = Self.table(nodes)
        self.keys = Self.table(keys)
        self.keyBytes = Self.table(keyBytes)
        self.nodeSlots = Self.table(nodeSlots)
        self.descendantSlots = Self.table(descendantSlots)
        self.slotKinds = Self.table(kinds)
    }

    deinit {
        nodes.deallocate()
        keys.deallocate()
        keyBytes.deallocate()
        nodeSlots.deallocate()
        descendantSlots.deallocate()
        slotKinds.deallocate()
    }

    private static func table<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let table = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = table.initialize(from: elements)
        return table
    }
}
