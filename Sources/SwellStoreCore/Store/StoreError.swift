import Foundation

/// Why a store operation failed: its ``kind`` to switch on, a ``description`` that says what
/// happened in words a user can act on, and the details the kind has (entity, attribute,
/// objects, path…), nil or empty where it has none.
///
/// Match a kind with `==` or in a `catch` or `case` pattern (`~=`), as GRDB matches result codes:
///
/// ```swift
/// do {
///     try context.save()
/// } catch StoreError.Kind.constraintConflict {
///     …
/// } catch let error as StoreError where error.kind == .missingRequiredValue {
///     print(error.entity ?? "", error.attribute ?? "")
/// }
/// ```
///
/// A store adds kinds of its own (`.sqlite`, the server kinds) without breaking a caller's
/// `switch`: kinds are values, not the cases of a closed enum.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// A kind of store failure: compare with the named kinds.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, as `description` prints it.
        public let name: String

        /// A kind named `name` (a store's own kinds are made so).
        public init(_ name: String) { self.name = name }

        public var description: String { name }

        /// The file at `path` is not a Swell store (not SQLite, corrupt, a directory, unreadable).
        public static let notAStore = Kind("notAStore")
        /// The store could not be written because the disk is full (`path`); the save was rolled back.
        public static let diskFull = Kind("diskFull")
        /// The store was made with a model this one cannot be migrated from automatically (`entity`, `attribute`).
        public static let migrationFailed = Kind("migrationFailed")
        /// The coordinator has no persistent store (call `addPersistentStore(at:)` or `loadPersistentStores()`).
        public static let noPersistentStore = Kind("noPersistentStore")
        /// No entity of that name (`entity`) in the model.
        public static let unknownEntity = Kind("unknownEntity")
        /// No attribute of that name (`attribute`) in the entity.
        public static let unknownAttribute = Kind("unknownAttribute")
        /// A value does not fit its attribute's type (`expectedType`).
        public static let typeMismatch = Kind("typeMismatch")
        /// A required attribute of `objects[0]` has no value at save time.
        public static let missingRequiredValue = Kind("missingRequiredValue")
        /// Two objects (`objects`) have the same key (`key`) and the merge policy is `.error`.
        public static let constraintConflict = Kind("constraintConflict")
        /// A save met objects (`conflicts`, `objects`) that changed since the saving context read
        /// them — saved by another context, coordinator or process, or deleted — and the merge
        /// policy is `.error`; or it carried an edit to an object that no longer exists (Store
        /// guarantees 61, 62). Nothing was saved.
        public static let mergeConflict = Kind("mergeConflict")
        /// No object with that ID (`objects[0]`) exists: deleted, merged into another, or never
        /// saved where this context can see it.
        public static let objectNotFound = Kind("objectNotFound")
        /// A predicate did not parse or does not fit the entity (`predicateError`).
        public static let invalidPredicate = Kind("invalidPredicate")
        /// A sort key (`attribute`) is not an attribute of the entity.
        public static let invalidSortKey = Kind("invalidSortKey")
        /// Key-path columns (an export's `author.name`, in `attribute`) are read from saved data,
        /// and the entity has unsaved changes in the reading context or its ancestors: save them first.
        public static let keyPathNeedsSavedData = Kind("keyPathNeedsSavedData")
        /// Seeding a store failed; nothing was left half-copied at the store's path.
        public static let seedFailed = Kind("seedFailed")
        /// A delete was saved while a `deny` relationship (`attribute`) of the deleted object
        /// (`objects[0]`) still had destinations.
        public static let deleteDenied = Kind("deleteDenied")
        /// A required relationship (`attribute`) of `objects[0]` was empty when it was saved.
        public static let missingRequiredRelationship = Kind("missingRequiredRelationship")
        /// Objects broke validation rules (`validationFailures` lists every failure): attribute
        /// rules, to-many counts, an entity's validation closure. A save that finds only missing
        /// required values (or only empty required relationships) keeps the older kinds above,
        /// with `validationFailures` filled the same way.
        public static let validationFailed = Kind("validationFailed")
        /// A relationship (`attribute`) was set to something it cannot hold: another entity's
        /// object, an object of another context, or not an object or collection of objects.
        public static let invalidRelationshipValue = Kind("invalidRelationshipValue")
        /// No store type is registered for the URL's scheme (`scheme`).
        public static let unknownStoreType = Kind("unknownStoreType")
        /// A `MigrationPlan` cannot be used (`reason`): no versions, a version without or with a
        /// repeated identifier, a stage missing, a newest version that is not the coordinator's model.
        public static let invalidMigrationPlan = Kind("invalidMigrationPlan")
        /// The store cannot do what was asked (the in-memory store runs no SQL expressions).
        public static let unsupported = Kind("unsupported")
        /// A query generation token cannot pin the context (`reason`): no context holds its
        /// generation any more (its snapshot ended), or it was read from another store.
        public static let invalidQueryGeneration = Kind("invalidQueryGeneration")
        /// A batch insert's row `row` (counted from 0 in the request's order) cannot be written:
        /// `attribute` is unknown, of the wrong type, or required and without a value.
        public static let invalidBatchRow = Kind("invalidBatchRow")
        /// A `BatchExpression` does not parse or does not fit the entity.
        public static let invalidExpression = Kind("invalidExpression")
        /// A fetch request's result type, properties, grouping or having predicate do not fit
        /// together or the entity.
        public static let invalidFetch = Kind("invalidFetch")
        /// SQLite refused a statement: `sqliteCode` is its result code, `sql` the statement
        /// (arguments are never included), `underlying` SQLite's error.
        public static let sqlite = Kind("sqlite")
        /// A database server could not be reached, or refused the login.
        public static let serverUnreachable = Kind("serverUnreachable")
        /// The connection to a database server was lost (or closed) before or during a statement.
        public static let connectionLost = Kind("connectionLost")
        /// A database server refused a statement; `sqlState` is its SQLSTATE (`23505`, `40001`, …).
        public static let statementRefused = Kind("statementRefused")
        /// A database server answered something the store cannot use (no row where one was due).
        public static let unexpectedAnswer = Kind("unexpectedAnswer")
        /// An error from beneath the store that no other kind describes (`underlying`).
        public static let underlying = Kind("underlying")

        /// Whether `error` is a store error of this kind: `catch StoreError.Kind.objectNotFound`.
        public static func ~= (kind: Kind, error: any Error) -> Bool {
            (error as? StoreError)?.kind == kind
        }
    }

    /// What failed, to switch on.
    public var kind: Kind
    /// What happened, in words a user can act on (server stores name host, port, database and
    /// user, never a password).
    public var description: String
    /// The entity involved, when there is one.
    public var entity: String?
    /// The attribute, relationship, key path or sort key involved, when there is one.
    public var attribute: String?
    /// The objects involved: the conflicting ones, the one not found, the one being saved.
    public var objects: [ObjectID] = []
    /// A uniqueness conflict's key values, by attribute.
    public var key: [String: String] = [:]
    /// The store file involved (disk full, not a store, seeding).
    public var path: String?
    /// A batch insert's row, counted from 0.
    public var row: Int?
    /// Why, in the kind's own words without the rest of the message: SQLite's or the server's
    /// message, a migration's, a seed's, a batch row's problem, an expression's or a fetch's
    /// reason, the value a type mismatch got.
    public var reason: String?
    /// The model version a migration could not place (`.migrationFailed`).
    public var modelVersion: String?
    /// Where an expression went wrong: its character offset (`.invalidExpression`).
    public var offset: Int?
    /// How many objects a `deny` relationship still had (`.deleteDenied`).
    public var count: Int?
    /// The type an attribute expected (a type mismatch).
    public var expectedType: AttributeType?
    /// The URL scheme no store type is registered for.
    public var scheme: String?
    /// The statement a database refused (arguments are never included).
    public var sql: String?
    /// A server's SQLSTATE, for `.statementRefused`.
    public var sqlState: String?
    /// Why a predicate did not parse or fit, for `.invalidPredicate`.
    public var predicateError: FetchPredicateError?
    /// The error beneath this one, kept as thrown.
    public var underlying: (any Error)?
    /// Every validation failure a save or a `validateFor…` call found (Store guarantees 55); empty
    /// for other errors.
    public var validationFailures: [ValidationFailure] = []
    /// Every object a save found changed since it was read (`.mergeConflict`, Store guarantees
    /// 61); empty for other errors.
    public var conflicts: [MergeConflict] = []

    /// A store error of `kind` saying `description`; set the details that apply after.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

// The store errors Swell throws, by kind, with their words: one place for each message.
extension StoreError {
    /// `.notAStore`: the file at `path` cannot be used as a store, for `reason`.
    public static func notAStore(path: String, reason: String) -> StoreError {
        with(StoreError(.notAStore, "\(path) is not a usable Swell store: \(reason)")) {
            $0.path = path
            $0.reason = reason
        }
    }

    /// `.diskFull`: the disk holding `path` is full.
    public static func diskFull(path: String) -> StoreError {
        with(StoreError(.diskFull, "the disk holding \(path) is full; the save was rolled back")) { $0.path = path }
    }

    /// `.migrationFailed`: the store's `entity` (`attribute`) cannot be migrated, for `reason`.
    public static func migrationFailed(entity: String, attribute: String?, reason: String) -> StoreError {
        let what = attribute.map { "\(entity).\($0)" } ?? entity
        return with(StoreError(.migrationFailed, "cannot migrate \(what): \(reason)")) {
            $0.entity = entity
            $0.attribute = attribute
            $0.reason = reason
        }
    }

    /// `.migrationFailed` for the store as a whole: its recorded model `version` (nil: none) has
    /// no place in the migration plan, for `reason`. The store is left untouched.
    public static func migrationFailed(version: String?, reason: String) -> StoreError {
        with(StoreError(.migrationFailed, "cannot migrate the store: \(reason)")) {
            $0.reason = reason
            $0.modelVersion = version
        }
    }

    /// `.invalidMigrationPlan`, for `reason`.
    public static func invalidMigrationPlan(_ reason: String) -> StoreError {
        with(StoreError(.invalidMigrationPlan, "the migration plan cannot be used: \(reason)")) { $0.reason = reason }
    }

    /// `.noPersistentStore`.
    public static var noPersistentStore: StoreError {
        StoreError(.noPersistentStore, "the coordinator has no persistent store: add one before using its contexts")
    }

    /// `.unknownEntity`: no entity named `name`.
    public static func unknownEntity(_ name: String) -> StoreError {
        with(StoreError(.unknownEntity, "no entity named '\(name)' in the model")) { $0.entity = name }
    }

    /// `.unknownAttribute`: `entity` has no attribute `attribute`.
    public static func unknownAttribute(entity: String, attribute: String) -> StoreError {
        with(StoreError(.unknownAttribute, "\(entity) has no attribute '\(attribute)'")) {
            $0.entity = entity
            $0.attribute = attribute
        }
    }

    /// `.typeMismatch`: `entity.attribute` expects `expected` and got `value` (described).
    public static func typeMismatch(entity: String, attribute: String, expected: AttributeType, value: String) -> StoreError {
        with(StoreError(.typeMismatch, "\(entity).\(attribute) expects a value of type \(expected.rawValue), got \(value)")) {
            $0.entity = entity
            $0.attribute = attribute
            $0.expectedType = expected
            $0.reason = value
        }
    }

    /// `.missingRequiredValue`: `object`'s required `attribute` has no value.
    public static func missingRequiredValue(object: ObjectID, attribute: String) -> StoreError {
        with(StoreError(.missingRequiredValue, "\(object.entityName).\(attribute) is required but has no value (object \(object))")) {
            $0.entity = object.entityName
            $0.attribute = attribute
            $0.objects = [object]
        }
    }

    /// The error for validation `failures` (not empty): `.missingRequiredValue` when every failure
    /// is a required attribute without a value, `.missingRequiredRelationship` when every one is
    /// an empty required relationship, `.deleteDenied` when any is a `deny` refusal (the
    /// first such failure's words, as before validation rules existed), `.validationFailed`
    /// otherwise, listing them. Every failure is in `validationFailures`.
    public static func validationFailed(_ failures: [ValidationFailure]) -> StoreError {
        precondition(!failures.isEmpty, "a validation error lists at least one failure")
        let first = failures[0]
        let required = failures.allSatisfy { $0.rule == .required }
        var error: StoreError
        if required && failures.allSatisfy({ !$0.isRelationship }) {
            error = .missingRequiredValue(object: first.object, attribute: first.key ?? "")
        } else if required && failures.allSatisfy(\.isRelationship) {
            error = .missingRequiredRelationship(object: first.object, relationship: first.key ?? "")
        } else if let denied = failures.first(where: { $0.rule == .deleteDenied }) {
            // A deny refuses the delete whatever else failed: the kind callers of batch deletes
            // and saves have always matched.
            let count = if case .integer(let count)? = denied.value { Int(count) } else { 0 }
            error = .deleteDenied(object: denied.object, relationship: denied.key ?? "", destinations: count)
        } else {
            let shown = failures.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
            let more = failures.count > 20 ? "\n  … and \(failures.count - 20) more" : ""
            let objects = Set(failures.map(\.object)).count
            error = StoreError(.validationFailed, "\(failures.count) validation failure(s) in \(objects) object(s); nothing was saved:\n\(shown)\(more)")
            error.entity = first.object.entityName
            error.attribute = first.key
        }
        if failures.count > 1 && error.kind != .validationFailed {
            error.description += " (and \(failures.count - 1) more: see validationFailures)"
        }
        var seen = Set<ObjectID>()
        error.objects = failures.map(\.object).filter { seen.insert($0).inserted }
        error.validationFailures = failures
        return error
    }

    /// `.constraintConflict`: `objects` of `entity` share `key` under the `.error` merge policy.
    public static func constraintConflict(entity: String, key: [String: String], objects: [ObjectID]) -> StoreError {
        let keyText = key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        let between = objects.map(\.description).joined(separator: " and ")
        return with(StoreError(.constraintConflict, "uniqueness conflict on \(entity) (\(keyText)) between objects \(between); the merge policy is .error")) {
            $0.entity = entity
            $0.key = key
            $0.objects = objects
        }
    }

    /// `.mergeConflict`: `conflicts` (not empty) met by a save; nothing was saved.
    public static func mergeConflict(_ conflicts: [MergeConflict]) -> StoreError {
        precondition(!conflicts.isEmpty, "a merge conflict error lists at least one conflict")
        let shown = conflicts.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
        let more = conflicts.count > 20 ? "\n  … and \(conflicts.count - 20) more" : ""
        let gone = conflicts.contains { $0.theirs == nil && !$0.isDeletion }
        let why = gone ? "changed or deleted since this context read them" : "changed since this context read them"
        return with(StoreError(.mergeConflict, "\(conflicts.count) object(s) \(why); nothing was saved (the merge policy is .error, or an edited object is gone):\n\(shown)\(more)")) {
            $0.entity = conflicts[0].objectID.entityName
            $0.objects = conflicts.map(\.objectID)
            $0.conflicts = conflicts
        }
    }

    /// `.objectNotFound`: no object with `id`.
    public static func objectNotFound(_ id: ObjectID) -> StoreError {
        with(StoreError(.objectNotFound, "no object with ID \(id)")) {
            $0.entity = id.entityName
            $0.objects = [id]
        }
    }

    /// `.invalidPredicate`, for `error`.
    public static func invalidPredicate(_ error: FetchPredicateError) -> StoreError {
        with(StoreError(.invalidPredicate, error.description)) { $0.predicateError = error }
    }

    /// `.invalidSortKey`: `entity` cannot be sorted by `key`.
    public static func invalidSortKey(entity: String, key: String) -> StoreError {
        with(StoreError(.invalidSortKey, "cannot sort \(entity) by '\(key)': not an attribute")) {
            $0.entity = entity
            $0.attribute = key
        }
    }

    /// `.keyPathNeedsSavedData`: `keyPath` of `entity` is read from saved data and `entity` has unsaved changes.
    public static func keyPathNeedsSavedData(entity: String, keyPath: String) -> StoreError {
        with(StoreError(.keyPathNeedsSavedData, "cannot read '\(keyPath)' of \(entity): key paths are read from saved data, and \(entity) has unsaved changes in this context or its parents; save them first")) {
            $0.entity = entity
            $0.attribute = keyPath
        }
    }

    /// `.seedFailed`: the store at `path` could not be seeded, for `reason`.
    public static func seedFailed(path: String, reason: String) -> StoreError {
        with(StoreError(.seedFailed, "could not seed the store at \(path): \(reason)")) {
            $0.path = path
            $0.reason = reason
        }
    }

    /// `.deleteDenied`: `object`'s deny `relationship` still has `destinations` objects.
    public static func deleteDenied(object: ObjectID, relationship: String, destinations: Int) -> StoreError {
        with(StoreError(.deleteDenied, "cannot delete \(object): its relationship '\(relationship)' has the delete rule deny and still has \(destinations) object(s)")) {
            $0.entity = object.entityName
            $0.attribute = relationship
            $0.objects = [object]
            $0.count = destinations
        }
    }

    /// `.missingRequiredRelationship`: `object`'s required `relationship` is empty.
    public static func missingRequiredRelationship(object: ObjectID, relationship: String) -> StoreError {
        with(StoreError(.missingRequiredRelationship, "\(object.entityName).\(relationship) is a required relationship but is empty (object \(object))")) {
            $0.entity = object.entityName
            $0.attribute = relationship
            $0.objects = [object]
        }
    }

    /// `.invalidRelationshipValue`: `entity.relationship` cannot hold what it was set to, for `reason`.
    public static func invalidRelationshipValue(entity: String, relationship: String, reason: String) -> StoreError {
        with(StoreError(.invalidRelationshipValue, "cannot set \(entity).\(relationship): \(reason)")) {
            $0.entity = entity
            $0.attribute = relationship
            $0.reason = reason
        }
    }

    /// `.unknownStoreType`: none of the store types a program links opens `scheme` URLs; the
    /// message says which types it links and what they open.
    public static func unknownStoreType(scheme: String, linked types: [StoreType]) -> StoreError {
        let opened = types.isEmpty
            ? "it was given no store type"
            : "it opens " + types.map { "\($0.opens) (\($0.name))" }.joined(separator: "; ")
        let hint = scheme == "postgres" || scheme == "postgresql"
            ? " — PostgreSQL comes with SwellStore's `PostgreSQL` package trait (on by default) or `StoreType.postgres` from SwellPostgres"
            : ""
        return with(StoreError(.unknownStoreType, "no store type of this program opens \(scheme):// URLs: \(opened)\(hint)")) {
            $0.scheme = scheme
        }
    }

    /// `.unsupported`: the `store` store cannot do `what`.
    public static func unsupported(store: String, what: String) -> StoreError {
        StoreError(.unsupported, "the \(store) store does not support \(what)")
    }

    /// `.invalidQueryGeneration`: a context cannot be pinned as asked, for `reason`.
    public static func invalidQueryGeneration(reason: String) -> StoreError {
        with(StoreError(.invalidQueryGeneration, "cannot pin the context to that query generation: \(reason)")) { $0.reason = reason }
    }

    /// `.invalidBatchRow`: row `row` of a batch insert into `entity` has a `problem` with `attribute`.
    public static func invalidBatchRow(entity: String, row: Int, attribute: String, problem: String) -> StoreError {
        with(StoreError(.invalidBatchRow, "batch insert into \(entity), row \(row): '\(attribute)' \(problem); nothing was written")) {
            $0.entity = entity
            $0.row = row
            $0.attribute = attribute
            $0.reason = problem
        }
    }

    /// `.invalidExpression`: `format` went wrong at character `offset`, for `reason`.
    public static func invalidExpression(_ format: String, offset: Int, reason: String) -> StoreError {
        with(StoreError(.invalidExpression, "cannot use the expression '\(format)' (at character \(offset)): \(reason)")) {
            $0.offset = offset
            $0.reason = reason
        }
    }

    /// `.invalidFetch`: `entity` cannot be fetched as asked, for `reason`.
    public static func invalidFetch(entity: String, reason: String) -> StoreError {
        with(StoreError(.invalidFetch, "cannot fetch \(entity) this way: \(reason)")) {
            $0.entity = entity
            $0.reason = reason
        }
    }

    /// `.underlying`: `error`, kept as thrown.
    public static func underlying(_ error: any Error) -> StoreError {
        with(StoreError(.underlying, "\(error)")) { $0.underlying = error }
    }

    private static func with(_ error: StoreError, _ details: (inout StoreError) -> Void) -> StoreError {
        var error = error
        details(&error)
        return error
    }
}
