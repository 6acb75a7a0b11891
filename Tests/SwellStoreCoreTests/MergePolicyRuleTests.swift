@testable import SwellSQLite
import SwellStore
import SwellStoreCore
import Testing
import SwellStoreTestSupport

/// The merge policies' rules, from the one place they live (`MergePolicy`'s
/// resolution and attribute rules), which contexts and stores only apply.
@Suite(.onEveryStore) struct MergePolicyRuleTests {
    @Test func eachPolicyResolvesAConflictOneWay() {
        #expect(MergePolicy.error.resolution == .fail)
        #expect(MergePolicy.rollback.resolution == .keepExisting)
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite] {
            #expect(policy.resolution == .merge)
        }
    }

    @Test(arguments: [
        // policy, existing, incoming, incoming set it, survivor's value
        (MergePolicy.mergeByPropertyObjectTrump, StoreValue.text("old"), StoreValue.text("new"), true, StoreValue.text("new")),
        (.mergeByPropertyObjectTrump, .text("old"), .null, true, .null),
        (.mergeByPropertyObjectTrump, .text("old"), .text("new"), false, .text("old")),
        (.mergeByPropertyStoreTrump, .text("old"), .text("new"), true, .text("old")),
        (.mergeByPropertyStoreTrump, .null, .text("new"), true, .text("new")),
        (.mergeByPropertyStoreTrump, .null, .text("new"), false, .text("new")),
        (.mergeByPropertyStoreTrump, .text("old"), .null, true, .text("old")),
        (.overwrite, .text("old"), .null, false, .null),
        (.overwrite, .text("old"), .text("new"), true, .text("new")),
        (.rollback, .text("old"), .text("new"), true, .text("old")),
        (.error, .text("old"), .text("new"), true, .text("old")),
    ])
    func theSurvivorKeepsEachAttributeByThePolicy(policy: MergePolicy, existing: StoreValue, incoming: StoreValue,
                                                 set: Bool, survivor: StoreValue) {
        #expect(policy.merged(existing: existing, incoming: incoming, incomingSet: set) == survivor)
    }

    @Test func theNotificationNamesWhatAMergeMayChange() {
        var mask = AttributeMask.empty
        mask.insert(1)
        #expect(MergePolicy.overwrite.mayChange(mask: mask, count: 3) == [0, 1, 2])
        #expect(MergePolicy.mergeByPropertyObjectTrump.mayChange(mask: mask, count: 3) == [1])
        #expect(MergePolicy.mergeByPropertyStoreTrump.mayChange(mask: mask, count: 3) == [1])
        #expect(MergePolicy.rollback.mayChange(mask: mask, count: 3) == [])
    }
}
