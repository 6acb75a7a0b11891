import Foundation
import SwellStoreCore

/// What a batch request reports when it is done (Store guarantees 40).
public enum BatchResultType: Sendable, Hashable {
    /// Only whether it succeeded: `count` and `objectIDs` are nil.
    case statusOnly
    /// `count`: the rows written (inserted and updated; deleted for a batch delete).
    case count
    /// `objectIDs`: the IDs of the rows written.
    case objectIDs
    /// Exact counts of inserted, updated and unchanged (and deleted) rows, with `count` and
    /// `objectIDs` filled as well.
    case changes
}

/// A request the store runs as a whole, without making managed objects: a batch insert,
/// update or delete. Run it with `ManagedObjectContext.execute(_:)`.
///
/// The requests are classes, as Core Data's are; one may be executed from any queue
/// (`@unchecked Sendable`), but must not be changed while it runs.
public protocol BatchRequest: AnyObject, Sendable {
    /// The entity the request writes.
    var entityName: String { get }
    /// What the result reports.
    var resultType: BatchResultType { get set }
}

/// Inserts (or, with a uniqueness constraint, upserts) many rows in one transaction,
/// without registering any object in any context (Store guarantees 37–39).
///
/// The rows come in one of three forms: an array of dictionaries (attribute name → value,
/// as `ManagedObject.setValue(_:forKey:)` takes them), a handler called until it says it
/// is done, or columns (`BatchColumns`). A row that meets a stored row with its key is
/// resolved by the executing context's merge policy; within one request the later row for
/// a key wins; a row equal to its stored row is not written.
///
/// `@unchecked Sendable` (its rows hold `Any` values, as Core Data's requests do): a request is
/// configured on one thread and then handed whole to `execute`, which reads it on the root
/// context's queue; the pipeline's comparer sets `comparedAhead` before it hands the request
/// to the writer and never touches it again. It has no lock: don't change a request while it
/// executes.
public final class BatchInsertRequest: BatchRequest, @unchecked Sendable {
    public let entityName: String
    public var resultType: BatchResultType = .statusOnly

    enum Rows {
        case objects([[String: Any]])
        case handler((inout [String: Any]) -> Bool)
        case columns(BatchColumns)
    }

    let rows: Rows

    /// Its rows compared with the store ahead of its execution (`compareAhead`), if they were.
    var comparedAhead: ComparisonAhead?
    /// A columns batch reports each row's primary key (`BatchResult.primaryKeys`): the
    /// pipeline's nested records link their parents to them. Package use only.
    package var reportsPrimaryKeys = false
    /// The rows were checked against the attribute rules before the request was made (the
    /// pipeline checks every record as it maps it): the writer does not check them again.
    /// Package use only.
    public var rulesChecked = false
    /// Store metadata (what `ManagedObjectContext.setStoreMetadata(_:forKey:)` sets; a nil
    /// value removes its key) written in the same transaction as the request's rows: both are
    /// on disk, or neither is. It is written also when no row changes (every row arrived equal
    /// to its stored row). A context's own unsaved value for one of these keys still goes to
    /// the store at that context's next save, as any change it holds. A pipeline keeps where a
    /// source stands this way, with the batch that got it there.
    public var storeMetadata: [String: String?] = [:]

    /// A batch insert of `objects`, one dictionary per row.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        rows = .objects(objects)
    }

    /// A batch insert whose rows `dictionaryHandler` fills one at a time: it is called with
    /// an empty dictionary until it returns true (that call's dictionary is not inserted).
    public init(entityName: String, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.entityName = entityName
        rows = .handler(dictionaryHandler)
    }

    /// A batch insert of rows given as columns: one typed buffer per attribute.
    public init(entityName: String, columns: BatchColumns) {
        self.entityName = entityName
        rows = .columns(columns)
    }
}

/// Changes the attributes of every stored row a predicate matches, without loading
/// objects (Store guarantees 42). `propertiesToUpdate` maps attribute names to a new value (as
/// `setValue(_:forKey:)` takes it; `NSNull()` or nil for nil) or to a `BatchExpression`
/// over the row's own attributes (`rating + 1`).
///
/// `@unchecked Sendable` (`propertiesToUpdate` holds `Any` values): configured on one thread,
/// then handed whole to `execute`, which reads it on the root context's queue; no lock.
public final class BatchUpdateRequest: BatchRequest, @unchecked Sendable {
    public let entityName: String
    public var resultType: BatchResultType = .statusOnly
    /// The rows to change; nil: every row of the entity.
    public var predicate: FetchPredicate?
    /// Attribute name → its new value or a `BatchExpression`.
    public var propertiesToUpdate: [String: Any] = [:]

    /// A batch update of `entityName`; set `predicate` and `propertiesToUpdate`.
    public init(entityName: String) {
        self.entityName = entityName
    }
}

/// Deletes the stored rows a fetch request matches, or the objects with the given IDs,
/// without loading them into the caller's contexts, applying every relationship's delete
/// rule (cascade, nullify, deny: a deny refuses the whole request) (Store guarantees 42).
///
/// `@unchecked Sendable` (as the other requests): configured on one thread, then handed whole
/// to `execute`, which reads it on the root context's queue; no lock.
public final class BatchDeleteRequest: BatchRequest, @unchecked Sendable {
    public let entityName: String
    public var resultType: BatchResultType = .statusOnly

    enum Target {
        case fetch(FetchRequest)
        case objectIDs([ObjectID])
    }

    let target: Target

    /// Deletes what `fetchRequest` matches in the store (its sort, limit and offset apply).
    public init(fetchRequest: FetchRequest) {
        entityName = fetchRequest.entityName
        target = .fetch(fetchRequest)
    }

    /// Deletes the objects with these IDs (all of one entity; IDs of no stored object are skipped).
    public init(objectIDs: [ObjectID]) {
        entityName = objectIDs.first?.entityName ?? ""
        target = .objectIDs(objectIDs)
    }
}

/// What a batch request did (Store guarantees 40–41).
public struct BatchResult: Sendable {
    /// The result type the request asked for.
    public let resultType: BatchResultType
    /// Rows inserted.
    public let inserted: Int
    /// Rows updated (a key met a stored row whose values changed; or matched and changed).
    public let updated: Int
    /// Rows whose key met a stored row with equal values (or matched and already held the
    /// new values): not written.
    public let unchanged: Int
    /// Rows deleted, cascades included.
    public let deleted: Int
    /// The change notice: `"inserted"`, `"updated"` and `"deleted"` object IDs, for
    /// `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`.
    public let changes: [String: Set<ObjectID>]
    /// The IDs of the rows whose key met an equal stored row (`.changes`).
    public var unchangedObjectIDs: Set<ObjectID> {
        guard let unchangedKeys else { return unchangedIDs }
        var ids = unchangedIDs
        ids.reserveCapacity(ids.count + unchangedKeys.keys.count)
        for key in unchangedKeys.keys {
            ids.insert(ObjectID(entityName: unchangedKeys.entity, primaryKey: key, storeIdentifier: unchangedKeys.store))
        }
        return ids
    }

    /// Unchanged rows as IDs, and (a re-sync's many) as primary keys of one entity, made IDs
    /// only when asked for: the rows are many and the IDs seldom read.
    private let unchangedIDs: Set<ObjectID>
    private let unchangedKeys: BatchWriter.UnchangedKeys?

    /// Which rows `count` and `objectIDs` report.
    let written: Written
    /// For a columns batch insert that asked (`reportsPrimaryKeys`): each row's primary key,
    /// whether it was inserted, updated or left unchanged (-1 for a row without a key that
    /// a constraint never met and none asked). Package use only.
    package var primaryKeys: [Int64] = []

    /// The rows written (`.count`, `.changes`): inserted and updated ones, or for a batch
    /// delete the deleted ones (cascades included); nil for the other result types.
    public var count: Int? {
        switch resultType {
        case .count, .changes: written == .deleted ? deleted : inserted + updated
        case .statusOnly, .objectIDs: nil
        }
    }

    /// The IDs of the rows written (`.objectIDs`, `.changes`; see `count`), sorted; nil for the others.
    public var objectIDs: [ObjectID]? {
        switch resultType {
        case .objectIDs, .changes:
            (written == .deleted ? changes["deleted", default: []] : changes["inserted", default: []].union(changes["updated", default: []]))
                .sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
        case .statusOnly, .count: nil
        }
    }

    init(resultType: BatchResultType, written: Written, changes: ContextDidSaveChanges, unchanged: Set<ObjectID>,
         unchangedKeys: BatchWriter.UnchangedKeys? = nil) {
        self.resultType = resultType
        self.written = written
        inserted = changes.inserted.count
        updated = changes.updated.count
        deleted = changes.deleted.count
        self.unchanged = unchanged.count + (unchangedKeys?.keys.count ?? 0)
        unchangedIDs = unchanged
        self.unchangedKeys = unchangedKeys
        self.changes = ["inserted": changes.inserted, "updated": Set(changes.updated.keys), "deleted": changes.deleted]
    }
}
