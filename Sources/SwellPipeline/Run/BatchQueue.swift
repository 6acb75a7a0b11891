import Foundation

/// A bounded queue between the fetch stage and the upsert workers: `put`
/// blocks while it is full (backpressure, so memory does not grow with the
/// input), `take` blocks while it is empty and returns nil once it is closed
/// and drained.
///
/// `@unchecked Sendable`: every access to its state holds `condition`.
final class BatchQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private let capacity: Int
    private var closed = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds an item, waiting for room.
    func put(_ item: Element) {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity { condition.wait() }
        items.append(item)
        condition.broadcast()
    }

    /// The next item, or nil when closed and empty.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
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
