import Foundation
import SwellStoreCore

/// What a fetched results controller hands out (Core Data's `NSFetchRequestResult`): a
/// `ManagedObject`, or a typed `@Entity` object over one (SwellStore's `PersistentModel`).
public protocol FetchRequestResult: AnyObject {}

extension ManagedObject: FetchRequestResult {}

/// The kind of a change a fetched results controller reports.
public enum FetchedResultsChangeType: Sendable, Equatable {
    case insert
    case delete
    case move
    case update
}

/// One section of a fetched results controller's results.
public struct FetchedResultsSectionInfo<ResultType: FetchRequestResult> {
    /// The section key's value as text ("" for nil).
    public let name: String
    /// The section's objects, in order.
    public let objects: [ResultType]
    /// How many objects the section holds.
    public var numberOfObjects: Int { objects.count }
}

/// Hears what a fetched results controller's results did at the end of an event in its
/// context (its own edits), or after a save or merge reached it: a will-change call, the
/// section and row changes, a did-change call. Every call comes on the context's queue.
///
/// `ResultType` is the controller's: `ManagedObject` for a controller over a `FetchRequest`
/// (write `FetchedResultsController<ManagedObject>` for the controller parameter), the typed
/// class for one over a `FetchDescriptor`. It is inferred from the methods a delegate writes;
/// every method has an empty default.
public protocol FetchedResultsControllerDelegate<ResultType>: AnyObject {
    /// What the controller hands out.
    associatedtype ResultType: FetchRequestResult = ManagedObject

    /// Before the changes of one event are reported.
    func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// A section appeared (`.insert`, at its new index) or went (`.delete`, at its old index).
    func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: FetchedResultsSectionInfo<ResultType>,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// One object's change: `indexPath` before, `newIndexPath` after (each nil where it does not
    /// apply; an update has only `indexPath`). Applied as a table view applies a batch: deletes and
    /// moves' sources at the old index paths, inserts and moves' destinations at the new ones.
    func controller(_ controller: FetchedResultsController<ResultType>, didChange object: ResultType, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// The same event's change of `fetchedObjects` as a difference of object IDs (moves inferred),
    /// between the row calls and `controllerDidChangeContent`.
    func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith difference: CollectionDifference<ObjectID>)
    /// After the changes of one event were reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// The results could not be fetched again: they are left as they were, and no changes are
    /// reported for that event. The context's `logger` has it too. (Not in Core Data, whose
    /// controller has no way to say so.)
    func controller(_ controller: FetchedResultsController<ResultType>, didFailToUpdateWith error: any Error)
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: FetchedResultsSectionInfo<ResultType>,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange object: ResultType, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith difference: CollectionDifference<ObjectID>) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    /// Does nothing by default: the context's `logger` already has the failure.
    public func controller(_ controller: FetchedResultsController<ResultType>, didFailToUpdateWith error: any Error) {}
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
