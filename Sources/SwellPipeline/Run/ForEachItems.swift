import Foundation
import SwellCSV
import SwellCalendar
import SwellContexts

/// The items of a `for_each` from an entity (Pipeline file reference version 3): the values of one
/// attribute of the rows a predicate picks, as the store holds them when the run reaches the
/// source (the sources before it saved), each once, in ascending order; nulls skipped.
extension ForEachEntity {
    /// Reads the items on a new private context of `container`; `nilMatching` is what nil means
    /// in `where` (the file's `PipelineFile.predicateNilMatching`).
    ///
    /// - Throws: a store error from the fetch.
    func items(in container: PersistentContainer, nilMatching: FetchPredicate.NilMatching) throws -> [String] {
        let context = container.newBackgroundContext()
        context.name = "for-each.\(entity)"
        return try context.performAndWait {
            var request = FetchRequest(entityName: entity)
            if let predicate { request.predicate = FetchPredicate(format: predicate).nilMatching(nilMatching) }
            request.sortDescriptors = [FetchSortDescriptor(key: value, ascending: true)]
            var seen = Set<String>()
            var items: [String] = []
            for object in try context.fetch(request) {
                guard let text = Self.text(object.value(forKey: value)), seen.insert(text).inserted else { continue }
                items.append(text)
            }
            return items
        }
    }

    /// An attribute value as an item: text as it is, numbers in decimal, dates in ISO 8601
    /// UTC, booleans `true`/`false`; nil for null.
    static func text(_ value: Any?) -> String? {
        switch value {
        case let text as String: text
        case let bool as Bool: bool ? "true" : "false"
        case let int as Int: String(int)
        case let int as Int64: String(int)
        case let double as Double: CSVFormat.double(double)
        case let date as Date: ISODate.string(fromSeconds: date.timeIntervalSince1970)
        default: nil
        }
    }
}
