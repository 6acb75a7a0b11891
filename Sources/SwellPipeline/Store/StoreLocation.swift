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

    /// The URL scheme when the location is a URL (`scheme://…`, lowercased); nil for a path.
    var urlScheme: String? {
        guard let separator = rawValue.range(of: "://") else { return nil }
        let scheme = rawValue[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return scheme.lowercased()
    }

    /// Checks that the location is a store `swell` opens: a SQLite file's path, or a
    /// `postgres://` / `postgresql://` URL.
    ///
    /// - Throws: `PipelineError` `.usage` (exit 64) for any other `scheme://`, naming the
    ///   scheme and the forms `swell` takes: `memory://` too, whose store would be gone when
    ///   the run ends (and would otherwise become a SQLite file named `memory:/…`).
    public func validate() throws(PipelineError) {
        guard let scheme = urlScheme, !isPostgres else { return }
        let why = scheme == "memory" ? " (an in-memory store is gone when the process ends)" : ""
        throw PipelineError(.usage, "the store \(self) is a \(scheme):// URL, which swell does not open\(why): "
            + "a store is a SQLite file's path or a postgres:// (postgresql://) URL")
    }
}
