import Foundation
import SwellStoreCore

extension ManagedObject {
    /// The value at a dot-separated key path, as this object's context sees it (Core Data's
    /// `value(forKeyPath:)`): to-one relationships are followed (`author.name`), and the last
    /// name is read with `value(forKey:)`. nil when a to-one on the way is empty or a name
    /// is not a property.
    ///
    /// Through a to-many the path goes on from every member, giving the members' values
    /// (`tags.name`): an array for an ordered to-many, else a `Set<AnyHashable>`; nil
    /// values are left out. `@count` after a to-many gives its number of members
    /// (`books.@count`).
    public func value(forKeyPath keyPath: String) -> Any? {
        managedObjectContext?.assertOnQueue("read \(entity.name).\(keyPath)")
        return value(along: keyPath.split(separator: ".").map(String.init)[...])
    }

    private func value(along path: ArraySlice<String>) -> Any? {
        guard let name = path.first else { return nil }
        let value = self.value(forKey: name)
        let rest = path.dropFirst()
        guard !rest.isEmpty else { return value }
        if let destination = value as? ManagedObject { return destination.value(along: rest) }
        let ordered = value as? [ManagedObject]
        guard let members = ordered ?? (value as? Set<ManagedObject>).map(Array.init) else { return nil }
        if rest.first == "@count", rest.count == 1 { return members.count }
        let values = members.compactMap { $0.value(along: rest) }
        if ordered != nil { return values }
        return Set(values.compactMap { $0 as? AnyHashable })
    }
}
