import Foundation

/// Which attributes (by index) a change sets. Up to 256 attributes an entity.
public struct AttributeMask: Hashable, Sendable {
    public static let capacity = 256
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    public static let empty = AttributeMask()

    /// Every attribute of an entity with `count` attributes.
    public static func all(_ count: Int) -> AttributeMask {
        var mask = AttributeMask()
        for index in 0..<count { mask.insert(index) }
        return mask
    }

    public func contains(_ index: Int) -> Bool {
        let bit = UInt64(1) << UInt64(index & 63)
        switch index >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    public mutating func insert(_ index: Int) {
        let bit = UInt64(1) << UInt64(index & 63)
        switch index >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    public mutating func remove(_ index: Int) {
        let bit = ~(UInt64(1) << UInt64(index & 63))
        switch index >> 6 {
        case 0: words.0 &= bit
        case 1: words.1 &= bit
        case 2: words.2 &= bit
        default: words.3 &= bit
        }
    }

    public mutating func formUnion(_ other: AttributeMask) {
        words.0 |= other.words.0
        words.1 |= other.words.1
        words.2 |= other.words.2
        words.3 |= other.words.3
    }

    public var isEmpty: Bool { words.0 | words.1 | words.2 | words.3 == 0 }

    public func intersects(_ other: AttributeMask) -> Bool {
        (words.0 & other.words.0) | (words.1 & other.words.1) | (words.2 & other.words.2) | (words.3 & other.words.3) != 0
    }

    /// The indices set, ascending, below `count`.
    public func indices(below count: Int) -> [Int] {
        (0..<count).filter { contains($0) }
    }

    /// Copies `source`'s values at the masked positions onto `target` (a change over the
    /// values beneath it): the one overlay every level, the store prefetch and the objects use.
    public func overlay(_ source: [StoreValue], onto target: inout [StoreValue]) {
        for index in 0..<min(target.count, source.count) where contains(index) { target[index] = source[index] }
    }

    public static func == (lhs: AttributeMask, rhs: AttributeMask) -> Bool {
        lhs.words == rhs.words
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

/// One object's unsaved change at one level (a context, or the writer's save in flight).
package struct PendingRow: Sendable {
    package enum Kind: Sendable, Equatable {
        /// New at this level: `values` is the whole row.
        case inserted
        /// Changed at this level: `values` holds the new values at the `mask` positions.
        case updated
        /// Deleted at this level.
        case deleted
    }

    package var kind: Kind
    /// A value per attribute of the entity; for updates only the masked positions mean anything.
    package var values: [StoreValue]
    /// The attributes this change set (for inserts: those set explicitly, nil included).
    package var mask: AttributeMask
    /// When the object was first changed at this level: saves move changes in this order.
    package var sequence: UInt64
    /// An insert whose key a save already checked against the store (so the next
    /// level need not read the store again: the main queue never waits for disk).
    package var keyCheckedAgainstStore = false
    /// For an update or delete of an object a context read: the object's values it read (its
    /// snapshot when first changed, or last refreshed), which a save checks against the
    /// object's values at the receiving level (optimistic locking, `MergePolicy.resolveVersion`).
    /// Nil where nothing was read (batch paths, key merges): nothing is checked.
    package var base: [StoreValue]?

    package init(kind: Kind, values: [StoreValue], mask: AttributeMask, sequence: UInt64, keyCheckedAgainstStore: Bool = false,
                 base: [StoreValue]? = nil) {
        self.kind = kind
        self.values = values
        self.mask = mask
        self.sequence = sequence
        self.keyCheckedAgainstStore = keyCheckedAgainstStore
        self.base = base
    }
}
