import Foundation
import SwellCSV
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A re-sync's records that arrive equal to what is stored stay out of the
/// worker's context; they are still counted exactly, and the later of two
/// records with one key still wins.
@Suite struct ResyncTests {
    @Test func aResyncCountsEachUnchangedRecordAndTheLaterOfTwoRecordsWins() throws {
        let workspace = try Workspace()
        try workspace.write("data/page.json", EndToEndTests.page(1...50))
        try workspace.write("items.yml", EndToEndTests.pipeline(url: "data/page.json"))
        #expect(try workspace.run("import", "items.yml").status == 0)
        // 40 records as stored, 2 changed, 3 new; key 7 comes twice: changed first, then as stored.
        var records = (1...50).filter { $0 != 7 }.map { id -> String in
            let title = id == 10 || id == 11 ? "changed \(id)" : "item \(id)"
            return "{\"id\": \(id), \"title\": \"\(title)\", \"score\": \(Double(id) / 2)}"
        }
        records.insert("{\"id\": 7, \"title\": \"briefly different\", \"score\": 3.5}", at: 3)
        records.insert("{\"id\": 7, \"title\": \"item 7\", \"score\": 3.5}", at: 20)
        records += (51...53).map { "{\"id\": \($0), \"title\": \"item \($0)\", \"score\": 1}" }
        try workspace.write("data/page.json", "{\"data\": [\(records.joined(separator: ","))], \"next\": null}")
        let outcome = try workspace.run("run", "items.yml", "--report", "out/report.json", "--workers", "1")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(source["records"] as? Int == 54)
        #expect(source["inserted"] as? Int == 3)
        // 10 and 11 changed. Key 7's two records are in one batch: the second, as stored,
        // wins, so its stored values did not change: unchanged, like the 47 others.
        #expect(source["updated"] as? Int == 2)
        #expect(source["unchanged"] as? Int == 48)
        let lines = try workspace.read("out/items.csv").split(separator: "\n").map(String.init)
        #expect(lines.contains("7,item 7,3.5,"))
        #expect(lines.contains("10,changed 10,5,"))
        #expect(lines.count == 54)
    }
}

/// Exports keep their bytes: the bundled pipeline's exports, made by the build
/// before exports were formatted from column bytes, and the report's digests of them.
@Suite struct ExportBytesTests {
    @Test func theBundledExportsHaveTheirKnownBytesAndDigests() throws {
        let workspace = try Workspace()
        let outcome = try workspace.run("run", "pipelines/surf-journal.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let exports = try #require(try workspace.report()["exports"] as? [[String: Any]])
        let digests = Dictionary(uniqueKeysWithValues: exports.compactMap { export -> (String, String)? in
            guard let path = export["path"] as? String, let digest = export["sha256"] as? String else { return nil }
            return ((path as NSString).lastPathComponent, digest)
        })
        // sha256sum of the files the previous build wrote from the same pipeline. The gzip
        // file's bytes are libdeflate 1.14's (Debian 12's; they changed once, with the
        // compressor, from zlib's fc74993e…); the CSV inside is the one every build wrote.
        #expect(digests["surf-journal.csv.gz"] == "cbc41088621e0d454ff021052698fd908af5106ac0ca76dfe59ad8bb438e1e59")
        #expect(digests["surf-journal-good-days.csv"] == "e7f270f1becce194c89d1b7e4ec3ce5dd0568cd5daf5713f0beb31d678ddb075")
        let gzip = try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/surf-journal.csv.gz")))
        let csvDigest = SHA256Digest.hex(of: try Gzip.decompress([UInt8](gzip)))
        #expect(csvDigest == "7f309e5017123633a05b270e195f7c360633a8fff4090f3f3c9c5ee985658c38")
    }
}
