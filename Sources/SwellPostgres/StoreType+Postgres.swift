import Foundation
import SwellStoreCore

extension StoreType {
    /// The PostgreSQL store (`PostgresStore`, over libpq): `postgres://` and `postgresql://`
    /// URLs, with libpq's own environment and query parameters.
    public static let postgres = StoreType(name: "PostgreSQL", schemes: ["postgres", "postgresql"]) { PostgresStore(url: $0) }
}
