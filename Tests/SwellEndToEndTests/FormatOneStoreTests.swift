import Foundation
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import Testing
import SwellPipelineTestSupport

/// A store `swell import` wrote in store format 1 (fixtures/stores/surf-journal-format1.sqlite,
/// from commit 66306fa) opens with the format 2 code: its integer-keyed table is rebuilt with
/// every row and ID, a re-sync finds every record unchanged, and the export is byte-identical
/// to one from a store the new code wrote.
@Suite struct FormatOneStoreTests {
    @Test func aFormat1StoreResyncsUnchangedAndExportsTheSameBytes() throws {
        let workspace = try Workspace()
        let store = workspace.path(".swell/surf-journal.sqlite")
        try FileManager.default.createDirectory(atPath: workspace.path(".swell"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: workspace.path("fixtures/stores/surf-journal-format1.sqlite"), toPath: store)
        let before = try SQLiteConnection(path: store, mode: .readOnly).query("SELECT id, _pk FROM JournalEntry ORDER BY id")
        #expect(before.count == 20)
        let outcome = try workspace.run("run", "pipelines/surf-journal.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(source["inserted"] as? Int == 0)
        #expect(source["updated"] as? Int == 0)
        #expect(source["unchanged"] as? Int == 20)
        let connection = try SQLiteConnection(path: store, mode: .readOnly)
        // Every ID differs from its key (two workers took blocks of IDs): each stays, in `_pk`.
        #expect(try connection.query("SELECT id, _pk FROM JournalEntry ORDER BY id") == before)
        #expect(try connection.query("SELECT name FROM pragma_table_info('JournalEntry') WHERE pk > 0") == [[.text("id")]])
        #expect(try connection.query("SELECT value FROM swell_metadata WHERE key = 'format_version'") == [[.text("2")]])
        let fresh = try Workspace()
        let freshOutcome = try fresh.run("run", "pipelines/surf-journal.yml")
        #expect(freshOutcome.status == 0, "\(freshOutcome.stderr)")
        for path in ["out/surf-journal.csv.gz", "out/surf-journal-good-days.csv"] {
            let migrated = try Data(contentsOf: URL(fileURLWithPath: workspace.path(path)))
            #expect(migrated == (try Data(contentsOf: URL(fileURLWithPath: fresh.path(path)))), "\(path)")
        }
    }
}
