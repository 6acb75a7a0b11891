import Foundation
import SwellCSV
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Pipeline file reference, "Nested records and relationships (version 2)": nested
/// objects upserted and linked, the set is what the record says, cascade for
/// owned children, key-path and joined export columns, nested counts, rejects
/// naming the nested path, validation, and a kill mid-import.
@Suite struct NestedRecordTests {
    /// Runs SQL on a workspace's store.
    private func query(_ workspace: Workspace, _ store: String, _ sql: String) throws -> [[StoreValue]] {
        let connection = try SQLiteConnection(path: workspace.path(store), mode: .readOnly)
        return try connection.query(sql)
    }

    private func integers(_ rows: [[StoreValue]]) -> [Int64] {
        rows.compactMap { if case .integer(let value)? = $0.first { return value } else { return nil } }
    }

    /// The bundled GitHub pipeline with its URL pointed at `url` (no incremental parameter).
    private func githubPipeline(url: String) throws -> String {
        let text = try String(contentsOf: Workspace.repositoryRoot.appendingPathComponent("pipelines/github-issues.yml"), encoding: .utf8)
        return text
            .replacingOccurrences(of: "https://api.github.com/repos/${GITHUB_REPO:-apple/swift-log}/issues?state=all&per_page=100", with: url)
            .replacingOccurrences(of: "    incremental:\n      cursor: updated_at\n      param: since\n", with: "")
    }

    /// The fixture page as JSON objects, to edit.
    private func issuesPage() throws -> [[String: Any]] {
        let data = try Data(contentsOf: Workspace.repositoryRoot.appendingPathComponent("fixtures/third-party/github-issues-page.json"))
        return try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
    }

    private func write(_ workspace: Workspace, _ path: String, json: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        try workspace.write(path, String(decoding: data, as: UTF8.self))
    }

    /// Label names linked to the issue with `number`, sorted.
    private func labels(_ workspace: Workspace, issue number: Int) throws -> [String] {
        try query(workspace, ".swell/github-issues.sqlite", """
            SELECT l.name FROM Issue_labels j JOIN Issue i ON j.Issue = i._pk JOIN Label l ON j.labels = l._pk
            WHERE i.number = \(number) ORDER BY l.name
            """).compactMap { if case .text(let name)? = $0.first { return name } else { return nil } }
    }

    @Test func theGitHubPipelineSyncsAuthorsAndLabelsAsRelationshipsAndARemovedLabelIsUnlinked() throws {
        let workspace = try Workspace()
        var page = try issuesPage()
        // The fixture's own bytes first (its member order is what the json attribute keeps).
        let original = try Data(contentsOf: Workspace.repositoryRoot.appendingPathComponent("fixtures/third-party/github-issues-page.json"))
        try workspace.write("data/issues.json", String(decoding: original, as: UTF8.self))
        try workspace.write("gh.yml", try githubPipeline(url: "data/issues.json"))
        let first = try workspace.run("run", "gh.yml", "--report", "out/report.json")
        #expect(first.status == 0, "\(first.stderr)")
        let store = ".swell/github-issues.sqlite"
        #expect(integers(try query(workspace, store, "SELECT (SELECT count(*) FROM Issue) * 1000000 + (SELECT count(*) FROM User) * 1000 + (SELECT count(*) FROM Label)"))
            == [100_074_013])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Issue_labels")) == [34])
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        #expect(try labels(workspace, issue: 46) == ["Catalog", "feature"])
        #expect(try query(workspace, store, "SELECT u.login FROM Issue i JOIN User u ON i.author = u._pk WHERE i.number = 46") == [[.text("Mytherin")]])
        // The json attribute keeps the object as its compact text, member order kept.
        let reactions = try query(workspace, store, "SELECT reactions FROM Issue WHERE number = 10")
        guard case .text(let text)? = reactions.first?.first else { Issue.record("no reactions"); return }
        #expect(text.hasPrefix("{\"url\":\"https://api.github.com/repos/duckdb/duckdb/issues/10/reactions\",\"total_count\":0,\"+1\":0"))
        // The report counts the nested entities.
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        let nested = try #require(source["nested"] as? [String: [String: Int]])
        #expect(nested["User"]?["inserted"] == 74)
        #expect(nested["Label"]?["inserted"] == 13)
        // The export joins label names (sorted, the relationship being unordered) and reads the author by key path.
        let csv = String(decoding: try Gzip.decompress([UInt8](Data(contentsOf: URL(fileURLWithPath: workspace.path("out/github-open-issues.csv.gz"))))), as: UTF8.self)
        #expect(csv.hasPrefix("number,title,author,labels,opened,comments\n"))
        let openWithTwoLabels = try query(workspace, store, """
            SELECT i.number FROM Issue i WHERE i.state = 'open' AND (SELECT count(*) FROM Issue_labels j WHERE j.Issue = i._pk) = 2 LIMIT 1
            """)
        if case .integer(let number)? = openWithTwoLabels.first?.first {
            let names = try labels(workspace, issue: Int(number))
            #expect(csv.contains(",\(names.joined(separator: "|")),"))
        }

        // The same page written again with sorted keys: the reactions' text changes (its member order does).
        try write(workspace, "data/issues.json", json: page)
        #expect(try workspace.run("run", "gh.yml").status == 0)
        // A re-sync where issue 46 lost its labels and 71 kept only "Type": they are unlinked, the labels stay.
        for index in page.indices {
            if page[index]["number"] as? Int == 46 { page[index]["labels"] = [] }
            if page[index]["number"] as? Int == 71 {
                page[index]["labels"] = (page[index]["labels"] as? [[String: Any]] ?? []).filter { $0["name"] as? String == "Type" }
            }
        }
        try write(workspace, "data/issues.json", json: page)
        let second = try workspace.run("run", "gh.yml", "--report", "out/report.json")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try labels(workspace, issue: 46).isEmpty)
        #expect(try labels(workspace, issue: 71) == ["Type"])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Label")) == [13])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Issue_labels")) == [31])
        let resync = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(resync["updated"] as? Int == 2)
        #expect(resync["unchanged"] as? Int == 98)
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
    }

    @Test func ordersLinesRemovedFromAnOrderAreDeletedAndCustomersAreShared() throws {
        let workspace = try Workspace()
        let first = try workspace.run("run", "pipelines/orders.yml", "--report", "out/report.json")
        #expect(first.status == 0, "\(first.stderr)")
        let store = ".swell/orders.sqlite"
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM \"Order\"")) == [10])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Customer")) == [5])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line")) == [18])
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        let orders = try workspace.read("out/orders.csv").split(separator: "\n").map(String.init)
        #expect(orders.first == "id,placed,status,customer,skus,meta")
        #expect(orders.contains("9003,2024-06-04,paid,edsger.dijkstra@example.com,,42"))
        // The ordered lines are joined in the record's order.
        #expect(orders.contains("9002,2024-06-03,refunded,alan.turing@example.com,SKU-LEASH|SKU-SUIT-4|SKU-BOARD-6,\"\"\"gift\"\"\""))
        #expect(orders.contains("9006,2024-06-07,shipped,grace.hopper@example.com,,\"{\"\"notes\"\":{\"\"wrap\"\":true}}\""))

        // Order 9000 drops its second line, 9001 all of its lines: owned lines go (cascade).
        let url = Workspace.repositoryRoot.appendingPathComponent("fixtures/orders/page-0001.json")
        var page = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        var list = page["orders"] as? [[String: Any]] ?? []
        let dropped = (list[0]["lines"] as? [[String: Any]])?[1]["id"] as? Int
        list[0]["lines"] = Array((list[0]["lines"] as? [[String: Any]] ?? []).prefix(1))
        list[1]["lines"] = []
        page["orders"] = list
        try write(workspace, "data/orders.json", json: page)
        let second = try workspace.run("run", "pipelines/orders.yml", "--report", "out/report.json",
                                       environment: ["ORDERS_URL": "data/orders.json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line")) == [16])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line WHERE id = \(dropped ?? -1)")) == [0])
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(source["unchanged"] as? Int == 8)
        // 9000 and 9001 keep their own values, but their sets of lines changed.
        #expect(source["updated"] as? Int == 2)
    }

    @Test func exportsFilterAndSortByKeyPaths() throws {
        let workspace = try Workspace()
        let text = try workspace.read("pipelines/orders.yml").replacingOccurrences(
            of: "    sort: [id]", with: "    where: \"order.customer.name BEGINSWITH 'A' AND qty > 1\"\n    sort: [order.placed_at desc, id]")
        try workspace.write("pipelines/orders-where.yml", text)
        let outcome = try workspace.run("run", "pipelines/orders-where.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try workspace.read("out/order-lines.csv") == """
            order,customer,sku,qty,price
            9007,Alan Turing,SKU-WAX,2,3.5
            9007,Alan Turing,SKU-FIN,3,59
            9005,Ada Lovelace,SKU-BAG,3,79
            9002,Alan Turing,SKU-LEASH,3,29.95
            9002,Alan Turing,SKU-BOARD-6,2,489
            9000,Ada Lovelace,SKU-LEASH,2,29.95

            """)
        try workspace.write("pipelines/bad.yml", text.replacingOccurrences(of: "order.customer.name BEGINSWITH", with: "order.client.name BEGINSWITH"))
        let bad = try workspace.run("validate", "pipelines/bad.yml")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("'client' in key path 'order.client.name' is not a relationship of Order"), "\(bad.stderr)")
    }

    @Test func replaceDeletesOnlyTheSourcesEntityAndItsOwnedChildrenGoWithIt() throws {
        let workspace = try Workspace()
        let replace = try workspace.read("pipelines/orders.yml").replacingOccurrences(of: "    paginate: { next: next }", with: "    paginate: { next: next }\n    mode: replace")
        try workspace.write("pipelines/orders-replace.yml", replace)
        let first = try workspace.run("import", "pipelines/orders-replace.yml")
        #expect(first.status == 0, "\(first.stderr)")
        // The next snapshot has orders 9002–9009 only; 9000's customer (Ada) is shared with 9005.
        let url = Workspace.repositoryRoot.appendingPathComponent("fixtures/orders/page-0001.json")
        var page = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        page["orders"] = Array((page["orders"] as? [[String: Any]] ?? []).dropFirst(2))
        try write(workspace, "data/orders.json", json: page)
        let outcome = try workspace.run("import", "pipelines/orders-replace.yml", "--report", "out/report.json",
                                        environment: ["ORDERS_URL": "data/orders.json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let store = ".swell/orders.sqlite"
        #expect(integers(try query(workspace, store, "SELECT id FROM \"Order\" ORDER BY id")) == Array(9002...9009))
        // Their lines went by the cascade rule; customers are another entity: they stay.
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line")) == [15])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Customer")) == [5])
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(source["deleted"] as? Int == 2)
    }

    @Test func twoRecordsWithOneKeyInOneRunTheLaterOnesRelationshipsWin() throws {
        let workspace = try Workspace()
        let page = """
        {"orders": [
          {"id": 1, "placed_at": "2024-01-01T00:00:00Z", "status": "paid", "customer": {"id": 7, "name": "Kim"},
           "lines": [{"id": 10, "sku": "A", "qty": 1, "price": 1}, {"id": 11, "sku": "B", "qty": 1, "price": 2}]},
          {"id": 1, "placed_at": "2024-01-01T00:00:00Z", "status": "shipped", "customer": {"id": 8, "name": "Lee"},
           "lines": [{"id": 12, "sku": "C", "qty": 3, "price": 3}]}
        ], "next": null}
        """
        try workspace.write("data/orders.json", page)
        let outcome = try workspace.run("import", "pipelines/orders.yml", environment: ["ORDERS_URL": "data/orders.json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let store = ".swell/orders.sqlite"
        #expect(try query(workspace, store, "SELECT o.status, c.name FROM \"Order\" o JOIN Customer c ON o.customer = c._pk")
            == [[.text("shipped"), .text("Lee")]])
        #expect(try query(workspace, store, "SELECT sku FROM Line ORDER BY sku") == [[.text("C")]])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Customer")) == [2])
    }

    @Test func nestedMappingsGoToAnyDepthAndAnArrayOfScalarsMapsWithADot() throws {
        let workspace = try Workspace()
        try workspace.write("deep.yml", """
        version: 2
        name: deep
        entities:
          Order:
            key: [id]
            attributes: { id: integer }
            relationships:
              lines: { to: Line, many: true, ordered: true, inverse: order, delete: cascade }
              tags: { to: Tag, many: true }
          Line:
            key: [id]
            attributes: { id: integer, qty: integer }
            relationships:
              order: { to: Order, inverse: lines }
              product: { to: Product }
          Product:
            key: [sku]
            attributes: { sku: string, title: string? }
            relationships: { maker: { to: Maker } }
          Maker: { key: [name], attributes: { name: string } }
          Tag: { key: [name], attributes: { name: string } }
        sources:
          - name: orders
            entity: Order
            url: data/orders.json
            fields:
              tags: { path: tags, fields: { name: "." } }
              lines:
                path: items
                fields:
                  id: id
                  qty: qty
                  product: { path: product, fields: { sku: sku, title: title, maker: { path: maker, fields: { name: name } } } }
        exports:
          - name: lines
            entity: Line
            path: out/lines.csv
            columns: [id, { name: order, value: order.id }, { name: maker, value: product.maker.name }]
            sort: [id]
        """)
        try workspace.write("data/orders.json", """
        [{"id": 1, "tags": ["gift", "rush"], "items": [
            {"id": 10, "qty": 1, "product": {"sku": "A", "title": "Board", "maker": {"name": "Firewire"}}},
            {"id": 11, "qty": 2, "product": {"sku": "B", "maker": {"name": "FCS"}}}]},
         {"id": 2, "tags": ["gift"], "items": [
            {"id": 12, "qty": 1, "product": {"sku": "A", "title": "Board", "maker": {"name": "Firewire"}}}]}]
        """)
        let outcome = try workspace.run("run", "deep.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try workspace.read("out/lines.csv") == "id,order,maker\n10,1,Firewire\n11,1,FCS\n12,2,Firewire\n")
        let store = ".swell/deep.sqlite"
        #expect(integers(try query(workspace, store, "SELECT (SELECT count(*) FROM Product) * 100 + (SELECT count(*) FROM Maker) * 10 + (SELECT count(*) FROM Tag)")) == [222])
        #expect(try query(workspace, store, "SELECT t.name FROM Order_tags j JOIN Tag t ON j.tags = t._pk JOIN \"Order\" o ON j.\"Order\" = o._pk WHERE o.id = 1 ORDER BY t.name")
            == [[.text("gift")], [.text("rush")]])
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        let nested = try #require(source["nested"] as? [String: [String: Int]])
        #expect(Set(nested.keys) == ["Line", "Product", "Maker", "Tag"])
        #expect(nested["Line"]?["inserted"] == 3)
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
    }

    @Test func aBadNestedElementIsRejectedNamingItsPath() throws {
        let workspace = try Workspace()
        var page = try issuesPage()
        let index = try #require(page.firstIndex { ($0["labels"] as? [Any])?.count == 2 })
        var labels = page[index]["labels"] as? [[String: Any]] ?? []
        labels.append(["color": "ffffff"])
        page[index]["labels"] = labels
        try write(workspace, "data/issues.json", json: page)
        try workspace.write("gh.yml", try githubPipeline(url: "data/issues.json"))
        let outcome = try workspace.run("import", "gh.yml", "--report", "out/report.json")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let rejects = try workspace.read("out/github-issues.rejects.ndjson")
        #expect(rejects.contains("labels[2].name: the key attribute Label.name is missing"))
        let source = try #require((try workspace.report()["sources"] as? [[String: Any]])?.first)
        #expect(source["rejected"] as? Int == 1)
        #expect(source["inserted"] as? Int == 99)
    }

    @Test func validationNamesEachVersionTwoRuleWithItsPlace() throws {
        let workspace = try Workspace()
        let base = """
        version: 2
        name: v2
        entities:
          Issue:
            key: [id]
            attributes: { id: integer, title: string }
            relationships:
              RELATIONSHIPS
          Label: { key: [name], attributes: { name: string }, relationships: { issues: { to: Issue, many: true, inverse: labels } } }
        sources:
          - name: issues
            entity: Issue
            url: data/x.json
            fields:
              FIELDS
        exports:
          - { name: e, entity: Issue, path: out/e.csv, columns: [COLUMNS] }
        """
        func check(_ relationships: String, fields: String = "title: title", columns: String = "id",
                   _ expected: String, line: Int, column: Int) throws {
            let text = base.replacingOccurrences(of: "RELATIONSHIPS", with: relationships)
                .replacingOccurrences(of: "FIELDS", with: fields).replacingOccurrences(of: "COLUMNS", with: columns)
            try workspace.write("v2.yml", text)
            let outcome = try workspace.run("validate", "v2.yml")
            #expect(outcome.status == 64, "\(relationships) \(fields) \(columns): \(outcome.stderr)")
            #expect(outcome.stderr.contains("v2.yml:\(line):\(column): \(expected)"), "\(outcome.stderr)")
        }
        try check("labels: { to: Tag, many: true, inverse: issues }",
                  "relationship Issue.labels points to 'Tag', which is not an entity of this file", line: 8, column: 21)
        try check("labels: { to: Label, many: true, inverse: tags }",
                  "inverse 'tags' of relationship Issue.labels is not a relationship of Label", line: 8, column: 49)
        try check("labels: { to: Label, many: true, inverse: issues }", fields: "labels: { path: labels, fields: { color: color } }",
                  "fields of field labels of source issues name 'color', which is not an attribute or relationship of Label", line: 15, column: 41)
        try check("labels: { to: Label, many: true, inverse: issues }", fields: "labels: { path: labels, fields: { } }",
                  "field labels of source issues does not map Label's key 'name'", line: 15, column: 39)
        try check("labels: { to: Label, many: true, inverse: issues, delete: purge }",
                  "delete \"purge\" of relationship Issue.labels must be nullify, cascade, deny or no_action", line: 8, column: 65)
        try check("labels: { to: Label, many: true, inverse: issues }", columns: "{ value: labels.name }",
                  "column labels.name of export e: 'labels.name' goes through a to-many relationship and needs a join", line: 17, column: 67)
        try check("labels: { to: Label, many: true, inverse: issues }\n      owner: { to: Label }", columns: "{ value: owner.name, join: \"|\" }",
                  "column owner.name of export e has a join but 'owner.name' does not go through a to-many relationship", line: 18, column: 85)
        try workspace.write("v1.yml", """
        version: 1
        name: v1
        entities:
          Item: { key: [id], attributes: { id: integer, raw: json } }
        """)
        let v1 = try workspace.run("validate", "v1.yml")
        #expect(v1.status == 64)
        #expect(v1.stderr.contains("v1.yml:4:54: the json type of Item.raw needs version: 2 (this file says version: 1)"), "\(v1.stderr)")
    }

    @Test func aRunKilledMidNestedImportLeavesNoDanglingForeignKeyAfterTheRerun() throws {
        let workspace = try Workspace()
        let pages = 10, perPage = 400
        for page in 1...pages {
            let orders = (0..<perPage).map { offset -> String in
                let id = (page - 1) * perPage + offset + 1
                let lines = (0..<(id % 4)).map { "{\"id\": \(id * 10 + $0), \"sku\": \"S\($0)\", \"qty\": 1, \"price\": 2.5}" }
                return "{\"id\": \(id), \"placed_at\": \"2024-01-01T00:00:00Z\", \"status\": \"paid\", \"customer\": {\"id\": \(id % 37), \"name\": \"c\(id % 37)\"}, \"lines\": [\(lines.joined(separator: ","))]}"
            }
            let next = page < pages ? "\"p\(page + 1).json\"" : "null"
            try workspace.write("data/p\(page).json", "{\"orders\": [\(orders.joined(separator: ","))], \"next\": \(next)}")
        }
        let running = try RunningSwell(["import", "pipelines/orders.yml", "--batch-size", "200", "--log-level", "debug"], in: workspace.url,
                                       environment: ["ORDERS_URL": "data/p1.json"])
        running.waitForStderr("page fetched", count: 3)
        kill(running.process.processIdentifier, SIGKILL)
        running.process.waitUntilExit()
        #expect(running.process.terminationReason == .uncaughtSignal)
        let store = ".swell/orders.sqlite"
        #expect(try SQLiteIntegrity.check(workspace.path(store)) == "ok")
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        let rerun = try workspace.run("import", "pipelines/orders.yml", "--batch-size", "200", environment: ["ORDERS_URL": "data/p1.json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try query(workspace, store, "PRAGMA foreign_key_check").isEmpty)
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM \"Order\"")) == [Int64(pages * perPage)])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Customer")) == [37])
        let lines = (1...(pages * perPage)).reduce(0) { $0 + $1 % 4 }
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line")) == [Int64(lines)])
        #expect(integers(try query(workspace, store, "SELECT count(*) FROM Line l JOIN \"Order\" o ON l.\"order\" = o._pk WHERE l.id / 10 = o.id")) == [Int64(lines)])
    }
}
