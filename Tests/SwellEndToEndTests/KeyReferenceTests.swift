import Foundation
@testable import SwellPipeline
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// A to-one given by its destination's key (`author: { key: author_id }`, Pipeline file reference
/// version 3), as Datasette and many REST APIs give it: linked to the stored destination,
/// whose attributes stay as they are; null or missing unlinks; an unknown key is a bad
/// record naming path and value, unless `create: true` inserts a destination holding only
/// its key.
@Suite struct KeyReferenceTests {
    static func pipeline(issues: String, author: String = "{ key: author_id }", login: String = "login: string?") -> String {
        """
        version: 3
        name: tracker
        store: .swell/tracker.sqlite
        entities:
          User:
            key: [id]
            attributes: { id: integer, \(login) }
            relationships:
              issues: { to: Issue, many: true, inverse: author }
          Issue:
            key: [id]
            attributes: { id: integer, title: string }
            relationships:
              author: { to: User, inverse: issues }
        sources:
          - name: users
            entity: User
            url: users.json
          - name: issues
            entity: Issue
            url: \(issues)
            fields:
              author: \(author)
        exports:
          - name: issues-csv
            entity: Issue
            path: out/issues.csv
            columns: [id, title, { name: author, value: author.id }, { name: login, value: author.login }]
            sort: [id]
        """
    }

    static func workspace(issues: String) throws -> Workspace {
        let workspace = try Workspace()
        try workspace.write("users.json", #"[{"id": 59, "login": "ada"}, {"id": 60, "login": "bob"}]"#)
        try workspace.write("issues.json", issues)
        return workspace
    }

    @Test func aKeyLinksTheStoredDestinationAndLeavesItsAttributes() throws {
        let workspace = try Self.workspace(issues: #"[{"id": 1, "title": "a", "author_id": 59}, {"id": 2, "title": "b", "author_id": null}, {"id": 3, "title": "c"}, {"id": 4, "title": "d", "author_id": 60}]"#)
        try workspace.write("tracker.yml", Self.pipeline(issues: "issues.json"))
        let run = try workspace.run("run", "tracker.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/issues.csv") == "id,title,author,login\n1,a,59,ada\n2,b,,\n3,c,,\n4,d,60,bob\n")
        // A re-sync that moves issue 4 to ada and unlinks issue 1.
        try workspace.write("issues.json", #"[{"id": 1, "title": "a"}, {"id": 4, "title": "d", "author_id": 59}]"#)
        let resync = try workspace.run("run", "tracker.yml")
        #expect(resync.status == 0, "\(resync.stderr)")
        #expect(try workspace.read("out/issues.csv") == "id,title,author,login\n1,a,,\n2,b,,\n3,c,,\n4,d,59,ada\n")
    }

    @Test func anUnknownKeyIsABadRecordUnlessCreateInsertsIt() throws {
        let workspace = try Self.workspace(issues: #"[{"id": 1, "title": "a", "author_id": 99}, {"id": 2, "title": "b", "author_id": 59}]"#)
        try workspace.write("tracker.yml", Self.pipeline(issues: "issues.json"))
        let run = try workspace.run("import", "tracker.yml")
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("author_id: 99 is the key of no stored User"), "\(run.stderr)")
        // A bad record like any other: with on_error: skip it goes to the rejects file, the rest is written.
        try workspace.write("skip.yml", Self.pipeline(issues: "issues.json").replacingOccurrences(of: "    url: issues.json\n", with: "    url: issues.json\n    on_error: skip\n    rejects: out/rejects.ndjson\n"))
        let skipped = try workspace.run("run", "skip.yml")
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(try workspace.read("out/issues.csv") == "id,title,author,login\n2,b,59,ada\n")
        #expect(try workspace.read("out/rejects.ndjson").contains("author_id: 99 is the key of no stored User"))
        try workspace.write("issues.json", #"[{"id": 1, "title": "a", "author_id": 99}]"#)
        try workspace.write("create.yml", Self.pipeline(issues: "issues.json", author: "{ key: author_id, create: true }"))
        let created = try workspace.run("run", "create.yml")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try workspace.read("out/issues.csv") == "id,title,author,login\n1,a,99,\n2,b,59,ada\n")
    }

    @Test func theFileRulesOfAKeyReference() {
        func message(_ text: String) -> String {
            do {
                _ = try PipelineFileLoader(environment: [:]).load(text: text, path: "demo.yml")
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message(Self.pipeline(issues: "x", author: "{ key: author_id, create: true }", login: "login: string")).contains("its attribute login is required"))
        #expect(message(Self.pipeline(issues: "x").replacingOccurrences(of: "version: 3", with: "version: 2")).contains("needs version: 3"))
        let toMany = Self.pipeline(issues: "x").replacingOccurrences(of: "    entity: Issue\n    url: x", with: "    entity: User\n    url: x")
            .replacingOccurrences(of: "author: { key: author_id }", with: "issues: { key: issue_id }")
        #expect(message(toMany).contains("is a to-many"))
    }
}
