import Foundation
import SwellCalendar

/// The run report (`--report PATH`): what a run did, also when it failed.
public struct RunReport: Codable, Sendable {
    /// One source's counts.
    public struct Source: Codable, Sendable {
        /// The source's name (`name`).
        public var name: String
        /// The entity its records are upserted into (`entity`).
        public var entity: String
        /// Pages fetched, those answered 304 included (`pages`).
        public var pages = 0
        /// Pages answered 304 Not Modified (`not_modified`).
        public var notModified = 0
        /// Bytes of response bodies received (`bytes`).
        public var bytes: Int64 = 0
        /// Records read from the pages, rejected ones included (`records`).
        public var records = 0
        /// Records whose key was not stored yet (`inserted`).
        public var inserted = 0
        /// Records whose stored values changed (`updated`).
        public var updated = 0
        /// Records that arrived equal to what was stored (`unchanged`).
        public var unchanged = 0
        /// Rows `mode: replace` deleted because their key was not seen (`deleted`); 0 in other modes.
        public var deleted = 0
        /// Bad records written to the rejects file under `on_error: skip` (`rejected`).
        public var rejected = 0
        /// Further request attempts after connection errors, timeouts, 429s or 5xx (`retries`).
        public var retries = 0
        /// Pages an earlier run saved that this run did not fetch again (`resumed_from`): it
        /// resumed where that run stopped; 0 when it started at the first page.
        public var resumedFrom = 0
        /// HTTP requests made: attempts, redirect hops and token requests, pages requested ahead
        /// and not needed included (`requests`, version 4).
        public var requests = 0
        /// Seconds its requests were held by rate budgets and servers' resets (`waited_s`, version 4).
        public var waitedS = 0.0
        /// Seconds the source took, to the millisecond (`duration_s`).
        public var durationS = 0.0
        /// Version 2: the counts of the entities nested records were upserted into, by entity
        /// (absent from the JSON when the source maps no relationship).
        public var nested: [String: Counts]?

        enum CodingKeys: String, CodingKey {
            case name, entity, pages, bytes, records, inserted, updated, unchanged, deleted, rejected, retries, requests, nested
            case notModified = "not_modified"
            case waitedS = "waited_s"
            case durationS = "duration_s"
            case resumedFrom = "resumed_from"
        }
    }

    /// Objects of one entity that nested records inserted, changed, or found as stored.
    public struct Counts: Codable, Sendable, Equatable {
        /// Objects inserted: their key was not stored yet.
        public var inserted = 0
        /// Objects whose stored values changed.
        public var updated = 0
        /// Objects that arrived equal to what was stored.
        public var unchanged = 0

        /// Counts with these figures (0 unless given).
        public init(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0) {
            self.inserted = inserted
            self.updated = updated
            self.unchanged = unchanged
        }
    }

    /// One export's figures.
    public struct Export: Codable, Sendable {
        /// The export's name (`name`).
        public var name: String
        /// The file written, as the pipeline file names it (`path`).
        public var path: String
        /// Data rows written, the header row not counted (`rows`).
        public var rows = 0
        /// Bytes of the file written, after gzip when gzipped (`bytes`).
        public var bytes: Int64 = 0
        /// The SHA-256 of the file written, in lowercase hex (`sha256`).
        public var sha256 = ""
        /// Seconds the export took, to the millisecond (`duration_s`).
        public var durationS = 0.0

        enum CodingKeys: String, CodingKey {
            case name, path, rows, bytes, sha256
            case durationS = "duration_s"
        }
    }

    /// The pipeline's name (`pipeline`).
    public var pipeline: String
    /// `succeeded`, or `failed` when the run failed (`status`).
    public var status = "succeeded"
    /// When the run started: UTC ISO-8601 with `Z`, to the second (`started_at`).
    public var startedAt: String
    /// When the run finished, in the same form (`finished_at`).
    public var finishedAt: String
    /// The run's length in seconds, to the millisecond (`duration_s`).
    public var durationS = 0.0
    /// The store, as messages show it: secrets and passwords hidden (`store`).
    public var store: String
    /// The sources run, in order, up to and including one that failed (`sources`).
    public var sources: [Source] = []
    /// The exports written, in file order (`exports`).
    public var exports: [Export] = []
    /// The failure's message, secrets hidden (`error`); nil on success, written as `null`.
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

    /// Writes the contract's keys: `error` as `null` on success, `swell_version` only when present.
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

    /// The report of a run that never started: its pipeline file did not load or validate
    /// (`error` lists every problem). `pipeline` is the file's name without its extension (the
    /// file's own `name` may be what failed); `store` is empty, no store having been chosen.
    public static func notStarted(pipelineFile path: String, error: String) -> RunReport {
        let now = timestamp(Date())
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var report = RunReport(pipeline: name, startedAt: now, finishedAt: now, store: "")
        report.status = "failed"
        report.error = error
        return report
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
