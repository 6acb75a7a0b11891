import Foundation

/// A bounded queue between the fetch stage and the upsert workers: `put`
/// blocks while it is full (backpressure, so memory does not grow with the
/// input), `take` blocks while it is empty and returns nil once it is closed
/// and drained. With capacity 0 it is a hand-off: `put` returns once its item
/// is taken (no item waits in the queue while its producer makes the next).
///
/// `@unchecked Sendable`: every access to its state holds `condition`.
final class BatchQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private let capacity: Int
    private let handOff: Bool
    private var closed = false
    /// Items put and taken so far (a hand-off waits for its own to be taken).
    private var putCount = 0
    private var takenCount = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        handOff = capacity <= 0
    }

    /// Adds an item, waiting for room (for a hand-off: until the item is taken).
    func put(_ item: Element) {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity { condition.wait() }
        items.append(item)
        putCount += 1
        let ticket = putCount
        condition.broadcast()
        if handOff {
            while takenCount < ticket && !closed { condition.wait() }
        }
    }

    /// Items taken so far (for tests of the hand-off).
    var taken: Int {
        condition.lock()
        defer { condition.unlock() }
        return takenCount
    }

    /// The next item, or nil when closed and empty.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        takenCount += 1
        condition.broadcast()
        return item
    }

    /// No more items will come; takers finish what is queued.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
