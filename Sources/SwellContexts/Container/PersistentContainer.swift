import Foundation
import SwellStoreCore

/// The three-level stack, ready to use: a private-queue **writer** context
/// that owns the store and is the only one that writes to disk, the main-queue
/// **view** context as its child, and private-queue background contexts as
/// children of the view context.
///
/// Saving a background context moves its changes into the view context;
/// `saveToDisk()` then moves the view context's changes into the writer and
/// commits them on the writer's queue, so the main queue never waits for disk.
public final class PersistentContainer: Sendable {
    /// The container's name; the default store file is `<name>.sqlite`.
    public let name: String
    /// The model of the store.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator the writer context saves through.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// Where the store lives.
    public let storeURL: URL
    /// The store's options (`PersistentStoreOptions`: persistent history).
    public let options: PersistentStoreOptions
    /// The stages loading runs to bring an older store to the model (nil: lightweight migration only).
    public let migrationPlan: MigrationPlan?
    /// The root context: private queue, owns the store, the only one that writes to disk.
    public let writerContext: ManagedObjectContext
    /// The main-queue context for the user interface or the main flow: child of
    /// the writer, merging changes saved into the writer from elsewhere automatically.
    public let viewContext: ManagedObjectContext

    /// Creates the stack, opening a store of `storeTypes` by URL (`PersistentStoreCoordinator`);
    /// call `loadPersistentStores()` before using it. Without `storeURL`, the store is
    /// `<name>.sqlite` in `defaultDirectoryURL()`. `import SwellStore` adds the initialiser
    /// without `storeTypes`, with the store types its package traits link.
    public init(name: String, managedObjectModel: ManagedObjectModel, storeURL: URL? = nil,
                options: PersistentStoreOptions = PersistentStoreOptions(), migrationPlan: MigrationPlan? = nil,
                storeTypes: [StoreType]) {
        self.name = name
        self.options = options
        self.migrationPlan = migrationPlan
        self.managedObjectModel = managedObjectModel
        self.storeURL = storeURL ?? Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel, storeTypes: storeTypes)
        self.persistentStoreCoordinator = coordinator
        let writer = ManagedObjectContext(concurrencyType: .privateQueue)
        writer.name = "\(name).writer"
        writer.persistentStoreCoordinator = coordinator
        let view = ManagedObjectContext(concurrencyType: .mainQueue)
        view.name = "\(name).view"
        view.parent = writer
        view.automaticallyMergesChangesFromParent = true
        self.writerContext = writer
        self.viewContext = view
    }

    /// Where stores go by default: `$XDG_DATA_HOME` or `~/.local/share`.
    public static func defaultDirectoryURL() -> URL {
        if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// Opens (creating or migrating) the store: through ``migrationPlan`` when there is one.
    public func loadPersistentStores() throws {
        if let migrationPlan {
            try persistentStoreCoordinator.addPersistentStore(at: storeURL, migrationPlan: migrationPlan, options: options)
        } else {
            try persistentStoreCoordinator.addPersistentStore(at: storeURL, options: options)
        }
    }

    /// The container's store, as `loadPersistentStores(completionHandler:)` reports it.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        [PersistentStoreDescription(url: storeURL, options: options)]
    }

    /// Opens the store as `loadPersistentStores()` does, and calls `completionHandler` once,
    /// before returning, with the store's description and the error that stopped it (nil when
    /// it opened): Core Data's shape, for code ported from it.
    public func loadPersistentStores(completionHandler: (PersistentStoreDescription, (any Error)?) -> Void) {
        let description = persistentStoreDescriptions[0]
        do {
            try loadPersistentStores()
            completionHandler(description, nil)
        } catch {
            completionHandler(description, error)
        }
    }

    /// A new private-queue context, child of the view context. Save it to move
    /// its changes into the view context; then `saveToDisk()`.
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.parent = viewContext
        return context
    }

    /// Runs `block` on a new background context's queue and returns at once.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new background context's queue and returns its result.
    public func performBackgroundTask<T: Sendable, E: Error>(
        _ block: @escaping @Sendable (ManagedObjectContext) throws(E) -> T
    ) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(E) -> T in try block(context) }
    }

    /// Saves the view context into the writer, then the writer to disk on its
    /// own queue: the main queue only moves changes in memory.
    public func saveToDisk() async throws {
        let view = viewContext
        let writer = writerContext
        try await view.perform(schedule: .enqueued) { try view.save() }
        try await writer.perform(schedule: .enqueued) { try writer.save() }
    }

    /// Closes the store on purpose (see `PersistentStoreCoordinator.close()`). Save first:
    /// unsaved changes of the contexts stay in memory and can no longer reach the store.
    public func close() throws(StoreError) {
        try persistentStoreCoordinator.close()
    }

    /// Installs a seed store when none exists yet (a first launch): copies the
    /// seed file with its `-wal` and `-shm` files. Call before `loadPersistentStores()`.
    ///
    /// - Returns: whether the seed was installed.
    /// - Throws: `StoreError.seedFailed` when the seed cannot be read or copied;
    ///   no half-copied store is ever left at `storeURL`.
    @discardableResult
    public func seedIfNeeded(from seedURL: URL) throws -> Bool {
        try StoreSeeder.install(seed: seedURL, at: storeURL, replacing: false)
    }
}
