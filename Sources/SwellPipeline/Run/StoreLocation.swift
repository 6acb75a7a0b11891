import Foundation

/// Where a pipeline's store is: the value to open (a SQLite path, or a
/// `postgres://` URL) and the form every message shows.
///
/// A store built from the environment (`store: .swell/${SECRET_DIR}.sqlite`,
/// `postgres://app:${PGPASS}@db/swell`) carries secrets, so the shown form
/// goes through the pipeline's `Redactor`, which also hides the password of
/// any URL. `description` is the shown form: interpolating a location into a
/// message, a log line or the report cannot print the raw value.
public struct StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// The value to open. Never print it: print the location itself.
    public let rawValue: String
    /// What messages, logs, the report and `status` show.
    public let shown: String

    /// The location `rawValue`, shown through `redactor`.
    public init(_ rawValue: String, redactor: Redactor) {
        self.rawValue = rawValue
        self.shown = redactor(rawValue)
    }

    /// The shown form (`shown`), never the raw value.
    public var description: String { shown }

    /// Whether it names a PostgreSQL database (`postgres://` or `postgresql://`).
    public var isPostgres: Bool {
        let lower = rawValue.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }
}
