import Logging
import SwellLocks

/// A log handler that keeps every message with its metadata, for tests that check what a
/// failure nobody can throw to (a fault's read, a second save failure) logged.
public final class CapturedLog: Sendable {
    /// One message as logged.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    public let entries = LockedValue<[Entry]>([])

    public init() {}

    /// A logger whose messages (every level) land in `entries`.
    public var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).mapValues { "\($0)" }
            log.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: fields)) }
        }
    }
}
