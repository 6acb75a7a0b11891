import Foundation
import SwellCSV
import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Write modes, export options, the store commands and exit codes through the binary.
@Suite struct ModesAndExitCodesTests {
    @Test func appendRejectsKeysThatExistAlready() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", EndToEndTests.page(1...3))
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json", sourceExtra: "    mode: append\n    on_error: skip\n    rejects: out/rejects.ndjson"))
        #expect(try workspace.run("import", "items.yml").status == 0)
        try workspace.write("data/items.json", EndToEndTests.page(3...4))
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = (try workspace.report()["sources"] as? [[String: Any]])?.first
        #expect(source?["rejected"] as? Int == 1)
        #expect(source?["inserted"] as? Int == 1)
        #expect(try workspace.read("out/rejects.ndjson").contains("exists already"))
    }

    @Test func exportOptionsShapeTheFile() throws {
        let workspace = try Workspace()
        try workspace.write("data/items.json", "{\"data\": [{\"id\": 2, \"title\": \"=SUM(A1)\", \"score\": 0.1, \"updated\": \"2024-05-01T06:30:00.500Z\"}, {\"id\": 1, \"title\": \"plain, \\\"quoted\\\"\", \"score\": -3, \"updated\": \"2024-05-01T06:30:00Z\"}]}")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json", extra: """
              - name: safe
                entity: Item
                path: out/safe.csv
                columns: [id, title, score, { name: day, value: updated, format: "dd/MM/yyyy" }]
                header: false
                escape_formulas: true
            """))
        #expect(try workspace.run("run", "items.yml").status == 0)
        #expect(try workspace.read("out/items.csv") == "id,title,score,updated\n1,\"plain, \"\"quoted\"\"\",-3,2024-05-01T06:30:00Z\n2,=SUM(A1),0.1,2024-05-01T06:30:00.500Z\n")
        #expect(try workspace.read("out/safe.csv") == "1,\"plain, \"\"quoted\"\"\",-3,01/05/2024\n2,'=SUM(A1),0.1,01/05/2024\n")
    }

    @Test func unwritableExportsExit73AndUnusableStoresExit74() throws {
        let workspace = try Workspace()
        try workspace.write("blocker", "a file where a folder should be")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "fixtures/surf-journal/page-0001.json").replacingOccurrences(of: "out/items.csv", with: "blocker/items.csv"))
        let unwritable = try workspace.run("run", "items.yml")
        #expect(unwritable.status == 73)
        #expect(unwritable.stderr.contains("blocker/items.csv"))
        try FileManager.default.createDirectory(atPath: workspace.path("folder.sqlite"), withIntermediateDirectories: true)
        let directory = try workspace.run("import", "items.yml", "--store", "folder.sqlite")
        #expect(directory.status == 74)
        try workspace.write("text.sqlite", String(repeating: "not a database ", count: 100))
        let notAStore = try workspace.run("import", "items.yml", "--store", "text.sqlite")
        #expect(notAStore.status == 74)
        #expect(try workspace.read("text.sqlite").hasPrefix("not a database"))
        let noStore = try workspace.run("export", "items.yml", "--store", "missing.sqlite")
        #expect(noStore.status == 74)
    }

    @Test func statusAndSeedWorkOnTheStore() throws {
        let workspace = try Workspace()
        let imported = try workspace.run("import", "pipelines/surf-journal.yml")
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try workspace.run("status", "pipelines/surf-journal.yml")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("JournalEntry: 20 rows"))
        #expect(status.stdout.contains("succeeded"))
        let seeded = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", ".swell/surf-journal.sqlite", "--store", "copy/seeded.sqlite")
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let copy = try workspace.run("status", "pipelines/surf-journal.yml", "--store", "copy/seeded.sqlite")
        #expect(copy.stdout.contains("JournalEntry: 20 rows"))
        let again = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", ".swell/surf-journal.sqlite", "--store", "copy/seeded.sqlite")
        #expect(again.status == 0)
        #expect(again.stdout.contains("nothing done"))
        let missing = try workspace.run("seed", "pipelines/surf-journal.yml", "--from", "nope.sqlite", "--store", "other/s.sqlite")
        #expect(missing.status == 74)
        #expect(!FileManager.default.fileExists(atPath: workspace.path("other/s.sqlite")))
    }

    @Test func badArgumentsExit64() throws {
        let workspace = try Workspace()
        #expect(try workspace.run("run", "pipelines/surf-journal.yml", "--workers", "0").status == 64)
        #expect(try workspace.run("run", "pipelines/surf-journal.yml", "--only", "nope").status == 64)
        #expect(try workspace.run("frobnicate").status == 64)
        #expect(try workspace.run("run", "missing.yml").status == 64)
    }
}
