import Foundation
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import Testing
import SwellPipelineTestSupport

/// Issue 5's resources: a full disk under the store and under the export
/// folder, and a store on a read-only file system. Each case runs `swell` in a
/// private mount namespace (`unshare --mount --map-root-user`) with a small
/// tmpfs mounted by the test itself, so it needs no root and leaves no mount
/// behind: the namespace ends with the script.
@Suite struct ResourceTests {
    /// Items with 300-character titles: 30,000 of them are about 10 MB in a store.
    static func writeInputs(_ workspace: Workspace) throws {
        func page(_ ids: ClosedRange<Int>) -> String {
            let padding = String(repeating: "t", count: 300)
            return "{\"data\": [" + ids.map { "{\"id\": \($0), \"title\": \"\(padding)\($0)\", \"score\": \(Double($0) / 2)}" }.joined(separator: ",") + "]}"
        }
        try workspace.write("data/small.json", page(1...100))
        try workspace.write("data/big.json", page(1...30_000))
        try workspace.write("small.yml", EndToEndTests.pipeline(url: "data/small.json"))
        try workspace.write("big.yml", EndToEndTests.pipeline(url: "data/big.json"))
    }

    /// Runs `script` with `sh` in a private mount namespace in the workspace;
    /// `$SWELL` is the built binary. `run NAME ARGS…` in the script runs swell
    /// with its stdout, stderr and exit status going to NAME.out, NAME.err, NAME.status.
    static func confined(_ script: String, in workspace: Workspace) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        let prelude = """
            set -u
            run() { name=$1; shift; "$SWELL" "$@" > "$name.out" 2> "$name.err"; echo $? > "$name.status"; }

            """
        process.arguments = ["--mount", "--map-root-user", "/bin/sh", "-c", prelude + script]
        process.currentDirectoryURL = workspace.url
        var environment = ProcessInfo.processInfo.environment
        environment["SWELL"] = SwellProcess.executable.path
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func status(_ workspace: Workspace, _ name: String) throws -> Int32? {
        Int32(try workspace.read("\(name).status").trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A file's text, or "" (for messages).
    static func text(_ workspace: Workspace, _ relative: String) -> String {
        (try? workspace.read(relative)) ?? ""
    }

    static func count(_ store: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: store, mode: .readWrite)
        guard case .integer(let count)? = try connection.query("SELECT count(*) FROM Item").first?.first else { return -1 }
        return count
    }

    @Test func aFullDiskUnderTheStoreExits74AndKeepsWhatWasSaved() throws {
        let workspace = try Workspace()
        try Self.writeInputs(workspace)
        let mounted = try Self.confined("""
            mkdir -p full && mount -t tmpfs -o size=2m tmpfs full || exit 90
            run small import small.yml --store full/items.sqlite
            run big import big.yml --store full/items.sqlite --report big-report.json
            mkdir -p after && cp full/items.sqlite* after/
            """, in: workspace)
        #expect(mounted == 0, "the test could not mount a tmpfs in a private namespace")
        #expect(try Self.status(workspace, "small") == 0, "\(Self.text(workspace, "small.err"))")
        #expect(try Self.status(workspace, "big") == 74)
        let message = try workspace.read("big.err")
        #expect(message.contains("full/items.sqlite is full"), "\(message)")
        let store = workspace.path("after/items.sqlite")
        #expect(try SQLiteIntegrity.check(store) == "ok")
        let rows = try Self.count(store)
        #expect(rows >= 100, "the 100 rows saved before the disk filled up must stay")
        // The report tells what reached the disk, not what was parsed.
        let report = try workspace.report("big-report.json")
        #expect(report["status"] as? String == "failed")
        let source = (report["sources"] as? [[String: Any]])?.first ?? [:]
        let inserted = source["inserted"] as? Int ?? -1
        #expect(Int64(inserted) == rows - 100, "report says \(inserted) inserted, the store has \(rows - 100) new rows")
        // How many of the big import's rows reached the disk before it filled depends on timing
        // (0 to about 4,950 measured); the report counts exactly those.
    }

    @Test func aFullExportFolderExits73AndKeepsTheEarlierFile() throws {
        let workspace = try Workspace()
        try Self.writeInputs(workspace)
        let mounted = try Self.confined("""
            mkdir -p out && mount -t tmpfs -o size=64k tmpfs out || exit 90
            run first run small.yml --store items.sqlite
            cp out/items.csv first.csv
            run big import big.yml --store items.sqlite
            run export export big.yml --store items.sqlite
            ls -A out > out.list
            cp out/items.csv after.csv
            """, in: workspace)
        #expect(mounted == 0, "the test could not mount a tmpfs in a private namespace")
        #expect(try Self.status(workspace, "first") == 0, "\(Self.text(workspace, "first.err"))")
        #expect(try Self.status(workspace, "big") == 0, "\(Self.text(workspace, "big.err"))")
        #expect(try Self.status(workspace, "export") == 73)
        let message = try workspace.read("export.err")
        #expect(message.contains("out/items.csv"), "\(message)")
        #expect(message.contains("No space left on device"), "\(message)")
        // The earlier export is untouched and no temporary file is left beside it.
        #expect(try workspace.read("after.csv") == workspace.read("first.csv"))
        #expect(try workspace.read("out.list") == "items.csv\n")
    }

    @Test func aStoreOnAReadOnlyFileSystemExits74AndIsUnchanged() throws {
        let workspace = try Workspace()
        try Self.writeInputs(workspace)
        let mounted = try Self.confined("""
            mkdir -p ro && mount -t tmpfs -o size=4m tmpfs ro || exit 90
            run first import small.yml --store ro/items.sqlite
            cp ro/items.sqlite before.sqlite
            mount -o remount,ro ro || exit 91
            run again import big.yml --store ro/items.sqlite
            run export export small.yml --store ro/items.sqlite
            cp ro/items.sqlite after.sqlite
            """, in: workspace)
        #expect(mounted == 0, "the test could not mount a read-only tmpfs in a private namespace")
        #expect(try Self.status(workspace, "first") == 0, "\(Self.text(workspace, "first.err"))")
        #expect(try Self.status(workspace, "again") == 74)
        #expect(try workspace.read("again.err").contains("Read-only file system"), "\(Self.text(workspace, "again.err"))")
        #expect(try Self.status(workspace, "export") == 74)
        #expect(try workspace.read("export.err").contains("ro/items.sqlite"), "\(Self.text(workspace, "export.err"))")
        #expect(try workspace.read("export.err").contains("read-only file system"), "\(Self.text(workspace, "export.err"))")
        let before = try Data(contentsOf: URL(fileURLWithPath: workspace.path("before.sqlite")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.path("after.sqlite"))) == before)
    }
}
