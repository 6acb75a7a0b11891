import Foundation
import Logging
import SwellStoreCore

/// Keeps a fetch request's results, grouped into sections, up to date with its context, and
/// reports each change with its index paths (`IndexPath(item:section:)`). Use it on its
/// context's queue. Core Data's `NSFetchedResultsController<ResultType>`.
///
/// Over a `FetchRequest` it is a `FetchedResultsController<ManagedObject>`; over a typed
/// `FetchDescriptor<JournalEntry>` (SwellStore) a `FetchedResultsController<JournalEntry>`,
/// whose `fetchedObjects`, sections, `object(at:)` and delegate calls hand out `JournalEntry`.
///
/// **What it follows** (Store guarantees 26, 64): the context's own unsaved inserts, updates and
/// deletes are reported at the end of the event that made them — a `perform` or
/// `performAndWait` block's end, `processPendingChanges()`, or for a main-queue context used
/// directly the end of the main queue's turn — and saves into the context (a child's), its own
/// saves, and merges as they arrive; each between `controllerWillChangeContent` and
/// `controllerDidChangeContent`. The controller then fetches again, so `fetchedObjects` is what
/// `fetch` returns for its request at that moment, in the same order. A row it shows whose values
/// changed is reported (an update, or a move when its index path changed), and so is every shown
/// object a save or merge names as updated; a change of a related object it does not show (say,
/// `spot.name` of a shown entry) is reported only when it changes the sections or the order. A
/// context without a controller pays nothing for this.
///
/// Sections group the results by `sectionNameKeyPath` — an attribute, or a key path
/// through to-one relationships such as `author.name` (`ManagedObject.value(forKeyPath:)`);
/// a section's name is the value as text, "" for nil — in the order they first appear:
/// sort by the section key first (a sort descriptor may use the same key path) to get one
/// section per value.
public final class FetchedResultsController<ResultType: FetchRequestResult>: ContextEventObserver {
    /// The request whose results are kept (for a typed controller, its descriptor's request).
    public let fetchRequest: FetchRequest
    /// The context the results live in.
    public let managedObjectContext: ManagedObjectContext
    /// The attribute or to-one key path the results are grouped by; nil for one section.
    public let sectionNameKeyPath: String?
    /// Accepted for Core Data compatibility; Swell keeps no section cache on disk.
    public let cacheName: String?
    /// Hears of changes.
    public weak var delegate: (any FetchedResultsControllerDelegate<ResultType>)?

    /// The results after `performFetch()`, in order.
    public private(set) var fetchedObjects: [ResultType]?
    /// The results grouped into sections.
    public private(set) var sections: [FetchedResultsSectionInfo<ResultType>]?

    /// Why the request could not be made (a typed descriptor that does not compile): thrown by `performFetch()`.
    private let requestError: (any Error)?
    /// The result for a fetched managed object.
    private let result: (ManagedObject) -> ResultType
    /// What the delegate was last told, and each shown row's values then (faults have none).
    private var shown = FetchedResultsDiff.Layout()
    private var shownObjects: [ManagedObject] = []
    private var shownValues: [ObjectID: [StoreValue]] = [:]
    /// The context's change count when the results were last fetched: an event that ends with
    /// another one changed something.
    private var fetchedVersion: UInt64?
    private var isObserving = false
    /// Set while the delegate hears a report, when something asks for another.
    private var isReporting = false
    private var reportAgain: Set<ObjectID>?

    /// Creates a controller; the package's constrained initialisers say how results are made.
    package init(fetchRequest: FetchRequest, requestError: (any Error)? = nil, context: ManagedObjectContext,
                 sectionNameKeyPath: String?, cacheName: String?, result: @escaping (ManagedObject) -> ResultType) {
        self.fetchRequest = fetchRequest
        self.requestError = requestError
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.result = result
    }

    /// Fetches the results and starts following the context's changes. Call it on the context's queue.
    ///
    /// - Throws: what `fetch` throws for the request; for a typed descriptor that cannot be
    ///   compiled, `StoreError.invalidPredicate` or `.invalidSortKey`.
    public func performFetch() throws {
        if let requestError { throw requestError }
        let objects = try managedObjectContext.fetch(fetchRequest)
        fetchedVersion = managedObjectContext.changeVersion
        apply(objects)
        if !isObserving {
            isObserving = true
            managedObjectContext.addEventObserver(self)
        }
    }

    /// The object at a section and item.
    public func object(at indexPath: IndexPath) -> ResultType {
        sections![indexPath.section].objects[indexPath.item]
    }

    /// Where an object is, or nil.
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let sections else { return nil }
        for (sectionIndex, section) in sections.enumerated() {
            if let item = section.objects.firstIndex(where: { $0 === object }) {
                return IndexPath(item: item, section: sectionIndex)
            }
        }
        return nil
    }

    // MARK: Following the context

    func contextDidChange(_ changes: ContextDidSaveChanges) {
        update(notified: Set(changes.updated.keys).union(changes.merged.values))
    }

    func contextDidEndEvent() {
        guard let fetchedVersion, fetchedVersion != managedObjectContext.changeVersion else { return }
        update(notified: [])
    }

    /// Fetches again and reports what changed; `notified` are IDs a save or merge said changed.
    private func update(notified: Set<ObjectID>) {
        guard fetchedObjects != nil else { return }
        if isReporting {
            // The delegate changed the context while hearing of a change: report it after.
            reportAgain = (reportAgain ?? []).union(notified)
            return
        }
        var notified = notified
        while true {
            refetchAndReport(notified: notified)
            guard let again = reportAgain else { return }
            reportAgain = nil
            notified = again
        }
    }

    private func refetchAndReport(notified: Set<ObjectID>) {
        let context = managedObjectContext
        let objects: [ManagedObject]
        do {
            objects = try context.fetch(fetchRequest)
        } catch {
            context.logger.error("a fetched results controller could not fetch its results again", metadata: [
                "context": "\(context.displayName)", "entity": "\(fetchRequest.entityName)", "error": "\(error)",
            ])
            delegate?.controller(self, didFailToUpdateWith: error)
            return
        }
        fetchedVersion = context.changeVersion
        let oldSections = sections ?? []
        let oldLayout = shown
        let oldValues = shownValues
        let oldIDs = shownObjects.map(\.objectID)
        apply(objects)
        let diff = FetchedResultsDiff(from: oldLayout, to: shown) { id in
            // What a save or merge names as updated is (a to-many inverse changes no value of its own).
            if notified.contains(id) { return true }
            let before = oldValues[id]
            let after = shownValues[id]
            if let before, let after { return before != after }
            // A fault before: changed when edited here since.
            return before == nil && after != nil && context.registeredObject(for: id)?.isUpdated == true
        }
        guard !diff.isEmpty, let delegate else { return }
        isReporting = true
        defer { isReporting = false }
        let newSections = sections ?? []
        delegate.controllerWillChangeContent(self)
        for index in diff.deletedSections {
            delegate.controller(self, didChange: oldSections[index], atSectionIndex: index, for: .delete)
        }
        for index in diff.insertedSections {
            delegate.controller(self, didChange: newSections[index], atSectionIndex: index, for: .insert)
        }
        for change in diff.rows {
            switch change {
            case .delete(_, let path):
                delegate.controller(self, didChange: oldSections[path.section].objects[path.item], at: path, for: .delete, newIndexPath: nil)
            case .insert(_, let path):
                delegate.controller(self, didChange: newSections[path.section].objects[path.item], at: nil, for: .insert, newIndexPath: path)
            case .move(_, let from, let to):
                delegate.controller(self, didChange: newSections[to.section].objects[to.item], at: from, for: .move, newIndexPath: to)
            case .update(_, let path):
                delegate.controller(self, didChange: oldSections[path.section].objects[path.item], at: path, for: .update, newIndexPath: nil)
            }
        }
        delegate.controller(self, didChangeContentWith: objects.map(\.objectID).difference(from: oldIDs).inferringMoves())
        delegate.controllerDidChangeContent(self)
    }

    /// Takes `objects` as the results: sections, the layout reports are computed from, the values shown.
    private func apply(_ objects: [ManagedObject]) {
        let results = objects.map(result)
        fetchedObjects = results
        shownObjects = objects
        shownValues = [:]
        shownValues.reserveCapacity(objects.count)
        for object in objects where !object.isFault {
            shownValues[object.objectID] = object.currentValues()
        }
        guard let key = sectionNameKeyPath else {
            sections = [FetchedResultsSectionInfo(name: "", objects: results)]
            shown = FetchedResultsDiff.Layout(names: [""], rows: [objects.map(\.objectID)])
            return
        }
        var order: [String] = []
        var grouped: [String: (objects: [ResultType], ids: [ObjectID])] = [:]
        for (object, result) in zip(objects, results) {
            let name = object.value(forKeyPath: key).map { String(describing: $0) } ?? ""
            if grouped[name] == nil { order.append(name) }
            grouped[name, default: ([], [])].objects.append(result)
            grouped[name]!.ids.append(object.objectID)
        }
        sections = order.map { FetchedResultsSectionInfo(name: $0, objects: grouped[$0]!.objects) }
        shown = FetchedResultsDiff.Layout(names: order, rows: order.map { grouped[$0]!.ids })
    }
}

extension FetchedResultsController where ResultType == ManagedObject {
    /// A controller over the objects a request matches, in sections by `sectionNameKeyPath`
    /// (nil: one section). Call `performFetch()` on the context's queue to start it.
    public convenience init(fetchRequest: FetchRequest, managedObjectContext: ManagedObjectContext,
                            sectionNameKeyPath: String? = nil, cacheName: String? = nil) {
        self.init(fetchRequest: fetchRequest, context: managedObjectContext, sectionNameKeyPath: sectionNameKeyPath,
                  cacheName: cacheName, result: { $0 })
    }

    /// `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`, with the
    /// context's label as the typed initialiser has it.
    public convenience init(fetchRequest: FetchRequest, context: ManagedObjectContext,
                            sectionNameKeyPath: String? = nil, cacheName: String? = nil) {
        self.init(fetchRequest: fetchRequest, context: context, sectionNameKeyPath: sectionNameKeyPath,
                  cacheName: cacheName, result: { $0 })
    }
}
