import SwellHTTP
import SwellContexts

/// A pipeline as `swell init` guessed it from one sample page: the entities
/// inferred from the records, one source reading the sample's URL, one CSV
/// export of the main entity, and a reason for every guess (written as YAML
/// comments by `yaml`).
///
/// A value built by `PipelineInference.infer(_:)`: no I/O.
public struct InitPipeline: Sendable, Equatable {
    /// The pipeline's name (`[a-z0-9_-]+`).
    public var name: String
    /// Where the sample came from, as written in the file (`${VAR}` kept as typed).
    public var url: String
    /// Request headers as typed (`${VAR}` kept, never their values).
    public var headers: [HTTPHeader]
    /// Dot path to the records array; nil when the page itself is the array.
    public var records: [String]?
    /// Why these are the records.
    public var recordsReason: String
    /// How many records the sample holds.
    public var recordCount: Int
    /// The pagination form found, if any.
    public var pagination: Pagination?
    /// Why this pagination (or why none).
    public var paginationReason: String
    /// The entities, the main one (the records') first.
    public var entities: [InferredEntity]
    /// The CSV export of the main entity.
    public var export: InitExport
    /// The version the file says: 2, or 3 when it uses a version-3 form (a page that is one
    /// object, offset paging, CSV).
    public var version = 2
    /// Set when the sample was CSV: the source's `format: csv` and its delimiter.
    public var csv: CSVInput?
    /// Set when the sample answered a GraphQL query (`--graphql`): the source's `graphql`.
    public var graphQL: InitGraphQL?

    /// The main entity: the one the records are upserted into.
    public var mainEntity: InferredEntity { entities[0] }
}

/// An entity inferred from a set of JSON objects (the records, or the objects
/// nested at one path of them).
public struct InferredEntity: Sendable, Equatable {
    /// A valid entity name, from the records' path, the pipeline's name or the nested JSON key.
    public var name: String
    /// The key attributes (one, or every required scalar attribute when no field is unique).
    public var key: [String]
    /// Why this key.
    public var keyReason: String
    /// The attributes, each with its type and why.
    public var attributes: [InferredAttribute]
    /// The relationships to entities inferred from nested objects (empty when there are none).
    public var relationships: [InferredRelationship]
    /// JSON keys left out (a dot or an empty name: no dot path can address them), with why.
    public var skipped: [String]

    /// The attribute named `name`.
    public func attribute(_ name: String) -> InferredAttribute? { attributes.first { $0.name == name } }
    /// The relationship named `name`.
    public func relationship(_ name: String) -> InferredRelationship? { relationships.first { $0.name == name } }
}

/// An attribute with its type, whether it is optional, and why.
public struct InferredAttribute: Sendable, Equatable {
    /// A valid attribute name (the JSON key itself when it is one).
    public var name: String
    /// The JSON key it comes from.
    public var field: String
    /// The inferred type, without the optional mark (see `isOptional`).
    public var type: AttributeType
    /// Whether it is optional (`string?`): the key was null or missing in some object.
    public var isOptional: Bool
    /// Why this type (and why optional, when it is).
    public var reason: String

    /// The type as the file writes it: `integer`, `string?`, ….
    public var typeText: String { type.rawValue + (isOptional ? "?" : "") }
}

/// A relationship to an entity inferred from nested objects: to-one from an
/// object, to-many from an array of objects.
public struct InferredRelationship: Sendable, Equatable {
    /// A valid relationship name.
    public var name: String
    /// The JSON key of the nested object or array.
    public var field: String
    /// The destination entity's name.
    public var destination: String
    /// Whether it is to-many (from an array of objects) rather than to-one (from an object).
    public var isToMany: Bool
    /// Why a relationship of this kind.
    public var reason: String
}

/// The export `swell init` writes: the main entity's key and scalar attributes as CSV columns.
public struct InitExport: Sendable, Equatable {
    /// The export's name: `<pipeline>-csv`.
    public var name: String
    /// The CSV file it writes: `out/<pipeline>.csv`.
    public var path: String
    /// The columns: the main entity's key attributes, then its scalar attributes.
    public var columns: [String]
}
