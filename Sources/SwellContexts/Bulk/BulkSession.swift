import Foundation
import SwellStoreCore

/// Row-level access to a context for bulk work: what batch requests cannot say and managed
/// objects make too costly for millions of records. `swell` writes every sync through it; an
/// app importing its own feeds can do the same (the "Bulk sessions" article).
///
/// A session is a view of one context, made with ``init(_:)`` where it is needed (it holds
/// nothing else). Everything it does happens at that context's level, as the context's own
/// changes do: rows it inserts, updates or deletes move up with the context's saves, merge
/// by the parent's policy, are validated when saved and appear in the did-save notices —
/// they are not managed objects, so nothing is registered for them and no object of the
/// context depends on them. Reads see the context as fetches do (its and its ancestors'
/// unsaved changes over the store's rows), unless a method says otherwise.
///
/// Rows are addressed by the store's form of an entity (``entity(named:)``): attributes by
/// index, then a column per to-one relationship (the destination's primary key) and per
/// to-many kept in a join table (``JoinTable``). Call every method on the context's queue
/// (inside `perform`/`performAndWait`, or on the main queue for a main-queue context), except
/// ``saveIntoParentOffQueue()``.
public struct BulkSession: Sendable {
    /// The context whose level the session works at.
    public let context: ManagedObjectContext

    /// A session on `context`.
    public init(_ context: ManagedObjectContext) {
        self.context = context
    }

    // MARK: The model as the store keeps it

    /// The entity `name` as the store keeps it: the model's attributes, then a column per
    /// to-one (``AttributeDescription/destination``), per to-many kept in a join table
    /// (``AttributeDescription/join``) and per ordered to-many's positions
    /// (``AttributeDescription/orderOf``). Row values are indexed by its attributes.
    ///
    /// - Throws: `StoreError.noPersistentStore`, or `.unknownEntity`.
    public func entity(named name: String) throws -> EntityDescription {
        try context.entityDescription(named: name)
    }

    /// The entities a request's predicate reads through key paths (every destination along
    /// them; empty without key paths): a change to one of them may move rows in or out of
    /// the request's results.
    public func predicatePathEntities(_ request: FetchRequest) throws -> Set<String> {
        try context.predicatePathEntities(request)
    }

    // MARK: Reading rows

    /// Calls `body` with the primary key and values (by attribute index) of each object the
    /// fetch would return, in order, without creating managed objects. With no unsaved
    /// changes of the entity in the context or its ancestors, rows stream from one snapshot
    /// of the store in constant memory.
    public func enumerateRows(_ request: FetchRequest, _ body: (Int64, [StoreValue]) throws -> Void) throws {
        try context.enumerateRows(request, body)
    }

    /// Like ``enumerateRows(_:_:)``, each row read in place from the store (no `StoreValue`s
    /// or `String`s made): `body` must not keep the cursor. Formats millions of rows in
    /// constant memory.
    ///
    /// `keyPaths` are read after the attributes (cursor indices from the entity's attribute
    /// count on), through relationships, from saved data only: with unsaved changes of the
    /// entity in the context or above, they throw `StoreError.keyPathNeedsSavedData`.
    public func enumerateRowCursors(_ request: FetchRequest, keyPaths: [KeyPathColumn] = [],
                                    _ body: (StoreRowCursor) throws -> Void) throws {
        try context.enumerateRowCursors(request, keyPaths: keyPaths, body)
    }

    /// The stored rows (primary key and values) of the objects with these keys (values of
    /// the entity's uniqueness constraint, in its order), in one store read: what is stored
    /// *now*, not a pinned snapshot. Keys are left out when no stored object has them, or
    /// when an unsaved change in the context or its ancestors concerns the key or the
    /// object (save first to have them): every row returned is, as of the call, exactly as
    /// stored. An importer leaves a record that arrives equal to its row out of the context.
    public func storedRows(forKeys keys: [[StoreValue]], entity: EntityDescription)
        throws -> [[StoreValue]: (primaryKey: Int64, values: [StoreValue])] {
        try context.storedRows(forKeys: keys, entity: entity)
    }

    /// An object's values as the context sees them (its and its parents' unsaved changes
    /// over the store's), by attribute index; nulls for an ID nothing has.
    public func currentValues(entity: EntityDescription, primaryKey: Int64) -> [StoreValue] {
        context.currentValues(entity: entity, primaryKey: primaryKey)
    }

    /// The objects whose to-many `join` lists `member`: the primary keys of the owners (the
    /// join table's owning side, column `column` of its entity), as the context sees them.
    /// A store that cannot be read logs the error on the context's logger and gives none.
    public func owners(in join: JoinTable, column: Int, listing member: Int64) -> [Int64] {
        context.owners(in: join, column: column, listing: member)
    }

    // MARK: Changing rows

    /// Makes room for `count` more rows of `entity` at the context's level, so that a bulk
    /// insert of that many does not grow its tables on the way.
    public func reserveRows(_ count: Int, entity: EntityDescription) {
        context.reserveRows(count, entity: entity)
    }

    /// Inserts a row without creating a managed object; every value given counts as set.
    /// `keyIndices` is `entity.keyIndices`, worked out once by the caller. Returns the row's
    /// primary key at this level.
    ///
    /// `values` (by attribute index) may stop after the model's attributes: the relationship
    /// columns after them are then not set, so a row that merges into a stored object of its
    /// key keeps that object's links. In a child context a row of an entity whose key is one
    /// required integer takes its key as its ID when it can (one b-tree entry in SQLite); the
    /// ID is final only once the context saves — two rows of one key from two children are
    /// one object merged by the parent's policy (`ContextDidSaveChanges.merged` says which).
    @discardableResult
    public func insertRow(entity: EntityDescription, keyIndices: [Int], values: [StoreValue]) -> Int64 {
        context.insertRow(entity: entity, keyIndices: keyIndices, values: values)
    }

    /// ``insertRow(entity:keyIndices:values:)`` with the key's indices worked out here.
    @discardableResult
    public func insertRow(entity: EntityDescription, values: [StoreValue]) -> Int64 {
        context.insertRow(entity: entity, values: values)
    }

    /// Sets the attributes at `indices` of an existing object's row to `values` (by attribute
    /// index; other positions are ignored) without creating a managed object. Over a change
    /// this level already holds for the row the new values win; a row deleted here stays
    /// deleted. Relinking and unlinking stored objects is done this way.
    public func updateRow(entity: EntityDescription, primaryKey: Int64, values: [StoreValue], indices: [Int]) {
        context.updateRow(entity: entity, primaryKey: primaryKey, values: values, indices: indices)
    }

    /// Deletes these rows of `entity` (by primary key) without reading them. A row whose
    /// object the context has handed out is deleted as `delete(_:)` does; the others, like
    /// inserted rows, are no object's edits.
    public func deleteRows(entity: String, primaryKeys: [Int64]) {
        context.deleteRows(entity: entity, primaryKeys: primaryKeys)
    }

    // MARK: Saving

    /// Saves the context as `save()` does and returns what the save moved (empty when there
    /// was nothing to save): the inserted, updated and deleted IDs, and the rows merged into
    /// objects of their keys.
    public func save() throws -> ContextDidSaveChanges {
        try context.saveReturningChanges()
    }

    /// Moves a child context's changes into its parent from any thread, when they all came
    /// from its children's saves or from this session's rows, so no object of the context
    /// depends on them: a busy main queue then does no per-row work when the main-queue
    /// context of the three-level stack passes its workers' rows to the writer. The did-save
    /// notice is posted on the context's queue. Returns nil, moving nothing, when the
    /// context's own objects have changes: then `save()` on its queue is needed.
    public func saveIntoParentOffQueue() throws -> ContextDidSaveChanges? {
        try context.saveIntoParentOffQueue()
    }

    // MARK: Batches

    /// Compares a batch insert of columns with the stored rows now, on the context's queue
    /// and a reader's snapshot, so that its execution soon after (from any context of the
    /// coordinator) has less to do on the writer's queue: an importer compares batch *k + 1*
    /// while batch *k* is written. At the execution, the rows a commit since may have
    /// written are compared again, so the request does exactly what it would have done
    /// without this. A request whose rows are not columns, or a comparison that fails, is
    /// left to the execution.
    public func compareAhead(_ request: BatchInsertRequest) {
        context.compareAhead(request)
    }

    /// Batch inserts of records with nested objects, as one transaction: the `nested`
    /// requests are decided against the store first, in order, each giving every row's
    /// primary key (the stored row's, or the one its new row gets); `records` makes the
    /// last request from them (to-one IDs and member lists: `BatchColumns.references` and
    /// `memberLists`); `children`, given each record's ID, makes the rows that point back at
    /// the records (``LinkedChildren``). All of it is committed at once on the root's queue,
    /// so a failure writes nothing. A new nested row whose key another writer stores
    /// meanwhile becomes that row, and the records' links follow it. Every request's
    /// `storeMetadata` is committed in the same transaction.
    ///
    /// Counts by entity: a record whose only change is a link counts as updated, a nested
    /// row only when its own attributes changed, a record whose set of children changed as
    /// updated. Call it on the context's queue, never from the main queue (it waits for the
    /// root's).
    ///
    /// - Throws: ``LinkedInsertFailure`` when a nested or children's request cannot be planned
    ///   (its error inside, e.g. `StoreError.invalidBatchRow` with its row; children's
    ///   requests are numbered after the nested ones), else what `execute` throws.
    public func executeLinkedInserts(_ nested: [BatchInsertRequest],
                                     records: ([[Int64]]) throws -> BatchInsertRequest,
                                     children: (([Int64]) throws -> [LinkedChildren])? = nil)
        throws -> [String: LinkedInsertCounts] {
        try context.executeLinkedInserts(nested, records: records, children: children)
    }
}
