import Foundation
import Logging
import SwellStoreCore

/// The kind of a change a fetched results controller reports.
public enum FetchedResultsChangeType: Sendable, Equatable {
    case insert
    case delete
    case move
    case update
}

/// One section of a fetched results controller's results.
public struct FetchedResultsSectionInfo {
    /// The section key's value as text ("" for nil).
    public let name: String
    /// The section's objects, in order.
    public let objects: [ManagedObject]
    /// How many objects the section holds.
    public var numberOfObjects: Int { objects.count }
}

/// Hears what a fetched results controller's results did after a save
/// reached its context: a will-change call, the changes, a did-change call.
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// Before the changes of one save are reported.
    func controllerWillChangeContent(_ controller: FetchedResultsController)
    /// One object's change: `indexPath` before, `newIndexPath` after (each nil where it does not apply).
    func controller(_ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// After the changes of one save were reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController)
    /// A save reached the context but the results could not be fetched again: they are left
    /// as they were, and no changes are reported for that save. The context's `logger` has
    /// it too. (Not in Core Data, whose controller has no way to say so.)
    func controller(_ controller: FetchedResultsController, didFailToUpdateWith error: any Error)
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController) {}
    public func controller(_ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController) {}
    /// Does nothing by default: the context's `logger` already has the failure.
    public func controller(_ controller: FetchedResultsController, didFailToUpdateWith error: any Error) {}
}

/// Keeps a fetch request's results, grouped into sections, up to date with
/// the saves that reach its context, and reports each change with its index
/// paths (`IndexPath(item:section:)`). Use it on its context's queue.
///
/// Sections group the results by `sectionNameKeyPath` — an attribute, or a key path
/// through to-one relationships such as `author.name` (`ManagedObject.value(forKeyPath:)`);
/// a section's name is the value as text, "" for nil — in the order they first appear:
/// sort by the section key first (a sort descriptor may use the same key path) to get one
/// section per value.
public final class FetchedResultsController: ContextChangeObserver {
    /// The request whose results are kept.
    public let fetchRequest: FetchRequest
    /// The context the results live in.
    public let managedObjectContext: ManagedObjectContext
    /// The attribute or to-one key path the results are grouped by; nil for one section.
    public let sectionNameKeyPath: String?
    /// Accepted for Core Data compatibility; Swell keeps no section cache on disk.
    public let cacheName: String?
    /// Hears of changes.
    public weak var delegate: (any FetchedResultsControllerDelegate)?

    /// The results after `performFetch()`, in order.
    public private(set) var fetchedObjects: [ManagedObject]?
    /// The results grouped into sections.
    public private(set) var sections: [FetchedResultsSectionInfo]?

    public init(fetchRequest: FetchRequest, managedObjectContext: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName: String?) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    /// Fetches the results and starts following the context's changes.
    public func performFetch() throws {
        let objects = try managedObjectContext.fetch(fetchRequest)
        apply(objects)
        managedObjectContext.addObserver(self)
    }

    /// The object at a section and item.
    public func object(at indexPath: IndexPath) -> ManagedObject {
        sections![indexPath.section].objects[indexPath.item]
    }

    /// Where an object is, or nil.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        guard let sections else { return nil }
        for (sectionIndex, section) in sections.enumerated() {
            if let item = section.objects.firstIndex(where: { $0.objectID == object.objectID }) {
                return IndexPath(item: item, section: sectionIndex)
            }
        }
        return nil
    }

    private func apply(_ objects: [ManagedObject]) {
        fetchedObjects = objects
        guard let key = sectionNameKeyPath else {
            sections = [FetchedResultsSectionInfo(name: "", objects: objects)]
            return
        }
        var order: [String] = []
        var grouped: [String: [ManagedObject]] = [:]
        for object in objects {
            let name = object.value(forKeyPath: key).map { String(describing: $0) } ?? ""
            if grouped[name] == nil { order.append(name) }
            grouped[name, default: []].append(object)
        }
        sections = order.map { FetchedResultsSectionInfo(name: $0, objects: grouped[$0]!) }
    }

    private func indexPaths() -> [ObjectID: (IndexPath, ManagedObject)] {
        var result: [ObjectID: (IndexPath, ManagedObject)] = [:]
        for (sectionIndex, section) in (sections ?? []).enumerated() {
            for (item, object) in section.objects.enumerated() {
                result[object.objectID] = (IndexPath(item: item, section: sectionIndex), object)
            }
        }
        return result
    }

    func contextDidChange(_ changes: ContextDidSaveChanges) {
        guard fetchedObjects != nil else { return }
        let objects: [ManagedObject]
        do {
            objects = try managedObjectContext.fetch(fetchRequest)
        } catch {
            managedObjectContext.logger.error("a fetched results controller could not fetch its results again", metadata: [
                "context": "\(managedObjectContext.displayName)", "entity": "\(fetchRequest.entityName)", "error": "\(error)",
            ])
            delegate?.controller(self, didFailToUpdateWith: error)
            return
        }
        let before = indexPaths()
        apply(objects)
        let after = indexPaths()
        let changed = Set(changes.updated.keys).union(changes.merged.values)
        var reports: [(ManagedObject, IndexPath?, FetchedResultsChangeType, IndexPath?)] = []
        for (id, (path, object)) in before where after[id] == nil {
            reports.append((object, path, .delete, nil))
        }
        for (id, (path, object)) in after {
            guard let (oldPath, _) = before[id] else {
                reports.append((object, nil, .insert, path))
                continue
            }
            if changed.contains(id) {
                reports.append(oldPath == path ? (object, oldPath, .update, nil) : (object, oldPath, .move, path))
            }
        }
        guard !reports.isEmpty, let delegate else { return }
        reports.sort { ($0.1 ?? $0.3!) < ($1.1 ?? $1.3!) }
        delegate.controllerWillChangeContent(self)
        for (object, path, type, newPath) in reports {
            delegate.controller(self, didChange: object, at: path, for: type, newIndexPath: newPath)
        }
        delegate.controllerDidChangeContent(self)
    }
}

extension IndexPath {
    /// An index path of an item in a section (as UIKit and AppKit add on Apple's systems).
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section of a two-element index path.
    public var section: Int { self[0] }
    /// The item of a two-element index path.
    public var item: Int { self[1] }
}
