import SwellLocks

/// The run's room for pages requested ahead of the page loop, shared by every `PageStream`
/// of the run (README, "Real networks": memory stays bounded by what is in flight).
///
/// A page the loop asks for is always requested. A page requested *ahead* — an offset or
/// page-number guess, the next page of a `Link` chain, an item's pages while the loop is on
/// an earlier item — takes room first: the bytes of the pages that arrived and wait to be
/// parsed, plus an estimate (the mean page so far) for each page ahead still in flight, stay
/// within `limit`. A stream refused room waits; when pages are taken and room frees, the
/// waiting streams are told in item order, so the earlier item's pages come first.
final class PagesAhead: Sendable {
    /// The default room: 32 MiB of pages arrived or in flight ahead of the loop.
    static let defaultLimit = 32 << 20

    private struct Waiting {
        let item: Int
        weak var stream: PageStream?
    }

    private struct State {
        var heldBytes = 0
        var reserved = 0
        var pagesSeen = 0
        var bytesSeen = 0
        var highWater = 0
        var waiting: [Waiting] = []

        /// The mean page so far; 64 KiB before the first.
        var estimate: Int { pagesSeen == 0 ? 64 << 10 : max(1, bytesSeen / pagesSeen) }
    }

    /// The most bytes of pages ahead at once.
    let limit: Int
    private let state = LockedValue(State())

    init(limit: Int = PagesAhead.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// Room for one page ahead of `stream` (item `item`): true and counted until the page
    /// arrives or is cancelled, or false, and the stream is told (`roomFreed`) when room frees.
    func reserve(for stream: PageStream, item: Int) -> Bool {
        state.withLock { state in
            if state.heldBytes + (state.reserved + 1) * state.estimate <= limit || (state.heldBytes == 0 && state.reserved == 0) {
                state.reserved += 1
                return true
            }
            if !state.waiting.contains(where: { $0.stream === stream }) {
                let index = state.waiting.firstIndex { $0.item > item } ?? state.waiting.endIndex
                state.waiting.insert(Waiting(item: item, stream: stream), at: index)
            }
            return false
        }
    }

    /// A page arrived, of `bytes`: held until it is taken (`release`). `reserved`: it was a page
    /// ahead, whose reservation ends now.
    func arrived(bytes: Int, reserved: Bool) {
        state.withLock { state in
            if reserved { state.reserved = max(0, state.reserved - 1) }
            state.heldBytes += bytes
            state.pagesSeen += 1
            state.bytesSeen += bytes
            state.highWater = max(state.highWater, state.heldBytes)
        }
    }

    /// Pages taken or dropped (`bytes` of arrived pages, `reservations` of pages that never
    /// arrived): their room frees, and the streams waiting for it are told.
    func release(bytes: Int, reservations: Int = 0) {
        guard bytes > 0 || reservations > 0 else { return }
        let waiting = state.withLock { state -> [PageStream] in
            state.heldBytes = max(0, state.heldBytes - bytes)
            state.reserved = max(0, state.reserved - reservations)
            defer { state.waiting.removeAll() }
            return state.waiting.compactMap(\.stream)
        }
        for stream in waiting { stream.roomFreed() }
    }

    /// A stream that closed waits no more.
    func forget(_ stream: PageStream) {
        state.withLock { $0.waiting.removeAll { $0.stream == nil || $0.stream === stream } }
    }

    /// The most bytes of arrived pages held at once so far (tests read it).
    var highWaterBytes: Int { state.withLock { $0.highWater } }
}
