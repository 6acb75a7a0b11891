/// A field mapping compiled once into the plan a `JSONProjectionReader`
/// follows: which values of each record to read, and as what.
///
/// A field is a path of object keys from the record's root (`["id"]`,
/// `["author", "name"]`; the empty path is the record itself) and the kind its
/// value is read as. Paths may share prefixes, nest in one another
/// (`["author"]` as `.json` and `["author", "name"]` as `.string`), and repeat
/// with different kinds; every field gets its own value.
///
/// Lookup follows `JSONValue.value(at:)`: when an object has a key twice, the
/// later member wins, and a path that meets anything but an object on its way
/// (a string, an array, `null`) leads to a missing value.
public struct JSONProjection: Sendable {
    /// What a field's value is read as. An explicit `null` is `.null` for every kind.
    public enum Kind: Sendable, Hashable {
        /// An `Int64`, exactly: `12`, `1e2` and `10.0` are integers; `1.5`, `1e-2`
        /// and numbers beyond `Int64` are mismatches, as is anything not a number.
        case integer
        /// The nearest `Double` of a number (correctly rounded); a number too large
        /// for a finite `Double` (`1e400`), or anything not a number, is a mismatch.
        case double
        /// `true` or `false`; anything else is a mismatch.
        case boolean
        /// A string's UTF-8 bytes, escapes decoded; anything else is a mismatch.
        case string
        /// Any value as compact JSON text: no whitespace, members in input order
        /// (duplicates kept), numbers as written, strings escaped as
        /// `JSONValue.jsonText` escapes them (`"`, `\`, and control characters).
        case json
        /// A scalar as text: a string's decoded bytes, a number as written,
        /// `true` or `false`; an array or object is a mismatch.
        case text
    }

    /// One value to read from every record.
    public struct Field: Sendable, Hashable {
        /// The object keys from the record's root to the value; empty for the record itself.
        public var path: [String]
        /// What the value is read as.
        public var kind: Kind

        /// A field at `path`, read as `kind`.
        public init(_ path: [String], as kind: Kind) {
            self.path = path
            self.kind = kind
        }
    }

    /// The fields, in the order their values are given to a `JSONProjectionSink`.
    public let fields: [Field]

    /// The fields as a trie of keys, walked while the record is read.
    let plan: ProjectionPlan

    /// Whether each record is built whole, as a `JSONValue`, instead of read into fields
    /// (``wholeRecords``).
    public let buildsRecords: Bool

    /// Compiles `fields` into a plan (once per mapping, not per page).
    public init(fields: [Field]) {
        self.fields = fields
        self.plan = ProjectionPlan(fields: fields)
        self.buildsRecords = false
    }

    /// Every record whole, as a `JSONValue` (`JSONProjectionSink.record(_:index:start:end:)`),
    /// in the same one pass over the page, for a reader whose product is a tree: the page
    /// is read exactly as with fields, and each record is built as `JSONPageReader` builds it.
    public static let wholeRecords = JSONProjection(buildingRecords: ())

    private init(buildingRecords: ()) {
        self.fields = []
        self.plan = ProjectionPlan(fields: [])
        self.buildsRecords = true
    }
}
