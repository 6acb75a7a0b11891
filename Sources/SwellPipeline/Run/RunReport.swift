import Foundation
import SwellCalendar

/// The run report (`--report PATH`): what a run did, also when it failed.
public struct RunReport: Codable, Sendable {
    /// One source's counts.
    public struct Source: Codable, Sendable {
        public var name: String
        public var entity: String
        public var pages = 0
        public var notModified = 0
        public var bytes: Int64 = 0
        public var records = 0
        public var inserted = 0
        public var updated = 0
        public var unchanged = 0
        public var deleted = 0
        public var rejected = 0
        public var retries = 0
        public var durationS = 0.0
        /// Version 2: the counts of the entities nested records were upserted into, by entity
        /// (absent from the JSON when the source maps no relationship).
        public var nested: [String: Counts]?

        enum CodingKeys: String, CodingKey {
            case name, entity, pages, bytes, records, inserted, updated, unchanged, deleted, rejected, retries, nested
            case notModified = "not_modified"
            case durationS = "duration_s"
        }
    }

    /// Objects of one entity that nested records inserted, changed, or found as stored.
    public struct Counts: Codable, Sendable, Equatable {
        public var inserted = 0
        public var updated = 0
        public var unchanged = 0

        public init(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0) {
            self.inserted = inserted
            self.updated = updated
            self.unchanged = unchanged
        }
    }

    /// One export's figures.
    public struct Export: Codable, Sendable {
        public var name: String
        public var path: String
        public var rows = 0
        public var bytes: Int64 = 0
        public var sha256 = ""
        public var durationS = 0.0

        enum CodingKeys: String, CodingKey {
            case name, path, rows, bytes, sha256
            case durationS = "duration_s"
        }
    }

    public var pipeline: String
    public var status = "succeeded"
    public var startedAt: String
    public var finishedAt: String
    public var durationS = 0.0
    public var store: String
    public var sources: [Source] = []
    public var exports: [Export] = []
    public var error: String?
    /// The version of Swell that wrote it (absent from reports kept in a store by versions before 0.12).
    public var swellVersion: String? = SwellVersion.current

    enum CodingKeys: String, CodingKey {
        case pipeline, status, store, sources, exports, error
        case swellVersion = "swell_version"
        case startedAt = "started_at"
        case finishedAt = "finished_at"
        case durationS = "duration_s"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pipeline, forKey: .pipeline)
        try container.encode(status, forKey: .status)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(durationS, forKey: .durationS)
        try container.encode(store, forKey: .store)
        try container.encode(sources, forKey: .sources)
        try container.encode(exports, forKey: .exports)
        try container.encode(error, forKey: .error)  // null on success, as the contract shows
        try container.encodeIfPresent(swellVersion, forKey: .swellVersion)
    }

    /// UTC ISO-8601 with `Z`, to the second (`ISODate`: Foundation's formatter
    /// would load ICU's time-zone data, megabytes of memory).
    static func timestamp(_ date: Date) -> String {
        ISODate.string(fromSeconds: date.timeIntervalSince1970.rounded(.down))
    }

    /// Writes the report as JSON (creating the directory), atomically.
    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(self)
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }
}
