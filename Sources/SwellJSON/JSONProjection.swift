/// A field mapping compiled once into the plan a `JSONProjectionReader`
/// follows: which values of each record to read, and as what.
///
/// A field is a path of object keys from the record's root (`["id"]`,
/// `["author", "name"]`; the empty path is the record itself) and the kind its
/// value is read as. Paths may share prefixes, nest in one another
/// (`["author"]` as `.json` and `["author", "name"]` as `.string`), and repeat
/// with different kinds; every field gets its own value.
///
/// Lookup follows `JSONValue.value(at:)`: when an object has a key twice, the
/// later member wins, and a path that meets anything but an object on its way
/// (a string, an array, `null`) leads to a missing value.
public struct JSONProjection: Sendable {
    /// What a field's value is read as. An explicit `null` is `.null` for every kind.
    public enum Kind: Sendable, Hashable {
        /// An `Int64`, exactly: `12`, `1e2` and `10.0` are integers; `1.5`, `1e-2`
        /// and numbers beyond `Int64` are mismatches, as is anything not a number.
        case integer
        /// The nearest `Double` of a number (correctly rounded); a number too large
        /// for a finite `Double` (`1e400`), or anything not a number, is a mismatch.
        case double
        /// `true` or `false`; anything else is a mismatch.
        case boolean
        /// A string's UTF-8 bytes, escapes decoded; anything else is a mismatch.
        case string
        /// Any value as compact JSON text: no whitespace, members in input order
        /// (duplicates kept), numbers as written, strings escaped as
        /// `JSONValue.jsonText` escapes them (`"`, `\`, and control characters).
        case json
        /// A scalar as text: a string's decoded bytes, a number as written,
        /// `true` or `false`; an array or object is a mismatch.
        case text
    }

    /// One value to read from every record.
    public struct Field: Sendable, Hashable {
        /// The object keys from the record's root to the value; empty for the record itself.
        public var path: [String]
        /// What the value is read as.
        public var kind: Kind

        /// A field at `path`, read as `kind`.
        public init(_ path: [String], as kind: Kind) {
            self.path = path
            self.kind = kind
        }
    }

    /// The fields, in the order their values are given to a `JSONProjectionSink`.
    public let fields: [Field]

    /// The fields as a trie of keys, walked while the record is read.
    let plan: Plan

    /// Compiles `fields` into a plan (once per mapping, not per page).
    public init(fields: [Field]) {
        self.fields = fields
        self.plan = Plan(fields: fields)
    }
}

extension JSONProjection {
    /// What a slot holds; a `Kind`, plus the record's own excerpt for records that are not objects.
    enum SlotKind: UInt8, Sendable {
        case integer, double, boolean, string, json, text
        /// The record's root, kept (as an excerpt) only when it is not an object.
        case recordExcerpt

        init(_ kind: Kind) {
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

    /// The trie of field paths. Node 0 is the record's root.
    ///
    /// Slots are the fields by index, plus one last slot (`excerptSlot`) for
    /// the record's excerpt, on the root.
    struct Plan: Sendable {
        struct Node: Sendable {
            /// The slots whose path ends here, as a range of `nodeSlots`.
            var slotsStart: Int32
            var slotsEnd: Int32
            /// The keys of the node's children, as a range of `keys`.
            var keysStart: Int32
            var keysEnd: Int32
            /// The slots whose path ends here or below, as a range of `subtreeSlots`.
            var subtreeStart: Int32
            var subtreeEnd: Int32
        }

        /// A key from a node to one of its children.
        struct Key: Sendable {
            /// The key's length in UTF-8 bytes.
            var count: Int
            /// Its first (up to) 8 bytes, little-endian, zero-padded.
            var prefix: UInt64
            /// Where its bytes start in `keyBytes`.
            var offset: Int
            var node: Int32
        }

        var nodes: [Node] = []
        var keys: [Key] = []
        var keyBytes: [UInt8] = []
        var nodeSlots: [Int32] = []
        var subtreeSlots: [Int32] = []
        var slotKinds: [SlotKind] = []

        /// The slot of the record's excerpt (after the fields' slots).
        var excerptSlot: Int { slotKinds.count - 1 }

        init(fields: [Field]) {
            // A plain tree first, then laid out with each node's children, own
            // slots and subtree slots contiguous.
            final class TreeNode {
                var number: Int32 = 0
                var slots: [Int] = []
                var children: [(key: String, node: TreeNode)] = []

                func child(_ key: String) -> TreeNode {
                    if let found = children.first(where: { $0.key == key }) { return found.node }
                    let node = TreeNode()
                    children.append((key, node))
                    return node
                }
            }
            let root = TreeNode()
            for (index, field) in fields.enumerated() {
                var node = root
                for key in field.path { node = node.child(key) }
                node.slots.append(index)
            }
            root.slots.append(fields.count)
            slotKinds = fields.map { SlotKind($0.kind) } + [.recordExcerpt]

            // Breadth-first numbering keeps each node's children together.
            var order = [root]
            var next = 0
            while next < order.count {
                for (_, child) in order[next].children {
                    child.number = Int32(order.count)
                    order.append(child)
                }
                next += 1
            }
            func subtree(_ node: TreeNode) -> [Int] {
                node.slots + node.children.flatMap { subtree($0.node) }
            }
            for node in order {
                let slotsStart = Int32(nodeSlots.count)
                nodeSlots.append(contentsOf: node.slots.map { Int32($0) })
                let keysStart = Int32(keys.count)
                for (key, child) in node.children {
                    let bytes = Array(key.utf8)
                    var prefix: UInt64 = 0
                    for (shift, byte) in bytes.prefix(8).enumerated() {
                        prefix |= UInt64(byte) << (8 * UInt64(shift))
                    }
                    keys.append(Key(count: bytes.count, prefix: prefix, offset: keyBytes.count, node: child.number))
                    keyBytes.append(contentsOf: bytes)
                }
                let subtreeStart = Int32(subtreeSlots.count)
                subtreeSlots.append(contentsOf: subtree(node).map { Int32($0) })
                nodes.append(Node(
                    slotsStart: slotsStart, slotsEnd: Int32(nodeSlots.count),
                    keysStart: keysStart, keysEnd: Int32(keys.count),
                    subtreeStart: subtreeStart, subtreeEnd: Int32(subtreeSlots.count)
                ))
            }
        }
    }
}
