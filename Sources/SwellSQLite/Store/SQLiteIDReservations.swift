import Foundation
import SwellStoreCore

/// Hands out object IDs for one SQLite store from blocks reserved through the store file,
/// so that every coordinator writing the file — in this process or in another — gets
/// IDs no other one ever gets (Store guarantees 49).
///
/// The file's table `swell_ids` holds, per entity, the next ID nobody has reserved. A
/// reservation is one small write transaction (`BEGIN IMMEDIATE`: writers of the file take
/// turns) that reads it, moves it past a block and commits. A block is kept here and handed
/// out without touching the file; the next block of an entity is twice as large as the
/// last (from 256 up to 65,536), so a bulk import reserves a handful of times, not once per
/// block a context asks for. IDs of a block this process never hands out are never handed out:
/// gaps, not duplicates.
///
/// A store file without the table (made before it existed), or an entity without its row
/// (added to the model since), starts above the largest ID the entity's table holds, read
/// in the reserving transaction (`ObjectIDSpace.firstFree`): the table's IDs are in it, and
/// no IDs were reserved for the entity before. The reservation also moves past any ID in
/// the table above the recorded one (a row written by a Swell that did not reserve).
///
/// The next block is reserved ahead, in the background, as soon as one is taken: a context
/// that needs IDs (the view context on the main queue too) then takes them from memory and
/// does not wait for the file's write lock — which a long commit, here or in another
/// process, may hold. Only an entity's first block, or a burst that outruns the block
/// reserved ahead, is reserved on the caller's thread. A reservation ahead that fails is
/// dropped: the next allocation then reserves itself and throws its own failure.
///
/// `@unchecked Sendable`: `blocks` is touched only under `lock`, which is held across a
/// reservation on the caller's thread (reservations of one store take turns anyway: one
/// write transaction at a time), never across one made ahead.
package final class SQLiteIDReservations: @unchecked Sendable {
    private let lock = NSLock()
    private var blocks: [String: Block] = [:]
    /// Reservations ahead in flight.
    private let reservingAhead = DispatchGroup()

    /// The smallest and largest block reserved at once (the first and the doubled ones).
    package static let firstBlockSize: Int64 = 256
    package static let largestBlockSize: Int64 = 65_536

    /// Takes `size` IDs for an entity from the store file.
    package typealias Reserve = @Sendable (_ entity: String, _ size: Int64) throws(StoreError) -> Range<Int64>

    private struct Block {
        package var available: Range<Int64> = 0..<0
        /// The block reserved ahead, for when `available` runs out.
        package var spare: Range<Int64>?
        package var isReservingAhead = false
        package var nextSize = SQLiteIDReservations.firstBlockSize

        /// The size of the next block (at least `count`); the one after is twice as large.
        package mutating func takeSize(atLeast count: Int64) -> Int64 {
            defer { nextSize = min(nextSize * 2, SQLiteIDReservations.largestBlockSize) }
            return max(count, nextSize)
        }
    }

    /// `count` IDs for `entity`: from the block in hand, else from the block reserved
    /// ahead, else from a new block `reserve` takes from the file now.
    package func allocate(for entity: String, count: Int64, reserve: @escaping Reserve) throws(StoreError) -> Range<Int64> {
        lock.lock()
        defer { lock.unlock() }
        var block = blocks[entity] ?? Block()
        if Int64(block.available.count) < count {
            if let spare = block.spare, Int64(spare.count) >= count {
                block.available = spare
                block.spare = nil
            } else {
                block.available = try reserve(entity, block.takeSize(atLeast: count))
            }
        }
        let taken = block.available.lowerBound..<(block.available.lowerBound + count)
        block.available = taken.upperBound..<block.available.upperBound
        if block.spare == nil && !block.isReservingAhead {
            block.isReservingAhead = true
            reserveAhead(entity, size: block.takeSize(atLeast: 0), reserve: reserve)
        }
        blocks[entity] = block
        return taken
    }

    /// Reserves the next block of `entity` on a background queue; it becomes the spare.
    private func reserveAhead(_ entity: String, size: Int64, reserve: @escaping Reserve) {
        reservingAhead.enter()
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { reservingAhead.leave() }
            // A failure is the next allocation's to meet and throw (see the type's comment).
            let reserved = try? reserve(entity, size)
            lock.withLock {
                blocks[entity]?.isReservingAhead = false
                if let reserved { blocks[entity]?.spare = reserved }
            }
        }
    }

    /// Returns once the reservations ahead in flight are done (for tests).
    package func waitForReservationsAhead() {
        reservingAhead.wait()
    }

    /// Reserves `size` IDs for `entity` in the store file, inside a write transaction of
    /// `connection` (the caller serialises the connection's use).
    package static func reserve(_ size: Int64, for entity: EntityDescription, connection: SQLiteConnection) throws -> Range<Int64> {
        try connection.transaction {
            try connection.execute("CREATE TABLE IF NOT EXISTS swell_ids (entity TEXT PRIMARY KEY, next INTEGER NOT NULL)")
            let layout = TableLayout(entity)
            let rowidKeyed = layout.rowidKey != nil
            var largest: Int64?
            if case .integer(let max)? = try connection.query("SELECT max(\"_pk\") FROM \(layout.table) WHERE \"_pk\" IS NOT NULL").first?.first {
                largest = max
            }
            var first = ObjectIDSpace.firstFree(largestAllocated: largest, rowidKeyed: rowidKeyed)
            if case .integer(let recorded)? = try connection.query("SELECT next FROM swell_ids WHERE entity = ?", [.text(entity.name)]).first?.first {
                first = max(first, recorded)
            }
            let (end, overflow) = first.addingReportingOverflow(size)
            guard !overflow else {
                throw StoreError.unsupported(store: "SQLite", what: "more than \(Int64.max) object IDs for \(entity.name)")
            }
            try connection.run("INSERT OR REPLACE INTO swell_ids (entity, next) VALUES (?, ?)", [.text(entity.name), .integer(end)])
            return first..<end
        }
    }
}
