import Foundation
import SwellStoreCore

extension StoreType {
    /// The in-memory store (Core Data's `NSInMemoryStoreType`): `memory://name`, shared by the
    /// coordinators that add the same URL while any of them holds it.
    public static let inMemory = StoreType(name: "in-memory", schemes: ["memory"]) { InMemoryStore.named(by: $0) }
}
