import Foundation

/// The identity of a managed object: a value that crosses queues and contexts.
///
/// An ID is permanent from the moment its object is inserted: it names the same
/// object in every context and in the store, before and after saves. Pass IDs
/// (never objects) between queues and get the object back with
/// `ManagedObjectContext.object(with:)`. It encodes to its URI string.
public struct ObjectID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The entity of the object.
    public let entityName: String
    /// The object's number in its entity's table: its `_pk` column, or for an entity whose
    /// key is one required integer attribute (the table's rowid), its key when `_pk` is NULL.
    public let primaryKey: Int64
    /// The store the object belongs to (its UUID).
    public let storeIdentifier: String

    package init(entityName: String, primaryKey: Int64, storeIdentifier: String) {
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.storeIdentifier = storeIdentifier
    }

    /// `swell://<store UUID>/<Entity>/p<primary key>`.
    public func uriRepresentation() -> URL {
        URL(string: description)!  // the text is built from a UUID, an identifier and digits: always a valid URL
    }

    public var description: String {
        "swell://\(storeIdentifier)/\(entityName)/p\(primaryKey)"
    }

    /// Reads an ID back from its URI representation; nil when it is not one.
    public init?(uriRepresentation uri: URL) {
        guard uri.scheme == "swell", let host = uri.host else { return nil }
        let parts = uri.path.split(separator: "/")
        guard parts.count == 2, parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()) else { return nil }
        self.init(entityName: String(parts[0]), primaryKey: key, storeIdentifier: host)
    }

    /// The primary key alone: IDs of one entity (the usual set) never collide, and a re-sync's
    /// sets of a million IDs hash no strings. IDs of other entities with the same number share
    /// a hash and are told apart by `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
    }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.entityName == rhs.entityName && lhs.storeIdentifier == rhs.storeIdentifier
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = URL(string: text), let id = ObjectID(uriRepresentation: url) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a Swell object ID URI")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
