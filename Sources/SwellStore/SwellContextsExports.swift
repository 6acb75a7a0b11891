// `import SwellStore` is the one import users write: the contexts (SwellContexts), the model
// and requests (SwellStoreCore, re-exported by SwellContexts), the store types its traits
// link — with their classes, for what only a store type offers (`SQLiteStore`'s deferred disk
// sync, `PostgresStore`'s source holds: `PersistentStoreCoordinator.persistentStore`) — and
// the typed layer here.
@_exported import SwellContexts
@_exported import SwellSQLite
@_exported import SwellInMemoryStore
#if PostgreSQL
@_exported import SwellPostgres
#endif
