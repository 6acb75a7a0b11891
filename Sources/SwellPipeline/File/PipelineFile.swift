import Foundation
import SwellJSON
import SwellContexts

/// A pipeline file, loaded and validated: what to fetch, how to map it into
/// entities, and what to export. A value; see `PipelineFileLoader`.
public struct PipelineFile: Sendable {
    /// The file it was read from.
    public var path: String
    /// The contract version the file says it follows: 1, 2 (nested records and relationships), 3
    /// (auth, bodies, offsets, CSV in, history and delta exports) or 4 (concurrency, rate
    /// limits, resume).
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
    /// The environment variables those values came from, name → value (a kept position names
    /// the variable where a page's URL echoes its value: README, "Resuming a stopped source").
    public var secretVariables: [String: String] = [:]
    /// Whether the store keeps its history (`history: true`, version 3): exports with
    /// `changes: since_last` read it.
    public var history = false
    /// How long history is kept after every delta export has read it (`history: { keep_days }`;
    /// default 7): other readers of the history (an app merging it) have that long.
    public var historyKeepDays = 7.0
    /// Requests in flight at once across the run (`concurrency`, version 4): 4 unless a
    /// version-4 file says otherwise; files of versions 1–3 make one request at a time.
    /// `--concurrency` overrides it (`RunOptions.concurrency(for:)`).
    public var concurrency = 1
    /// Budgets per host (`hosts`, version 4), in file order: for every source reaching that host.
    public var hosts: [HostBudget] = []

    /// `concurrency`'s default in a version-4 file.
    public static let defaultConcurrency = 4
    /// The largest `concurrency` (and `prefetch`) a file or `--concurrency` may give.
    public static let concurrencyRange = 1...256

    /// The budget that holds requests to `url`: of the `hosts` keys that match it
    /// (`HostKey.matches(url:)`), the most specific — `scheme://host:port` over
    /// `scheme://host` over a bare host. Nil when none matches.
    public func hostBudget(for url: String) -> HostBudget? {
        hosts.filter { $0.key.matches(url: url) }.max { $0.key.specificity < $1.key.specificity }
    }

    /// What nil means in the file's predicates (exports' and `for_each`'s `where`): versions
    /// 1–3 keep their rule, a null matching only `== NIL` and `!= NIL`; from version 4,
    /// NSPredicate's, as every library predicate has (Store guarantees 63).
    public var predicateNilMatching: FetchPredicate.NilMatching { Self.predicateNilMatching(version: version) }

    /// The nil rule of a file of `version` (`predicateNilMatching`).
    public static func predicateNilMatching(version: Int) -> FetchPredicate.NilMatching {
        version >= 4 ? .nsPredicate : .onlyNilTests
    }

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
    /// The entity's name (`[A-Za-z_][A-Za-z0-9_]*`): its table's name in the store.
    public var name: String
    /// The key attributes (`key`): the uniqueness constraint upserts match on.
    public var key: [String]
    /// The attributes with their types, each a column of the same name.
    public var attributes: [AttributeDescription]
    /// The relationships (version 2; empty in version 1).
    public var relationships: [RelationshipDescription] = []

    /// An entity named `name` with these key, attributes and relationships.
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
    /// For a to-one given by its destination's key (`{ key: author_id }`, version 3): whether
    /// a key no destination has yet inserts one holding only its key (`create: true`)
    /// rather than being a bad record. The mapping then maps the destination's key from
    /// the value at `path` and nothing else.
    public var byKey: KeyReference? = nil
}

/// How a to-one given by its destination's key treats a key no destination has.
public struct KeyReference: Sendable, Equatable {
    /// Insert a destination holding only the key (its other attributes must be optional).
    public var create: Bool
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
    /// An offset counted up by `limit` from `start` (version 3), sent as `parameter`, with
    /// `limit` sent as `limitParameter` when given; it ends with a page of fewer than `limit`
    /// records, or when the offset reaches the number at `total` (a dot path) if given.
    case offset(parameter: String, limitParameter: String?, limit: Int, start: Int, total: [String]?)
}

/// What a source does with records whose key exists already, and with keys not seen.
public enum SyncMode: String, Sendable {
    /// `upsert` (default): insert new keys, update existing ones; `append`: insert only, a key
    /// stored already is a bad record; `replace`: upsert, then, only if every page arrived,
    /// delete the rows whose key was not seen; `insert` (version 3): insert new keys only, a
    /// stored key is left as it is and counted unchanged.
    case upsert, append, replace, insert
}

/// What a bad record does to the run.
public enum ErrorPolicy: String, Sendable {
    /// `fail` (default): a bad record fails the run (exit 65); `skip`: it goes to the rejects
    /// file and the run goes on.
    case fail, skip
}

/// Incremental sync: the largest value of `cursor` seen is kept and sent as `parameter`.
public struct IncrementalSpec: Sendable, Equatable {
    /// The attribute whose largest value a successful run keeps in the store (`cursor`).
    public var cursor: String
    /// The query parameter that carries the kept value on the next run (`param`).
    public var parameter: String
    /// The value sent while none is kept (`initial`, version 3).
    public var initial: String? = nil
    /// Seconds taken off the kept value before it is sent (`lag`, version 3): records
    /// changed shortly before the last run's newest are read again.
    public var lag: Double? = nil
}
/// One source: where to fetch, how to read pages, how to map records.
public struct SourceSpec: Sendable {
    /// The source's name, unique in the file (for a `for_each` expansion, this expansion's).
    public var name: String
    /// The entity its records are upserted into.
    public var entity: String
    /// Where pages come from: `http://`, `https://`, `file://` or a plain path (after `${VAR}` interpolation).
    public var url: String
    /// Whether pages are NDJSON (`format: ndjson`) rather than JSON.
    public var isNDJSON: Bool
    /// Dot path to the records array in a page; nil: the page itself is the array (JSON)
    /// or each line is a record (NDJSON).
    public var records: [String]?
    /// Request headers, in file order (values after `${VAR}` interpolation).
    public var headers: [(name: String, value: String)]
    /// How the next page is found (`paginate`); nil: the first page is the only one.
    public var pagination: Pagination?
    /// Attribute name → where it comes from (every attribute has one; default: its own name).
    public var fields: [String: FieldSpec]
    /// Relationships mapped from nested objects and arrays (version 2).
    public var nested: [NestedMapping] = []
    /// The source's date format (`dates`; default `.iso8601`); a field's own format wins.
    public var dates: DateFormat
    /// What happens to stored keys and to keys not seen (`mode`; default `.upsert`).
    public var mode: SyncMode
    /// What a bad record does (`on_error`; default `.fail`).
    public var onError: ErrorPolicy
    /// Where skipped records go (`rejects`; default `rejects/<pipeline>-<source>.ndjson`).
    public var rejects: String
    /// Seconds allowed for one request (`timeout`; default 30).
    public var timeout: Double
    /// Further attempts after a connection error, a timeout, 429 or 5xx (`retries`; default 3).
    public var retries: Int
    /// The largest response accepted, in bytes (`max_bytes`); nil: no limit.
    public var maxBytes: Int64?
    /// Incremental sync (`incremental`); nil: every run fetches from the start.
    public var incremental: IncrementalSpec?
    /// For a source expanded from `for_each`: the name written in the file (`--only` may
    /// name it to pick every expansion) and this expansion's item.
    public var forEach: (source: String, item: String)?
    /// How it proves who it is (`auth`, version 3).
    public var auth: SourceAuth? = nil
    /// `GET` (default), `POST` or `PUT` (version 3).
    public var method = "GET"
    /// The JSON body sent with each page request (`body`, version 3).
    public var body: JSONValue? = nil
    /// Statuses read as a page with no records (`on_status: {404: empty}`, version 3).
    public var emptyStatuses: Set<Int> = []
    /// Where the paging parameter goes (`paginate.in`, version 3).
    public var pagingIn = ParameterPlacement.query
    /// Whether a page that is one JSON object is one record (version 3, without `records`).
    public var objectPageIsRecord = false
    /// Whether the source is a GraphQL query (`graphql`, version 3): its body is the query
    /// and its variables, an `errors` array in an answer is read as GraphQL's.
    public var isGraphQL = false
    /// `format: csv` (version 3): how its pages' CSV reads; its rows are then read as NDJSON
    /// records (`isNDJSON`), each value a string, an empty field null.
    public var csv: CSVInput? = nil
    /// `for_each: { entity, value, where }` (version 3): one source per stored value, read
    /// when the run reaches this source (after the sources before it are saved).
    public var forEachEntity: ForEachEntity? = nil
    /// Where a page says whether another follows (`paginate.has_more`, GraphQL's
    /// `pageInfo.hasNextPage`): `false` there ends the pagination.
    public var hasMore: [String]? = nil
    /// This source's own token bucket (`rate_limit`, version 4), beside its host's; nil: none.
    public var rateLimit: RateLimit? = nil
    /// The longest the source waits for a budget or a server's reset, in seconds (`max_wait`,
    /// version 4; default 15 minutes): a longer wait fails the source (69).
    public var maxWait: Double = SourceSpec.defaultMaxWait
    /// Pages requested ahead where the next request does not need this page's answer
    /// (`prefetch`, version 4; offset and page-number paging); nil: the run's concurrency.
    public var prefetch: Int? = nil
    /// Whether a source that stopped resumes where its last saved batch ended (`resume`,
    /// version 4; default true, in every version).
    public var resume = true
    /// For an expansion of a `for_each` whose item cannot be used: why. It never runs
    /// (`PipelineRunner` fails the run or writes it to the rejects file, after `on_error`).
    public var itemRejection: ForEachItemRejection? = nil

    /// `max_wait`'s default: 15 minutes.
    public static let defaultMaxWait: Double = 15 * 60

    /// The pages requested ahead in a run of `concurrency` requests at once: `prefetch`, else the concurrency.
    public func prefetch(runConcurrency concurrency: Int) -> Int { prefetch ?? concurrency }

    /// A GraphQL request's body: `{"query": …, "variables": {…}}`.
    static func graphQLBody(query: String, variables: JSONValue) -> JSONValue {
        .object(JSONObject(members: [("query", .string(query)), ("variables", variables)]))
    }

    /// Whether `--only NAME` picks this source: its own name, or its `for_each` source's.
    public func isNamed(_ name: String) -> Bool { self.name == name || forEach?.source == name }
}

/// How a CSV source's pages read (`csv: { delimiter, header }`).
public struct CSVInput: Sendable, Equatable {
    /// The byte between fields (default `,`).
    public var delimiter: UInt8 = UInt8(ascii: ",")
    /// Whether the first row names the fields (default true); without, they are `"1"`, `"2"`, ….
    public var header = true
}

/// The stored values a source runs once for each (`for_each: { entity, value, where }`).
public struct ForEachEntity: Sendable, Equatable {
    /// The entity whose rows give the items.
    public var entity: String
    /// The attribute whose values are the items (nulls skipped, each value once).
    public var value: String
    /// Which rows (`where`, a predicate as exports take it); nil: all.
    public var predicate: String?
}

/// One CSV column of an export.
public struct ExportColumn: Sendable, Equatable {
    /// The column's name in the header row (default: the attribute's name).
    public var name: String
    /// An attribute, or (version 2) a key path through relationships (`author.login`, `labels.name`).
    public var attribute: String
    /// A date pattern (LDML) for a date column (`format`); nil: ISO-8601 UTC.
    public var format: String?
    /// For a key path through a to-many: the separator its values are joined with.
    public var join: String?
}

/// One export: which rows of which entity, in what order, into which file.
public struct ExportSpec: Sendable {
    /// The export's name, unique in the file.
    public var name: String
    /// The entity whose rows are exported.
    public var entity: String
    /// The file written (`path`): gzipped when it ends with `.gz`, else plain CSV.
    public var path: String
    /// The CSV columns, in order.
    public var columns: [ExportColumn]
    /// The `where` predicate rows must match; nil: every row.
    public var predicate: String?
    /// Attribute and direction; the entity's key is appended as the last tie-breaker.
    public var sort: [(attribute: String, ascending: Bool)]
    /// Whether the first line holds the column names (`header`; default true).
    public var header: Bool
    /// The gzip level, 1...9 (`gzip_level`; default 6); used only for a `.gz` path.
    public var gzipLevel: Int
    /// Whether a text cell starting with `=`, `+`, `-` or `@` gets a leading `'` (`escape_formulas`; default false).
    public var escapeFormulas: Bool

    /// `changes: since_last` (version 3): only the rows inserted, updated or deleted since the
    /// export last succeeded, after a first column `_change`.
    public var changesSinceLast = false

    /// Whether the file is gzipped (its path ends with `.gz`).
    public var isGzip: Bool { path.hasSuffix(".gz") }
}
