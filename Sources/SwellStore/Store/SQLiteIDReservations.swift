import Foundation

/// Hands out object IDs for one SQLite store from blocks reserved through the store file,
/// so that every coordinator writing the file — in this process or in another — gets
/// IDs no other one ever gets (store.md 49).
///
/// The file's table `swell_ids` holds, per entity, the next ID nobody has reserved. A
/// reservation is one small write transaction (`BEGIN IMMEDIATE`: writers of the file take
/// turns) that reads it, moves it past a block and commits. A block is kept here and handed
/// out without touching the file; the next block of an entity is twice as large as the
/// last (from 256 up to 65,536), so a bulk import reserves a few times, not once per block
/// a context asks for. IDs of a block this process never hands out are never handed out:
/// gaps, not duplicates.
///
/// A store file without the table (made before it existed), or an entity without its row
/// (added to the model since), starts above the largest ID the entity's table holds, read
/// in the reserving transaction (`ObjectIDSpace.firstFree`): the table's IDs are in it, and
/// no IDs were reserved for the entity before. The reservation also moves past any ID in
/// the table above the recorded one (a row written by a Swell that did not reserve).
///
/// `@unchecked Sendable`: `blocks` is touched only under `lock`, which is held across a
/// reservation (reservations of one store take turns anyway: one write transaction at a time).
final class SQLiteIDReservations: @unchecked Sendable {
    private let lock = NSLock()
    private var blocks: [String: Block] = [:]

    /// The smallest and largest block reserved at once (the first and the doubled ones).
    static let firstBlockSize: Int64 = 256
    static let largestBlockSize: Int64 = 65_536

    private struct Block {
        var available: Range<Int64>
        var nextSize: Int64
    }

    /// `count` IDs for `entity`: from the block in hand, else from a new block that
    /// `reserve(entity, size)` takes from the file (a block of at least `count`).
    func allocate(for entity: String, count: Int64,
                  reserve: (_ entity: String, _ size: Int64) throws(StoreError) -> Range<Int64>) throws(StoreError) -> Range<Int64> {
        lock.lock()
        defer { lock.unlock() }
        var block = blocks[entity] ?? Block(available: 0..<0, nextSize: Self.firstBlockSize)
        if Int64(block.available.count) < count {
            let size = max(count, block.nextSize)
            block.available = try reserve(entity, size)
            block.nextSize = min(block.nextSize * 2, Self.largestBlockSize)
        }
        let taken = block.available.lowerBound..<(block.available.lowerBound + count)
        block.available = taken.upperBound..<block.available.upperBound
        blocks[entity] = block
        return taken
    }

    /// Reserves `size` IDs for `entity` in the store file, inside a write transaction of
    /// `connection` (the caller serialises the connection's use).
    static func reserve(_ size: Int64, for entity: EntityDescription, connection: SQLiteConnection) throws -> Range<Int64> {
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
