@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Replace mode's sweep: the rows whose key no page brought go, read once, deleted by primary key.
@Suite struct ReplaceSweeperTests {
    @Test func theSweepDeletesTheRowsWhoseKeyWasNotSeen() async throws {
        let workspace = try Workspace()
        let container = try makeContainer(workspace, entity: itemEntity)
        try await insert((1...1000).map { [StoreValue.integer(Int64($0)), .text("item \($0)")] }, of: itemEntity, in: container)
        let sweeper = ReplaceSweeper(entity: itemEntity.description)
        sweeper.saw((1...10).map { [StoreValue.integer(Int64($0))] })
        sweeper.saw([[.integer(500)], [.integer(2000)]])
        let store = try #require(container.persistentStoreCoordinator.sqliteStore)
        let readsBefore = store.readCount.load(ordering: .relaxed)
        let deleted = try sweeper.sweep(in: container)
        let reads = store.readCount.load(ordering: .relaxed) - readsBefore
        #expect(deleted == 989)
        // One pass over the table, no read per deleted row.
        #expect(reads < 5)
        try await container.saveToDisk()
        let reader = container.newBackgroundContext()
        let left = try await reader.perform { () throws -> [Int64] in
            var ids: [Int64] = []
            try reader.enumerateRows(FetchRequest(entityName: "Item")) { _, values in
                if case .integer(let id) = values[0] { ids.append(id) }
            }
            return ids
        }
        #expect(left == Array(1...10) + [500])
    }

    @Test func nothingSeenNothingStoredDeletesNothing() async throws {
        let workspace = try Workspace()
        let container = try makeContainer(workspace, entity: itemEntity)
        #expect(try ReplaceSweeper(entity: itemEntity.description).sweep(in: container) == 0)
    }
}
