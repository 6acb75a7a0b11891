import Foundation
import SwellStore
import SwellStoreTestSupport

/// The details of a failed save's conflicts (Store guarantees 61: "naming each conflicting
/// object with its changed attributes (the context's, the store's)"), apart from the core
/// comparisons so that those also build against code without `StoreError.conflicts`.
extension ConflictRun {
    /// Every difference between the `MergeConflict`s a save failed with and the model's.
    func conflictDetailMismatches(_ error: StoreError, _ expected: [Int: ConflictModel.Conflict]) -> [String] {
        var found: [String] = []
        if error.conflicts.count != expected.count {
            found.append("the error lists \(error.conflicts.count) conflicts, model: \(expected.count)")
        }
        for conflict in error.conflicts {
            guard let key = keys[conflict.objectID], let model = expected[key] else { continue }
            let what = "the conflict of entry \(key)"
            if conflict.isDeletion != model.isDeletion { found.append("\(what): isDeletion \(conflict.isDeletion), model: \(model.isDeletion)") }
            if let changed = model.changed, conflict.changed != changed {
                found.append("\(what): changed \(conflict.changed.sorted()), model: \(changed.sorted())")
            }
            if conflict.theirChanges != model.theirChanges {
                found.append("\(what): theirChanges \(conflict.theirChanges.sorted()), model: \(model.theirChanges.sorted())")
            }
            for name in model.changed ?? [] where string(conflict.ours[name]) != model.ours[name] {
                found.append("\(what): ours[\(name)] \(conflict.ours[name].map { "\($0)" } ?? "absent"), model: \(model.ours[name] ?? "nil")")
            }
            switch (conflict.theirs, model.theirs) {
            case (nil, nil): break
            case (let theirs?, let row?):
                for name in ConflictModel.attributes where string(theirs[name]) != row[name] {
                    found.append("\(what): theirs[\(name)] \(theirs[name].map { "\($0)" } ?? "absent"), model: \(row[name] ?? "nil")")
                }
            case (let theirs, let row):
                found.append("\(what): theirs \(theirs.map { "\($0)" } ?? "nil"), model: \(row.map { "\($0)" } ?? "nil (gone)")")
            }
        }
        return found
    }

    /// A conflict's value as the model's (`NSNull` for nil).
    private func string(_ value: Any?) -> String? { value as? String }
}
