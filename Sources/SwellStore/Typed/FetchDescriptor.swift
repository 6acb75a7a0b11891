import Foundation
import SwellContexts
import SwellStoreCore

/// A typed fetch: which objects of an `@Entity` class, in what order, how many.
///
/// SwiftData's name and shape; `FetchRequest` stays the untyped request beneath it.
///
/// ```swift
/// let good = try context.fetch(FetchDescriptor<JournalEntry>(
///     predicate: #Predicate { $0.rating ?? 0 >= 3 },
///     sortBy: [SortDescriptor(\.date, order: .reverse)]))
/// ```
///
/// A descriptor is a value that crosses queues: make it anywhere, fetch with it on a context's
/// queue. (`@unchecked Sendable`: it holds a predicate, sort descriptors and key paths — all
/// immutable — and never an object of `T`.)
public struct FetchDescriptor<T: PersistentModel>: @unchecked Sendable {
    /// Which objects; nil for all.
    public var predicate: Predicate<T>?
    /// The order: each a stored property of `T`.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many objects; nil for no limit.
    public var fetchLimit: Int?
    /// Skip this many first.
    public var fetchOffset: Int?
    /// Objects read at once from the store (0: all), as `FetchRequest.fetchBatchSize`.
    public var fetchBatchSize = 0
    /// Relationships whose destinations are loaded with the objects.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// Creates a descriptor.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The untyped request this descriptor stands for.
    ///
    /// - Throws: `StoreError.invalidPredicate` or `.invalidSortKey` when the predicate or a
    ///   sort cannot be compiled.
    public func fetchRequest() throws -> FetchRequest {
        var request = FetchRequest(entityName: T.entityDescription.name)
        request.predicate = try predicate.map { try FetchPredicate($0) }
        request.sortDescriptors = try sortBy.map { try FetchSortDescriptor($0) }
        request.fetchLimit = fetchLimit ?? 0
        request.fetchOffset = fetchOffset ?? 0
        request.fetchBatchSize = fetchBatchSize
        request.relationshipKeyPathsForPrefetching = try relationshipKeyPathsForPrefetching.map { keyPath in
            guard let name = T._$storedName(for: keyPath) else {
                throw StoreError.invalidFetch(entity: T.entityDescription.name, reason: "a prefetched key path is not a stored relationship")
            }
            return name
        }
        return request
    }
}

extension PersistentModel {
    /// A descriptor of every object of this class, to narrow and sort (the name Core Data
    /// generates for a managed object subclass): `var request = JournalEntry.fetchRequest()`.
    public static func fetchRequest() -> FetchDescriptor<Self> {
        FetchDescriptor<Self>()
    }
}

extension FetchedResultsController where ResultType: PersistentModel {
    /// A controller over the typed objects a descriptor matches (its predicate, sorts, limit and
    /// batch size), in sections by `sectionNameKeyPath` (a stored name or to-one key path such as
    /// `"spot.name"`; nil: one section): `object(at:)`, `fetchedObjects`, sections and the
    /// delegate hand out `ResultType`. A descriptor that cannot be compiled is thrown by
    /// `performFetch()` (`StoreError.invalidPredicate`, `.invalidSortKey`).
    public convenience init(fetchDescriptor: FetchDescriptor<ResultType>, context: ManagedObjectContext,
                            sectionNameKeyPath: String? = nil, cacheName: String? = nil) {
        let request: FetchRequest
        var failure: (any Error)?
        do {
            request = try fetchDescriptor.fetchRequest()
        } catch {
            request = FetchRequest(entityName: ResultType.entityDescription.name)
            failure = error
        }
        self.init(fetchRequest: request, requestError: failure, context: context, sectionNameKeyPath: sectionNameKeyPath,
                  cacheName: cacheName, result: ResultType.model(for:))
    }

    /// `init(fetchDescriptor:context:sectionNameKeyPath:cacheName:)`, compiling the descriptor at once.
    ///
    /// - Throws: `StoreError.invalidPredicate` or `.invalidSortKey` as `FetchDescriptor.fetchRequest()` does.
    public convenience init(fetchDescriptor: FetchDescriptor<ResultType>, managedObjectContext: ManagedObjectContext,
                            sectionNameKeyPath: String? = nil, cacheName: String? = nil) throws {
        self.init(fetchRequest: try fetchDescriptor.fetchRequest(), context: managedObjectContext, sectionNameKeyPath: sectionNameKeyPath,
                  cacheName: cacheName, result: ResultType.model(for:))
    }
}
