import Dispatch
import Foundation
import Logging
import SwellLocks
import SwellStoreCore
import Synchronization

/// A scratchpad of managed objects on one queue: insert, fetch, change and
/// delete objects, then save the changes one level up — into the parent
/// context, or, for a root context, into the store as one store transaction.
///
/// A context is private-queue (it owns a serial queue) or main-queue (it uses
/// the main queue). Use it and its objects only on its queue: inside
/// `perform`, `performAndWait`, `await perform`, or, for a main-queue context,
/// on the main queue. Only object IDs, value snapshots and did-save changes
/// cross queues. With `SWELL_CONCURRENCY_DEBUG=1` in the environment, use off
/// the queue stops the program with a message naming the context; a debug build
/// without it warns once per context on stderr.
///
/// `@unchecked Sendable`: the context's own state is confined to its queue; what
/// other queues read (its unsaved changes, for children's fetches and saves,
/// and its links) sits behind locks (`LockedValue`).
public final class ManagedObjectContext: @unchecked Sendable, CustomStringConvertible {
    /// Which queue a context runs on.
    public enum ConcurrencyType: Sendable {
        /// The context owns a private serial queue.
        case privateQueue
        /// The context runs on the main queue.
        case mainQueue
    }

    /// The context's queue kind.
    public let concurrencyType: ConcurrencyType
    let queue: ContextQueue
    let confinement: ConfinementCheck
    /// Whether a debug build's warning for this context was written (once per context).
    private let confinementWarned = Atomic<Bool>(false)

    /// The did-save notification, posted on `NotificationCenter.default` with the
    /// saving context as object, on its queue, after every save that moved changes.
    /// `userInfo`: `"inserted"`, `"updated"`, `"deleted"` (`Set<ObjectID>`),
    /// `"updatedAttributes"` (`[ObjectID: Set<String>]`) and `"changes"` (`ContextDidSaveChanges`).
    public static let didSaveNotification = Notification.Name("SwellManagedObjectContextDidSave")

    // Shared with other queues, behind locks.
    let level = LockedValue<LevelState>(LevelState())
    private let links = LockedValue<Links>(Links())
    private let settings = LockedValue<Settings>(Settings())

    private struct Links {
        var parent: ManagedObjectContext?
        var coordinator: PersistentStoreCoordinator?
        var children: [WeakContext] = []
        /// The coordinator at the root of the chain, once looked up (hot paths ask often).
        var rootCoordinator: PersistentStoreCoordinator?
        /// The query generation this context is pinned to (Store guarantees 56), or nil. Kept
        /// with the parent so that one lock per level finds the pin a context reads through.
        var pin: QueryGenerationLease?
    }

    private struct Settings {
        var retainsRegisteredObjects = false
        var name: String?
        var transactionAuthor: String?
        /// Nil until set: a child then uses its parent's, a root `.error`.
        var mergePolicy: MergePolicy?
        var automaticallyMergesChangesFromParent = false
        var logger: Logger?
    }

    /// Where contexts report when nobody gave them a logger.
    private static let defaultLogger = Logger(label: "swell.store")

    // Confined to the queue.
    /// Every object this context handed out and that is still alive.
    var registry: [ObjectID: WeakObject] = [:]
    var registrySweepThreshold = 1024
    /// Objects with unsaved changes: the context keeps these alive until they are saved or rolled back.
    var retained: [ObjectID: ManagedObject] = [:]
    /// Every registered object, when `retainsRegisteredObjects` is set.
    var strongRegistry: [ObjectID: ManagedObject] = [:]
    /// Primary keys taken from the coordinator and not used yet, by entity.
    var reservedKeys: [String: Range<Int64>] = [:]
    var cachedStoreIdentifier: String?
    /// Fetched results controllers observing this context.
    var changeObservers: [WeakObserver] = []
    /// The undo manager (`undoManager`), confined to the queue.
    var undoManagerStorage: UndoManager?
    /// Whether `undoManager` is set: read off the queue by `perform`, to close event groups only then.
    private let hasUndoManager = Atomic<Bool>(false)
    /// Whether something waits for the end of each event (a controller, `changedValuesForCurrentEvent()`):
    /// read off the queue by `perform`, so a context without either pays nothing (`+Events`).
    let followsEvents = Atomic<Bool>(false)
    /// The same, confined to the queue: read by every edit.
    var eventFollowers = EventFollowers()
    /// Whether the end of the current event is scheduled on the queue (a main-queue turn's end).
    var eventEndScheduled = false
    /// Each object's values before its first change in the current event, once
    /// `changedValuesForCurrentEvent()` was asked for on this context.
    var eventBaseValues: [ObjectID: [StoreValue]] = [:]
    /// `shouldDeleteInaccessibleFaults`.
    let deletesInaccessibleFaults = Atomic<Bool>(true)

    /// Creates a context on a private queue or the main queue. Give it a
    /// `persistentStoreCoordinator` (a root context) or a `parent` before use.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        let label = "swell.context.\(ContextCounter.next())"
        self.queue = ContextQueue(isMain: concurrencyType == .mainQueue, label: label)
        self.confinement = ConfinementCheck.current
    }

    // MARK: Configuration

    /// Records this context's edits so they can be undone and redone (Store guarantees 54);
    /// nil by default on every context, as on iOS — a context without one records nothing
    /// and pays nothing. Set it on the context's queue: `context.undoManager = UndoManager()`.
    ///
    /// Each `perform` / `performAndWait` block's edits (or, on the main queue without one, a
    /// turn's) form one undo group unless you group them yourself. `rollback()` and `reset()`
    /// empty it.
    public var undoManager: UndoManager? {
        get { undoManagerStorage }
        set {
            undoManagerStorage = newValue
            hasUndoManager.store(newValue != nil, ordering: .relaxed)
        }
    }

    /// Whether the context keeps every registered object alive (until `reset()`),
    /// not only those with unsaved changes. Default false.
    public var retainsRegisteredObjects: Bool {
        get { settings.withLock { $0.retainsRegisteredObjects } }
        set { settings.withLock { $0.retainsRegisteredObjects = newValue } }
    }

    /// A name for messages and debugging.
    public var name: String? {
        get { settings.withLock { $0.name } }
        set { settings.withLock { $0.name = newValue } }
    }

    /// Who wrote what this context saves to the store (Core Data's `transactionAuthor`): kept
    /// with each history transaction its saves and batch requests record (Store guarantees 46).
    public var transactionAuthor: String? {
        get { settings.withLock { $0.transactionAuthor } }
        set { settings.withLock { $0.transactionAuthor = newValue } }
    }

    /// How the conflicts this context's saves meet are resolved (Store guarantees 61): objects
    /// changed since this context read them (by another root, coordinator or process, or by the
    /// parent) and uniqueness conflicts, at the level it saves into — the parent, or for a root
    /// context the store. Set it on the context that saves (a background context importing with
    /// `.objectTrump`), as in Core Data. Until it is set, a child context uses its parent's
    /// policy (what Swell did before the saving context's policy decided; README "Merge
    /// policies"), and a root context `.error`.
    public var mergePolicy: MergePolicy {
        get { settings.withLock { $0.mergePolicy } ?? parent?.mergePolicy ?? .error }
        set { settings.withLock { $0.mergePolicy = newValue } }
    }

    /// Merge the changes of every save that reaches this context's parent
    /// (from a sibling; for a root context, from another root on the coordinator).
    public var automaticallyMergesChangesFromParent: Bool {
        get { settings.withLock { $0.automaticallyMergesChangesFromParent } }
        set { settings.withLock { $0.automaticallyMergesChangesFromParent = newValue } }
    }

    /// Where the context reports what it cannot throw: a batch of faults that could not be
    /// read, a fetched results controller's refetch that failed. Unless set, a child uses its
    /// parent's (set it on a container's `writerContext` for the whole stack); a root context's
    /// default is a swift-log `Logger` labelled `swell.store` (the process's logging system
    /// decides where it goes).
    public var logger: Logger {
        get { settings.withLock { $0.logger } ?? parent?.logger ?? Self.defaultLogger }
        set { settings.withLock { $0.logger = newValue } }
    }

    /// The coordinator of a root context; nil for a child. Setting it makes this a root context
    /// (unpinned: a query generation belongs to the store it was read from).
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { links.withLock { $0.coordinator } }
        set {
            // The pin it had is let go after the lock (its last lease closes a snapshot).
            _ = links.withLock { links -> QueryGenerationLease? in
                links.coordinator = newValue
                links.rootCoordinator = newValue
                if newValue != nil { links.parent = nil }
                defer { links.pin = nil }
                return links.pin
            }
            newValue?.register(root: self)
        }
    }

    /// The parent of a child context; nil for a root. Setting it makes this a child (unpinned:
    /// it reads through its parent's query generation, if any, until it is pinned itself).
    public var parent: ManagedObjectContext? {
        get { links.withLock { $0.parent } }
        set {
            // The pin it had is let go after the lock (its last lease closes a snapshot).
            _ = links.withLock { links -> QueryGenerationLease? in
                links.parent = newValue
                links.rootCoordinator = nil
                if newValue != nil { links.coordinator = nil }
                defer { links.pin = nil }
                return links.pin
            }
            newValue?.addChild(self)
        }
    }

    /// The root coordinator when already looked up, and whether this is a child context: one
    /// lock for a hot path that needs both.
    var chainLinks: (coordinator: PersistentStoreCoordinator?, isChild: Bool) {
        links.withLock { ($0.rootCoordinator, $0.parent != nil) }
    }

    /// The coordinator at the root of this context's chain.
    var coordinator: PersistentStoreCoordinator? {
        if let cached = links.withLock({ $0.rootCoordinator }) { return cached }
        var context: ManagedObjectContext? = self
        while let current = context {
            if let coordinator = current.persistentStoreCoordinator {
                links.withLock { $0.rootCoordinator = coordinator }
                return coordinator
            }
            context = current.parent
        }
        return nil
    }

    /// The lease of the query generation this context reads at: its own pin, or its nearest
    /// ancestor's (a child reads through its parent's generation); nil when unpinned.
    var queryGenerationLease: QueryGenerationLease? {
        var (pin, parent) = links.withLock { ($0.pin, $0.parent) }
        while pin == nil, let current = parent {
            (pin, parent) = current.links.withLock { ($0.pin, $0.parent) }
        }
        return pin
    }

    /// This context's own pin (nil when it is unpinned or reads through a parent's).
    var ownQueryGenerationLease: QueryGenerationLease? {
        links.withLock { $0.pin }
    }

    /// Replaces this context's own pin and returns the one it had (let it go outside the lock:
    /// the last lease of a generation closes its snapshot).
    func replaceQueryGenerationLease(with lease: QueryGenerationLease?) -> QueryGenerationLease? {
        links.withLock { links in
            defer { links.pin = lease }
            return links.pin
        }
    }

    /// Replaces this context's own pin when it is still `expected` (a root's commit moving its
    /// pinned descendants must not re-pin one that was unpinned or re-pinned meanwhile); returns
    /// the lease to let go outside the lock: the old one when replaced, else `lease`.
    func replaceQueryGenerationLease(with lease: QueryGenerationLease?, ifStill expected: QueryGenerationLease) -> QueryGenerationLease? {
        links.withLock { links in
            guard links.pin === expected else { return lease }
            defer { links.pin = lease }
            return links.pin
        }
    }

    private func addChild(_ child: ManagedObjectContext) {
        links.withLock { links in
            links.children.removeAll { $0.context == nil }
            links.children.append(WeakContext(child))
        }
    }

    var children: [ManagedObjectContext] {
        links.withLock { $0.children.compactMap(\.context) }
    }

    package var displayName: String {
        let kind = concurrencyType == .mainQueue ? "main queue" : "private queue"
        return "'\(name ?? queue.dispatchQueue.label)' (\(kind))"
    }

    public var description: String { "<ManagedObjectContext \(displayName)>" }

    // MARK: Queue

    /// Whether the end of a block is the end of an event someone waits for (an undo group to
    /// close, controllers to tell): read off the queue.
    private var endsEvents: Bool {
        hasUndoManager.load(ordering: .relaxed) || followsEvents.load(ordering: .relaxed)
    }

    /// Runs `block` on the context's queue later and returns at once. The block is one event:
    /// at its end its undo group closes and fetched results controllers report its changes.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        guard endsEvents else { return queue.async(block) }
        queue.async {
            block()
            self.endEvent()
        }
    }

    /// Runs `block` on the context's queue and returns after it ran. Re-entrant:
    /// called on the context's queue, it runs the block at once (as part of the running event).
    /// Otherwise the block is one event, ended before this returns.
    public func performAndWait<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        guard endsEvents, !queue.isCurrent else { return try queue.sync(block) }
        return try queue.sync { () throws(E) -> T in
            defer { endEvent() }
            return try block()
        }
    }

    /// Runs `block` on the context's queue and returns its result, or throws its error.
    /// Return object IDs or value snapshots, not managed objects. Enqueued, the block is one
    /// event, ended before this returns; run at once (already on the queue), it is part of the
    /// running one.
    public func perform<T: Sendable, E: Error>(schedule: ScheduledTaskType = .immediate,
                                               _ block: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        if schedule == .immediate, queue.isCurrent { return try block() }
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                let result: Result<T, E>
                do throws(E) { result = .success(try block()) } catch { result = .failure(error) }
                // The event ends before the caller goes on: its controllers have reported.
                if self.endsEvents { self.endEvent() }
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// When an async `perform` runs its block.
    public enum ScheduledTaskType: Sendable {
        /// At once when already on the queue; otherwise enqueued.
        case immediate
        /// Always enqueued after the work already on the queue.
        case enqueued
    }

    /// Checks that the caller is on this context's queue (a thread compare: cheap enough
    /// for every access). Off it: with `SWELL_CONCURRENCY_DEBUG=1` the program stops naming
    /// the context (Store guarantees 3); in a debug build without the variable a warning naming the
    /// context is written to stderr once per context and the program goes on.
    package func assertOnQueue(_ action: @autoclosure () -> String) {
        guard confinement != .off, !queue.isCurrent else { return }
        switch confinement {
        case .off:
            return
        case .warn:
            guard confinementWarned.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
            let message = "SwellStore concurrency warning: tried to \(action()) on context \(displayName) off its queue "
                + "(later ones on this context are not reported; SWELL_CONCURRENCY_DEBUG=1 stops at the first)"
            FileHandle.standardError.write(Data((message + "\n").utf8))
        case .stop:
            let message = "SwellStore concurrency violation: tried to \(action()) on context \(displayName) off its queue"
            FileHandle.standardError.write(Data((message + "\n").utf8))
            // A confinement violation is a programming error; the debug mode exists to stop at it.
            fatalError(message)
        }
    }
}

/// A weak reference to an object, for the registry.
struct WeakObject {
    weak var object: ManagedObject?
    init(_ object: ManagedObject) { self.object = object }
}

/// Numbers contexts for their queue labels.
enum ContextCounter {
    private static let counter = Atomic<Int>(0)
    static func next() -> Int { counter.add(1, ordering: .relaxed).newValue }
}
