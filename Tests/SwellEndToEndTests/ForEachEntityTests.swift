import Foundation
import SwellLocks
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// `for_each: { entity, value, where }` (Pipeline file reference version 3): one request per stored
/// value, read after the sources before it in the same run are saved; none when nothing
/// matches; `--shard` over the items.
@Suite struct ForEachEntityTests {
    static func pipeline(where predicate: String = "archived == false") -> String {
        """
        version: 3
        name: repos
        store: .swell/repos.sqlite
        entities:
          Repo:
            key: [full_name]
            attributes:
              full_name: string
              archived: boolean
          Issue:
            key: [id]
            attributes:
              id: integer
              repo: string
        sources:
          - name: repos
            entity: Repo
            url: ${BASE}/repos
          - name: issues
            entity: Issue
            url: ${BASE}/repos/${item}/issues
            for_each: { entity: Repo, value: full_name, where: "\(predicate)" }
        exports:
          - name: issues-csv
            entity: Issue
            path: out/issues.csv
            columns: [id, repo]
            sort: [id]
        """
    }

    /// Three repositories (b archived), two issues each; every request recorded.
    static func server(_ received: LockedValue<[String]>) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request in
            received.withLock { $0.append(request.path) }
            if request.path == "/repos" {
                return .json(#"[{"full_name": "o/a", "archived": false}, {"full_name": "o/b", "archived": true}, {"full_name": "o/c", "archived": false}]"#)
            }
            let parts = request.path.split(separator: "/")
            guard parts.count == 4, parts[0] == "repos", parts[3] == "issues", let n = ["a": 1, "b": 2, "c": 3][String(parts[2])] else {
                return .json("{}", status: 404)
            }
            return .json("[{\"id\": \(n * 10 + 1), \"repo\": \"o/\(parts[2])\"}, {\"id\": \(n * 10 + 2), \"repo\": \"o/\(parts[2])\"}]")
        }
    }

    @Test func oneRequestPerMatchingRowSavedEarlierInTheRun() throws {
        let received = LockedValue<[String]>([])
        let server = try Self.server(received)
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline())
        let run = try workspace.run("run", "repos.yml", "--report", "out/report.json", environment: ["BASE": server.baseURL])
        #expect(run.status == 0, "\(run.stderr)")
        // "o/a" is percent-encoded by nothing: the item goes in the path as it is.
        #expect(received.withLock { $0 } == ["/repos", "/repos/o/a/issues", "/repos/o/c/issues"])
        #expect(try workspace.read("out/issues.csv") == "id,repo\n11,o/a\n12,o/a\n31,o/c\n32,o/c\n")
        let names = (try workspace.report()["sources"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["repos", "issues[o/a]", "issues[o/c]"])
    }

    @Test func noMatchingRowRunsNoRequest() throws {
        let received = LockedValue<[String]>([])
        let server = try Self.server(received)
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline(where: "full_name == 'none'"))
        let run = try workspace.run("run", "repos.yml", environment: ["BASE": server.baseURL])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(received.withLock { $0 } == ["/repos"])
    }

    @Test func shardsSplitTheItems() throws {
        let received = LockedValue<[String]>([])
        let server = try Self.server(received)
        let workspace = try Workspace()
        try workspace.write("repos.yml", Self.pipeline())
        // The for_each is the file's second source (position 1): item k is at position 1 + k.
        let first = try workspace.run("import", "repos.yml", "--shard", "0/2", environment: ["BASE": server.baseURL])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(received.withLock { $0 } == ["/repos", "/repos/o/c/issues"])
        let second = try workspace.run("import", "repos.yml", "--shard", "1/2", environment: ["BASE": server.baseURL])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(received.withLock { $0 } == ["/repos", "/repos/o/c/issues", "/repos/o/a/issues"])
    }
}
