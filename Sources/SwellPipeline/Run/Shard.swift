/// `--shard I/N`: the runner takes only the sources (after `for_each` expansion)
/// whose position in the file, counted from 0, is `index` modulo `count`. N runners
/// with shards 0/N … N-1/N cover every source exactly once.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// This shard's number, I (0 ≤ `index` < `count`).
    public let index: Int
    /// How many shards there are, N (at least 1).
    public let count: Int

    /// Shard `index` of `count`; nil unless 0 ≤ `index` < `count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, index >= 0, index < count else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `I/N` (`0/3`); nil unless 0 ≤ I < N.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// Whether the source at `position` is this shard's.
    public func takes(position: Int) -> Bool { position % count == index }

    /// `I/N`, as `--shard` takes it.
    public var description: String { "\(index)/\(count)" }
}
