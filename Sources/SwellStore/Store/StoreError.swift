import Foundation

/// Why a store operation failed, with what a user needs to act on it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// SQLite refused a statement: its result code (compare with `SQLiteResultCode`'s named
    /// codes), SQLite's message and the SQL (arguments are never included).
    case sqlite(SQLiteResultCode, message: String, sql: String?)
    /// The file at `path` is not a Swell store (not SQLite, corrupt, a directory, unreadable).
    case notAStore(path: String, reason: String)
    /// The store could not be written because the disk is full.
    case diskFull(path: String)
    /// The store was made with a model this one cannot be migrated from automatically.
    case migrationFailed(entity: String, attribute: String?, reason: String)
    /// The coordinator has no persistent store yet (call `addPersistentStore(at:)` or `loadPersistentStores()`).
    case noPersistentStore
    /// No entity of that name in the model.
    case unknownEntity(String)
    /// No attribute of that name in the entity.
    case unknownAttribute(entity: String, attribute: String)
    /// A value does not fit its attribute's type.
    case typeMismatch(entity: String, attribute: String, expected: AttributeType, value: String)
    /// A required attribute has no value at save time.
    case missingRequiredValue(object: ObjectID, attribute: String)
    /// Two objects have the same key and the merge policy is `.error`.
    case constraintConflict(entity: String, key: [String: String], objects: [ObjectID])
    /// No object with that ID exists (it was deleted, merged into another, or never saved where this context can see it).
    case objectNotFound(ObjectID)
    /// A predicate did not parse or does not fit the entity.
    case invalidPredicate(FetchPredicateError)
    /// A sort key is not an attribute of the entity.
    case invalidSortKey(entity: String, key: String)
    /// Key-path columns (an export's `author.name`) are read from saved data, and the entity
    /// has unsaved changes in the reading context or its ancestors: save them first.
    case keyPathNeedsSavedData(entity: String, keyPath: String)
    /// Seeding a store failed; nothing was left half-copied at the store's path.
    case seedFailed(path: String, reason: String)
    /// A delete was saved while a `deny` relationship of the deleted object still had destinations.
    case deleteDenied(object: ObjectID, relationship: String, destinations: Int)
    /// A required relationship was empty when its object was saved.
    case missingRequiredRelationship(object: ObjectID, relationship: String)
    /// A relationship was set to something it cannot hold (another entity's object, an
    /// object of another context, or not an object or collection of objects).
    case invalidRelationshipValue(entity: String, relationship: String, reason: String)
    /// No store type is registered for the URL's scheme (a PostgreSQL URL needs the
    /// `SwellPostgres` module linked into the program).
    case unknownStoreType(scheme: String)
    /// A database server store failed, for the reason `failure` names (unreachable, connection
    /// lost, a statement refused with its SQLSTATE); `reason` is the whole message (it names
    /// host, port, database and user, never a password).
    case serverFailed(ServerFailure, reason: String)
    /// The store cannot do what was asked (the in-memory store runs no SQL expressions).
    case unsupported(store: String, what: String)
    /// A batch insert's row `row` (counted from 0 in the request's order) cannot be written:
    /// `attribute` is unknown, of the wrong type, or required and without a value (`problem` says which).
    case invalidBatchRow(entity: String, row: Int, attribute: String, problem: String)
    /// A `BatchExpression` does not parse or does not fit the entity; `offset` is the character where it went wrong.
    case invalidExpression(String, offset: Int, reason: String)
    /// A fetch request's result type, properties, grouping or having predicate do not fit
    /// together or the entity (`reason` says how).
    case invalidFetch(entity: String, reason: String)
    /// An error from beneath the store that none of the other cases describes, kept as thrown.
    case underlying(any Error)

    /// Why a database server store failed, to switch on.
    public enum ServerFailure: Sendable, Equatable {
        /// The server could not be reached, or refused the login.
        case unreachable
        /// The connection was lost (or closed) before or during a statement.
        case connectionLost
        /// The server refused a statement; `sqlState` is its SQLSTATE (`23505`, `40001`, …).
        case statementRefused(sqlState: String)
        /// The server answered something the store cannot use (a query returned no row where one was due).
        case unexpectedAnswer
    }

    public var description: String {
        switch self {
        case .sqlite(let code, let message, let sql):
            if let sql { return "SQLite error \(code.rawValue): \(message) (in: \(sql))" }
            return "SQLite error \(code.rawValue): \(message)"
        case .notAStore(let path, let reason): return "\(path) is not a usable Swell store: \(reason)"
        case .diskFull(let path): return "the disk holding \(path) is full; the save was rolled back"
        case .migrationFailed(let entity, let attribute?, let reason):
            return "cannot migrate \(entity).\(attribute): \(reason)"
        case .migrationFailed(let entity, nil, let reason): return "cannot migrate \(entity): \(reason)"
        case .noPersistentStore: return "the coordinator has no persistent store: add one before using its contexts"
        case .unknownEntity(let name): return "no entity named '\(name)' in the model"
        case .unknownAttribute(let entity, let attribute): return "\(entity) has no attribute '\(attribute)'"
        case .typeMismatch(let entity, let attribute, let expected, let value):
            return "\(entity).\(attribute) expects a value of type \(expected.rawValue), got \(value)"
        case .missingRequiredValue(let object, let attribute):
            return "\(object.entityName).\(attribute) is required but has no value (object \(object))"
        case .constraintConflict(let entity, let key, let objects):
            let keyText = key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            return "uniqueness conflict on \(entity) (\(keyText)) between objects \(objects.map(\.description).joined(separator: " and ")); the merge policy is .error"
        case .objectNotFound(let id): return "no object with ID \(id)"
        case .invalidPredicate(let error): return error.description
        case .invalidSortKey(let entity, let key): return "cannot sort \(entity) by '\(key)': not an attribute"
        case .keyPathNeedsSavedData(let entity, let keyPath):
            return "cannot read '\(keyPath)' of \(entity): key paths are read from saved data, and \(entity) has unsaved changes in this context or its parents; save them first"
        case .seedFailed(let path, let reason): return "could not seed the store at \(path): \(reason)"
        case .deleteDenied(let object, let relationship, let destinations):
            return "cannot delete \(object): its relationship '\(relationship)' has the delete rule deny and still has \(destinations) object(s)"
        case .missingRequiredRelationship(let object, let relationship):
            return "\(object.entityName).\(relationship) is a required relationship but is empty (object \(object))"
        case .invalidRelationshipValue(let entity, let relationship, let reason):
            return "cannot set \(entity).\(relationship): \(reason)"
        case .unknownStoreType(let scheme):
            let hint = ["postgres", "postgresql"].contains(scheme) ? " (a PostgreSQL store needs the SwellPostgres module linked into the program)" : ""
            return "no store type is registered for \(scheme):// URLs\(hint); a file path or file: URL is a SQLite store, memory:// an in-memory one"
        case .serverFailed(_, let reason): return reason
        case .unsupported(let store, let what):
            return "the \(store) store does not support \(what)"
        case .invalidBatchRow(let entity, let row, let attribute, let problem):
            return "batch insert into \(entity), row \(row): '\(attribute)' \(problem); nothing was written"
        case .invalidExpression(let format, let offset, let reason):
            return "cannot use the expression '\(format)' (at character \(offset)): \(reason)"
        case .invalidFetch(let entity, let reason): return "cannot fetch \(entity) this way: \(reason)"
        case .underlying(let error): return "\(error)"
        }
    }

    init(_ error: SQLiteError, path: String) {
        if error.isDiskFull {
            self = .diskFull(path: path)
        } else if error.isNotAStore {
            self = .notAStore(path: path, reason: error.message)
        } else {
            self = .sqlite(SQLiteResultCode(rawValue: error.code), message: error.message, sql: error.sql)
        }
    }

    /// `error` as a store error: a store error as it is, a SQLite error by its code (disk
    /// full and not-a-store by name), anything else as `.underlying`.
    init(converting error: any Error, path: String) {
        switch error {
        case let error as StoreError: self = error
        case let error as SQLiteError: self.init(error, path: path)
        default: self = .underlying(error)
        }
    }
}
