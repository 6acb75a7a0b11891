import SwellStore

/// A pipeline file, loaded and validated: what to fetch, how to map it into
/// entities, and what to export. A value; see `PipelineFileLoader`.
public struct PipelineFile: Sendable {
    /// The file it was read from.
    public var path: String
    /// The contract version the file says it follows (1, or 2: nested records and relationships).
    public var version: Int = 1
    /// The pipeline's name (`[a-z0-9_-]+`).
    public var name: String
    /// The store path (after `${VAR}` interpolation; `--store` may override it).
    public var store: String
    /// The entities, in file order.
    public var entities: [PipelineEntity]
    /// The sources, in file order.
    public var sources: [SourceSpec]
    /// The exports, in file order.
    public var exports: [ExportSpec]
    /// Values that came from the environment: never printed, shown as `***`.
    public var secrets: Set<String>

    /// The object model the store is kept in.
    public var model: ManagedObjectModel {
        ManagedObjectModel(entities: entities.map(\.description))
    }

    /// The entity named `name`.
    public func entity(named name: String) -> PipelineEntity? {
        entities.first { $0.name == name }
    }
}

/// An entity of a pipeline: attributes with types, relationships (version 2),
/// and the key upserts match on.
public struct PipelineEntity: Sendable {
    public var name: String
    public var key: [String]
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription] = []

    public init(name: String, key: [String], attributes: [AttributeDescription], relationships: [RelationshipDescription] = []) {
        self.name = name
        self.key = key
        self.attributes = attributes
        self.relationships = relationships
    }

    /// The store's description of it.
    public var description: EntityDescription {
        EntityDescription(name: name, attributes: attributes, relationships: relationships, uniquenessConstraint: key)
    }
}

/// A relationship mapped from a record's nested object or array (version 2):
/// `relationship: { path, fields }` under a source's `fields`. Each nested object
/// is upserted into the relationship's destination by its key and linked.
public struct NestedMapping: Sendable, Equatable {
    /// The relationship of the mapped entity.
    public var relationship: String
    /// The destination entity.
    public var destination: String
    /// Dot path to the nested object (to-one) or array (to-many) in the record.
    public var path: [String]
    /// Attribute name → where it comes from in the nested object (`["."]`: the element itself).
    public var fields: [String: FieldSpec]
    /// The destination's own nested relationships, to any depth.
    public var nested: [NestedMapping]
}

/// How dates arrive in a source's records.
public enum DateFormat: Sendable, Equatable {
    /// ISO-8601 date-times (with fractions and offsets), or plain dates.
    case iso8601
    /// Unix seconds (a number or a string of digits).
    case unix
    /// Unix milliseconds.
    case unixMilliseconds
    /// A Unicode (LDML) pattern such as `yyyy-MM-dd HH:mm`, UTC unless it has a zone.
    case pattern(String)
}

/// Where one attribute's value comes from in a record.
public struct FieldSpec: Sendable, Equatable {
    /// Dot path of keys in the record.
    public var path: [String]
    /// A date format for this field, over the source's `dates`.
    public var dateFormat: DateFormat?
}

/// How a source finds its next page.
public enum Pagination: Sendable, Equatable {
    /// A dot path in the page body to the next page's URL.
    case next(path: [String])
    /// RFC 8288 `Link: <…>; rel="next"`.
    case linkHeader
    /// A query parameter counted up from `start` until a page has no records.
    case page(parameter: String, start: Int)
    /// A dot path to an opaque cursor, sent back as query parameter `parameter`.
    case cursor(path: [String], parameter: String)
}

/// What a source does with records whose key exists already, and with keys not seen.
public enum SyncMode: String, Sendable {
    case upsert, append, replace
}

/// What a bad record does to the run.
public enum ErrorPolicy: String, Sendable {
    case fail, skip
}

/// Incremental sync: the largest value of `cursor` seen is kept and sent as `parameter`.
public struct IncrementalSpec: Sendable, Equatable {
    public var cursor: String
    public var parameter: String
}

/// One source: where to fetch, how to read pages, how to map records.
public struct SourceSpec: Sendable {
    public var name: String
    public var entity: String
    public var url: String
    public var isNDJSON: Bool
    public var records: [String]?
    public var headers: [(name: String, value: String)]
    public var pagination: Pagination?
    /// Attribute name → where it comes from (every attribute has one; default: its own name).
    public var fields: [String: FieldSpec]
    /// Relationships mapped from nested objects and arrays (version 2).
    public var nested: [NestedMapping] = []
    public var dates: DateFormat
    public var mode: SyncMode
    public var onError: ErrorPolicy
    public var rejects: String
    public var timeout: Double
    public var retries: Int
    public var maxBytes: Int64?
    public var incremental: IncrementalSpec?
    /// For a source expanded from `for_each`: the name written in the file (`--only` may
    /// name it to pick every expansion) and this expansion's item.
    public var forEach: (source: String, item: String)?

    /// Whether `--only NAME` picks this source: its own name, or its `for_each` source's.
    public func isNamed(_ name: String) -> Bool { self.name == name || forEach?.source == name }
}

/// One CSV column of an export.
public struct ExportColumn: Sendable, Equatable {
    public var name: String
    /// An attribute, or (version 2) a key path through relationships (`author.login`, `labels.name`).
    public var attribute: String
    public var format: String?
    /// For a key path through a to-many: the separator its values are joined with.
    public var join: String?
}

/// One export: which rows of which entity, in what order, into which file.
public struct ExportSpec: Sendable {
    public var name: String
    public var entity: String
    public var path: String
    public var columns: [ExportColumn]
    public var predicate: String?
    /// Attribute and direction; the entity's key is appended as the last tie-breaker.
    public var sort: [(attribute: String, ascending: Bool)]
    public var header: Bool
    public var gzipLevel: Int
    public var escapeFormulas: Bool

    /// Whether the file is gzipped (its path ends with `.gz`).
    public var isGzip: Bool { path.hasSuffix(".gz") }
}
