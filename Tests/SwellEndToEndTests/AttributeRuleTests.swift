import Foundation
import SwellTestSupport
import Testing
import SwellPipelineTestSupport

/// Attribute rules (pipeline files version 3, README "Attribute rules"): `min`, `max`,
/// `min_length`, `max_length`, `pattern` and `in` on an attribute's long form. A record
/// breaking one is a bad record naming the attribute, the value and the rule, on every
/// writer: flat records (the column path), nested one level (the graph writer) and two
/// levels (the object-by-object writer). Random records with fixed seeds, compared with
/// which records a model written here says keep the rules; a failing seed is named.
@Suite struct AttributeRuleTests {
    enum Shape: String, CaseIterable { case flat, graph, tree }

    static let itemAttributes = """
        id: integer
              rating: { type: integer, optional: true, min: 1, max: 5 }
              code: { type: string?, pattern: "[A-Z]{2}-[0-9]+", max_length: 7 }
              status: { type: string, in: [open, closed] }
              since: { type: date?, min: "2020-01-01" }
              score: { type: double?, min: 0.5, max: 99.5 }
        """

    static func pipeline(_ shape: Shape) -> String {
        let (entities, fields) = switch shape {
        case .flat: ("", "")
        case .graph: ("""
              Tag:
                key: [name]
                attributes: { name: string, weight: { type: integer, min: 0 } }
                relationships: { items: { to: Item, many: true, inverse: tags } }
            """, """
                fields:
                  tags: { path: tags, fields: { name: name, weight: weight } }
            """)
        case .tree: ("""
              User:
                key: [id]
                attributes: { id: integer }
                relationships: { items: { to: Item, many: true, inverse: owner }, org: { to: Org, inverse: users } }
              Org:
                key: [code]
                attributes: { code: { type: string, pattern: "[a-z]+", min_length: 2 } }
                relationships: { users: { to: User, many: true, inverse: org } }
            """, """
                fields:
                  owner: { path: owner, fields: { id: id, org: { path: org, fields: { code: code } } } }
            """)
        }
        let relationships = switch shape {
        case .flat: ""
        case .graph: "\n    relationships: { tags: { to: Tag, many: true, inverse: items } }"
        case .tree: "\n    relationships: { owner: { to: User, inverse: items } }"
        }
        return """
        version: 3
        name: rules
        store: .swell/rules.sqlite
        entities:
          Item:
            key: [id]
            attributes:
              \(itemAttributes)\(relationships)
        \(entities)
        sources:
          - name: items
            entity: Item
            url: items.json
            on_error: skip
            rejects: out/rejects.ndjson
        \(fields)
        exports:
          - { name: items, entity: Item, path: out/items.csv, columns: [id], sort: [id] }
        """
    }

    /// One record's JSON text and whether it keeps every rule, by the model.
    static func record(id: Int, shape: Shape, using random: inout SeededGenerator) -> (json: String, keeps: Bool) {
        var keeps = true
        var members = ["\"id\": \(id)"]
        // Most records keep the item's own rules, so the nested ones decide often enough.
        let clean = shape != .flat && Int.random(in: 0..<4, using: &random) > 0
        // rating: integer 1...5 (null and a missing value keep it).
        let rating: Int? = (clean ? [nil, 1, 3, 5] : [nil, -1, 0, 1, 3, 5, 6, 100]).randomElement(using: &random)!
        if let rating {
            members.append(Bool.random(using: &random) ? "\"rating\": \(rating)" : "\"rating\": \"\(rating)\"")
            keeps = keeps && (1...5).contains(rating)
        }
        // code: two capitals, a dash, digits; at most 7 characters.
        let code: String? = (clean ? [nil, "AB-1", "AB-1234"] : [nil, "AB-1", "AB-1234", "AB-12345", "ab-1", "AB-1x", "ABC-1", "AB-", "ÅB-1", "AB-1\n"])
            .randomElement(using: &random)!
        if let code {
            members.append("\"code\": \(jsonString(code))")
            let characters = Array(code)
            let capitals = characters.count >= 3 && characters[0...1].allSatisfy { ("A"..."Z").contains($0) } && characters[2] == "-"
            let digits = characters.count > 3 && characters[3...].allSatisfy { ("0"..."9").contains($0) }
            keeps = keeps && capitals && digits && characters.count <= 7
        }
        let status = (clean ? ["open", "closed"] : ["open", "closed", "Open", "pending", ""]).randomElement(using: &random)!
        members.append("\"status\": \(jsonString(status))")
        keeps = keeps && (status == "open" || status == "closed")
        let since: (String, Bool)? = [nil, clean ? nil : ("2019-12-31T23:59:59Z", false), ("2020-01-01T00:00:00Z", true), ("2024-05-01T06:30:00.5Z", true)]
            .randomElement(using: &random)!
        if let since {
            members.append("\"since\": \"\(since.0)\"")
            keeps = keeps && since.1
        }
        let score: Double? = (clean ? [nil, 0.5, 7, 99.5] : [nil, 0.25, 0.5, 7, 99.5, 99.75]).randomElement(using: &random)!
        if let score {
            members.append("\"score\": \(score)")
            keeps = keeps && score >= 0.5 && score <= 99.5
        }
        switch shape {
        case .flat: break
        case .graph:
            let weights = (0..<Int.random(in: 0...3, using: &random)).map { _ in [-1, 0, 4].randomElement(using: &random)! }
            let tags = weights.map { "{\"name\": \"t\(Int.random(in: 0..<4, using: &random))\", \"weight\": \($0)}" }
            members.append("\"tags\": [\(tags.joined(separator: ", "))]")
            keeps = keeps && weights.allSatisfy { $0 >= 0 }
        case .tree:
            let org = ["ab", "xyz", "a", "AB", "a1"].randomElement(using: &random)!
            members.append("\"owner\": {\"id\": \(id % 3), \"org\": {\"code\": \"\(org)\"}}")
            keeps = keeps && org.count >= 2 && org.allSatisfy { ("a"..."z").contains($0) }
        }
        return ("{\(members.joined(separator: ", "))}", keeps)
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]), as: UTF8.self)
    }

    @Test(arguments: Shape.allCases, 0..<6)
    func recordsBreakingARuleAreRejectedOnEveryWriter(shape: Shape, seed: UInt64) throws {
        var random = SeededGenerator(state: seed &+ 1000 &* UInt64(Shape.allCases.firstIndex(of: shape)!))
        let records = (1...Int.random(in: 20...60, using: &random)).map { Self.record(id: $0, shape: shape, using: &random) }
        let workspace = try Workspace()
        try workspace.write("rules.yml", Self.pipeline(shape))
        try workspace.write("items.json", "[\(records.map(\.json).joined(separator: ",\n"))]")
        let run = try workspace.run("run", "rules.yml")
        #expect(run.status == 0, "\(shape) seed \(seed): \(run.stderr)")
        let kept = records.indices.filter { records[$0].keeps }.map { "\($0 + 1)" }
        #expect(try workspace.read("out/items.csv") == (["id"] + kept).joined(separator: "\n") + "\n", "\(shape) seed \(seed)")
        let rejects = (try? workspace.read("out/rejects.ndjson"))?.split(separator: "\n") ?? []
        #expect(rejects.count == records.count - kept.count, "\(shape) seed \(seed)")
        for line in rejects {
            #expect(line.contains("breaks the rule"), "\(shape) seed \(seed): \(line)")
        }
    }

    @Test func theMessageNamesAttributeValueAndRule() throws {
        let workspace = try Workspace()
        try workspace.write("rules.yml", Self.pipeline(.tree).replacingOccurrences(of: "    on_error: skip\n", with: ""))
        try workspace.write("items.json", #"[{"id": 1, "status": "open", "rating": 7}]"#)
        let run = try workspace.run("run", "rules.yml")
        #expect(run.status == 65)
        #expect(run.stderr.contains("rating: 7 breaks the rule max: 5"), "\(run.stderr)")
        try workspace.write("items.json", #"[{"id": 1, "status": "pending"}]"#)
        #expect(try workspace.run("run", "rules.yml").stderr.contains(#"status: "pending" breaks the rule in: [open, closed]"#))
        try workspace.write("items.json", #"[{"id": 1, "status": "open", "since": "2019-05-01"}]"#)
        #expect(try workspace.run("run", "rules.yml").stderr.contains(#"since: "2019-05-01" breaks the rule min: 2020-01-01T00:00:00Z"#))
        try workspace.write("items.json", #"[{"id": 1, "status": "open", "owner": {"id": 2, "org": {"code": "X"}}}]"#)
        let nested = try workspace.run("run", "rules.yml")
        #expect(nested.stderr.contains(#"owner.org.code: Org.code: "X" breaks the rule min_length: 2"#), "\(nested.stderr)")
    }

    @Test func changingOnlyTheRulesKeepsWhatIsStored() throws {
        let workspace = try Workspace()
        try workspace.write("rules.yml", Self.pipeline(.flat))
        try workspace.write("items.json", #"[{"id": 1, "status": "open", "rating": 5}]"#)
        #expect(try workspace.run("run", "rules.yml").status == 0)
        // Tighter rules apply to what arrives next; the stored row stays as it is.
        try workspace.write("rules.yml", Self.pipeline(.flat).replacingOccurrences(of: "max: 5", with: "max: 3"))
        try workspace.write("items.json", #"[{"id": 2, "status": "open", "rating": 4}, {"id": 3, "status": "open", "rating": 3}]"#)
        let run = try workspace.run("run", "rules.yml")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == "id\n1\n3\n")
        #expect(try workspace.read("out/rejects.ndjson").contains("rating: 4 breaks the rule max: 3"))
    }

    @Test func rulesThatDoNotFitAreRefusedWithTheirPlace() throws {
        let workspace = try Workspace()
        func check(_ attribute: String, _ expected: String, version: Int = 3) throws {
            try workspace.write("bad.yml", """
            version: \(version)
            name: bad
            entities:
              Item:
                key: [id]
                attributes:
                  id: integer
                  x: \(attribute)
            """)
            let outcome = try workspace.run("validate", "bad.yml")
            #expect(outcome.status == 64, "\(attribute): \(outcome.stderr)")
            #expect(outcome.stderr.contains(expected), "\(attribute): \(outcome.stderr)")
        }
        try check("{ type: string, min: 1 }", "bad.yml:8:31: min of Item.x does not apply to an attribute of type string")
        try check("{ type: integer, pattern: \"[0-9]+\" }", "pattern of Item.x does not apply to an attribute of type integer")
        try check("{ type: string, pattern: \"a(\" }", "bad.yml:8:35: pattern of Item.x is not a regular expression")
        try check("{ type: integer, min: 5, max: 1 }", "max of Item.x is below its min")
        try check("{ type: string, min_length: 3, max_length: 2 }", "max_length of Item.x is below its min_length")
        try check("{ type: integer, in: [1, two] }", "in of Item.x: \"two\" is not a value of type integer")
        try check("{ type: date, min: yesterday }", "min of Item.x must be an ISO-8601 date")
        try check("{ type: json, in: [1] }", "in of Item.x does not apply to an attribute of type json")
        try check("{ type: integer, maximum: 3 }", "unknown key 'maximum' in attribute Item.x")
        try check("{ type: integer?, optional: false }", "optional: false of Item.x contradicts its type integer?")
        try check(#"{ type: string, pattern: "(?x)[A-Z]+ # a code" }"#, "ends inside a (?x) comment")
        try check("{ type: integer, min: 1 }", "the long form of attribute Item.x needs version: 3", version: 2)
    }
}
