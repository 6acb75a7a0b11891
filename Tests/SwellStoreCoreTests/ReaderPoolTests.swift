import SwellLocks
import SwellStoreCore
import Testing
import SwellStoreTestSupport

/// `ReaderPool`, the idle readers and pinned snapshots of the SQLite and PostgreSQL stores:
/// nothing is handed out before `open()` or after `close()` (checked before an idle reader
/// is taken), at most `capacity` idle readers are kept, and what is not kept is discarded.
@Suite struct ReaderPoolTests {
    /// A stand-in connection.
    final class Connection: Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    /// A stand-in pinned snapshot.
    final class Snapshot {}

    /// A pool whose discarded connections are counted, and a counter of connections made.
    final class Fixture: Sendable {
        let discarded = LockedValue<[Int]>([])
        let made = LockedValue(0)
        let pool: ReaderPool<Connection, Snapshot>

        init(capacity: Int = 2) {
            let discarded = discarded
            pool = ReaderPool(capacity: capacity, discard: { connection in discarded.withLock { $0.append(connection.number) } })
        }

        func checkOut() throws(StoreError) -> Connection {
            try pool.checkOut { () throws(StoreError) in Connection(made.withLock { $0 += 1; return $0 }) }
        }
    }

    @Test func nothingIsHandedOutBeforeOpenOrAfterClose() throws {
        let fixture = Fixture()
        #expect(throws: StoreError.self) { try fixture.checkOut() }
        fixture.pool.open()
        let connection = try fixture.checkOut()
        fixture.pool.checkIn(connection, healthy: true)
        let (idle, _) = fixture.pool.close()
        // The idle reader goes to the store to close; none is handed out after close, though one was idle.
        #expect(idle.map(\.number) == [1])
        #expect(throws: StoreError.self) { try fixture.checkOut() }
        #expect(fixture.made.withLock { $0 } == 1)
    }

    @Test func idleReadersAreReusedUpToTheCapacityAndTheRestDiscarded() throws {
        let fixture = Fixture(capacity: 2)
        fixture.pool.open()
        let taken = try (0..<3).map { _ in try fixture.checkOut() }
        #expect(taken.map(\.number) == [1, 2, 3])
        for connection in taken { fixture.pool.checkIn(connection, healthy: true) }
        #expect(fixture.discarded.withLock { $0 } == [3])
        // The last one in is the first one out; no new connection is made while one is idle.
        #expect(try fixture.checkOut().number == 2)
        #expect(fixture.made.withLock { $0 } == 3)
    }

    @Test func anUnhealthyReaderOrOneBackAfterCloseIsDiscarded() throws {
        let fixture = Fixture()
        fixture.pool.open()
        let first = try fixture.checkOut()
        let second = try fixture.checkOut()
        fixture.pool.checkIn(first, healthy: false)
        #expect(fixture.discarded.withLock { $0 } == [1])
        _ = fixture.pool.close()
        fixture.pool.checkIn(second, healthy: true)
        #expect(fixture.discarded.withLock { $0 } == [1, 2])
    }

    @Test func pinnedSnapshotsAreHandedBackByCloseAndNotTakenAfterIt() {
        let fixture = Fixture()
        let early = Snapshot()
        #expect(!fixture.pool.register(early), "registered before open")
        fixture.pool.open()
        let kept = Snapshot()
        let ended = Snapshot()
        #expect(fixture.pool.register(kept) && fixture.pool.register(ended))
        fixture.pool.unregister(ended)
        do {
            let gone = Snapshot()
            #expect(fixture.pool.register(gone))
        }
        let (_, pinned) = fixture.pool.close()
        // Only the one still registered and alive (the pool holds snapshots weakly).
        #expect(pinned.count == 1 && pinned.first === kept)
        #expect(!fixture.pool.register(Snapshot()))
    }
}
