
/// A store that many runners write at once holds each source for one runner at a
/// time (PostgreSQL store guarantees 7): the hold ends when its holder lets go or its
/// session ends, also when its process or host dies. A file store has no such
/// holds: one writing run holds the whole file (`swell`'s lock file).
package protocol SourceHolding: Sendable {
    /// Takes the hold on `source`. With `wait`, blocks until it is free (calling `onWait`
    /// with the holder first); without, throws `SourceHeldError` naming the holder.
    func holdSource(_ source: String, wait: Bool, onWait: (SourceHolder) -> Void) throws -> any SourceHold
    /// The sources held now, by whom (for `swell status`), among `sources`.
    func holders(of sources: [String]) throws -> [(source: String, holder: SourceHolder)]
}

/// A held source; `release()` (or the end of its session) lets it go.
package protocol SourceHold: AnyObject, Sendable {
    func release()
}

/// Who holds a source: the runner's host and process id, and since when.
package struct SourceHolder: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var pid: String
    package var since: String

    package init(host: String, pid: String, since: String) {
        self.host = host
        self.pid = pid
        self.since = since
    }

    package var description: String { "host \(host), pid \(pid), since \(since)" }
}

/// Another runner holds the source.
package struct SourceHeldError: Error, Sendable, CustomStringConvertible {
    package var source: String
    package var holder: SourceHolder?

    package init(source: String, holder: SourceHolder?) {
        self.source = source
        self.holder = holder
    }

    package var description: String {
        "source \(source) is being run by another runner (\(holder?.description ?? "holder unknown"))"
    }
}
