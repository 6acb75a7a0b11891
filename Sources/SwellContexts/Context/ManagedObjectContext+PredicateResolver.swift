import Foundation
import Logging
import SwellStoreCore

/// Key-path predicates evaluated in memory read related objects as this context sees them.
/// The predicate engine cannot throw: a related object that cannot be read counts as absent
/// (the predicate is false for it) and the context's `logger` says so.
extension ManagedObjectContext: PredicateResolver {
    package func row(_ entity: EntityDescription, _ primaryKey: Int64) -> [StoreValue]? {
        let id = objectID(entity.name, primaryKey)
        guard let object = registeredObject(for: id) ?? materializeReporting(id, while: "evaluating a key-path predicate"),
              !object.isDeleted else { return nil }
        return object.currentValues()
    }

    package func owners(in join: JoinTable, column index: Int, listing member: Int64) -> [Int64] {
        do {
            return try owners(in: join, column: index, linking: member)
        } catch {
            reportUnreadableRelationship(join.relationship, error)
            return []
        }
    }

    package func objects(of destination: EntityDescription, pointingAt primaryKey: Int64, through column: String) -> [(primaryKey: Int64, values: [StoreValue])] {
        var request = FetchRequest(entityName: destination.name)
        request.predicate = FetchPredicate(format: "%K == %@", column, primaryKey)
        do {
            return try fetch(request).map { ($0.objectID.primaryKey, $0.currentValues()) }
        } catch {
            reportUnreadableRelationship(column, error)
            return []
        }
    }

    private func reportUnreadableRelationship(_ relationship: String, _ error: any Error) {
        logger.error("cannot read a relationship's members for a key-path predicate", metadata: [
            "context": "\(displayName)", "relationship": "\(relationship)", "error": "\(error)",
        ])
    }
}
