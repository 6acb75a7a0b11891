import Foundation
import Testing
import SwellPipelineTestSupport

/// Bad pages and bad values through the binary: exit 65 naming where, never a crash; valid records kept.
@Suite struct BadInputTests {
    private func run(_ page: String, onError: String = "fail") throws -> (SwellProcess.Outcome, Workspace) {
        let workspace = try Workspace()
        try workspace.write("data/items.json", page)
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json", sourceExtra: "    on_error: \(onError)\n    rejects: out/rejects.ndjson"))
        return (try workspace.run("run", "items.yml", "--report", "out/report.json"), workspace)
    }

    @Test func aPageWithAByteOrderMarkExits65NamingIt() throws {
        let (outcome, _) = try run("\u{FEFF}{\"data\": [{\"id\": 1}]}")
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("byte-order mark"))
        #expect(outcome.stderr.contains("data/items.json"))
    }

    @Test func nestingTenThousandDeepExits65WithoutACrash() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let (outcome, _) = try run("{\"data\": [{\"id\": 1, \"title\": \(deep)}]}")
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("nesting"))
    }

    @Test func numbersOutOfRangeAndNaNSpellingsAreBadRecords() throws {
        let (outcome, workspace) = try run("{\"data\": [{\"id\": 1, \"score\": 2.5}, {\"id\": 99999999999999999999}, {\"id\": 3, \"score\": \"NaN\"}, {\"id\": 4, \"score\": \"Infinity\"}]}", onError: "skip")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let rejects = try workspace.read("out/rejects.ndjson").split(separator: "\n")
        #expect(rejects.count == 3)
        #expect(rejects.contains { $0.contains("\"index\":1") && $0.contains("\"error\":\"id:") })
        #expect(rejects.filter { $0.contains("\"error\":\"score:") }.count == 2)
        #expect(try workspace.read("out/items.csv") == "id,title,score,updated\n1,,2.5,\n")
        let bare = try run("{\"data\": [{\"id\": 1, \"score\": NaN}]}")
        #expect(bare.0.status == 65)
    }

    @Test func aOneMegabyteStringIsStoredAndExportedWhole() throws {
        let big = String(repeating: "x,\"y\" ", count: 175_000)
        let (outcome, workspace) = try run("{\"data\": [{\"id\": 1, \"title\": \"\(big.replacingOccurrences(of: "\"", with: "\\\""))\"}]}")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let csv = try workspace.read("out/items.csv")
        #expect(csv.count > 1_000_000)
        #expect(RFC4180.parse(csv)[1][1] == big)
    }

    /// A store URL whose scheme swell does not open is a usage error (64) naming the scheme
    /// and the forms it takes, for every command; nothing is created (no `memory:/x` file).
    @Test func aStoreURLOfAnotherSchemeIsRefusedNamingTheKnownOnes() throws {
        let workspace = try Workspace()
        try workspace.write("data/p1.json", "{\"data\": [{\"id\": 1, \"title\": \"a\"}], \"next\": null}")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/p1.json", sourceExtra: "    paginate: { next: next }"))
        for (command, store) in [("run", "memory://x"), ("import", "memory://x"), ("export", "redis://host/0"), ("status", "memory://x")] {
            let outcome = try workspace.run(command, "items.yml", "--store", store)
            #expect(outcome.status == 64, "\(command) \(store): \(outcome.stderr)")
            let scheme = String(store.prefix { $0 != ":" })
            #expect(outcome.stderr.contains("\(scheme)://") && outcome.stderr.contains("postgres://"), "\(outcome.stderr)")
        }
        let seeded = try workspace.run("seed", "items.yml", "--from", "none.sqlite", "--store", "memory://x")
        #expect(seeded.status == 64, "\(seeded.stderr)")
        // In the file, `validate` finds it first, at its line.
        try workspace.write("memory.yml", try workspace.read("items.yml").replacingOccurrences(of: "store: .swell/items.sqlite", with: "store: memory://x"))
        let validated = try workspace.run("validate", "memory.yml")
        #expect(validated.status == 64 && validated.stderr.contains("memory.yml:3:") && validated.stderr.contains("memory://"), "\(validated.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.path("memory:")))
    }

    @Test func duplicateKeysInOnePageAndAcrossPagesLeaveTheLaterRecord() throws {
        let workspace = try Workspace()
        try workspace.write("data/p1.json", "{\"data\": [{\"id\": 1, \"title\": \"first\"}, {\"id\": 1, \"title\": \"second\"}], \"next\": \"p2.json\"}")
        try workspace.write("data/p2.json", "{\"data\": [{\"id\": 1, \"title\": \"third\"}, {\"id\": 2, \"title\": \"other\"}], \"next\": null}")
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/p1.json", sourceExtra: "    paginate: { next: next }"))
        let outcome = try workspace.run("run", "items.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try workspace.read("out/items.csv") == "id,title,score,updated\n1,third,,\n2,other,,\n")
    }

    @Test func withSeveralWorkersEveryKeysLaterRecordWins() throws {
        let workspace = try Workspace()
        // Three pages repeating the same 3,000 keys: chunks of 500 spread over the workers.
        for (page, title) in ["first", "second", "third"].enumerated() {
            let records = (1...3_000).map { "{\"id\": \($0), \"title\": \"\(title)\"}" }.joined(separator: ",")
            let next = page < 2 ? "\"p\(page + 2).json\"" : "null"
            try workspace.write("data/p\(page + 1).json", "{\"data\": [\(records)], \"next\": \(next)}")
        }
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/p1.json", sourceExtra: "    paginate: { next: next }"))
        let outcome = try workspace.run("run", "items.yml", "--workers", "4", "--batch-size", "700")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let rows = RFC4180.parse(try workspace.read("out/items.csv")).dropFirst()
        #expect(rows.count == 3_000)
        #expect(rows.allSatisfy { $0[1] == "third" })
    }

    @Test func anEmptyPageAndAnInvalidUTF8PageAreReported() throws {
        let (empty, _) = try run("")
        #expect(empty.status == 65)
        let workspace = try Workspace()
        var bytes = Array("{\"data\": [{\"id\": 1, \"title\": \"".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\"}]}".utf8)
        try FileManager.default.createDirectory(atPath: workspace.path("data"), withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.path("data/items.json")))
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/items.json"))
        let invalid = try workspace.run("run", "items.yml")
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("UTF-8"))
    }
}
