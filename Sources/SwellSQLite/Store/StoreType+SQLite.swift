import Foundation
import SwellStoreCore

extension StoreType {
    /// The SQLite store (`SQLiteStore`): file paths and `file:` URLs, the file and its
    /// directory created when missing, in WAL mode.
    public static let sqlite = StoreType(name: "SQLite", schemes: [], opensFiles: true) { SQLiteStore(url: $0) }
}
