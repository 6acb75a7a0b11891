import Foundation
import SwellStoreCore

/// What a container's store is: where it lives and how it is opened (Core Data's
/// `NSPersistentStoreDescription`, with what Swell has of it). A value: make and pass it anywhere.
public struct PersistentStoreDescription: Sendable, Equatable, CustomStringConvertible {
    /// The store's URL: a file for SQLite, `memory://…` or `postgresql://…` for the others.
    public var url: URL
    /// The options the store is opened with (persistent history).
    public var options: PersistentStoreOptions

    /// A description of the store at `url`.
    public init(url: URL, options: PersistentStoreOptions = PersistentStoreOptions()) {
        self.url = url
        self.options = options
    }

    public var description: String { "<PersistentStoreDescription \(url.absoluteString)>" }
}
