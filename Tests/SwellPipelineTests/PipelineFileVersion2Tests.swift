import Foundation
import Testing
@testable import SwellPipeline
import SwellContexts
import SwellPipelineTestSupport

/// Pipeline file reference, "Nested records and relationships (version 2)", as the file
/// is read: relationships, nested mappings to any depth, key-path and joined export
/// columns; every rule fails naming file, line and column; version 1 stays as it was.
@Suite struct PipelineFileVersion2Tests {
    private func load(_ text: String) throws(PipelineFileError) -> PipelineFile {
        try PipelineFileLoader(environment: [:]).load(text: text, path: "v2.yml")
    }

    private func failure(_ text: String) -> PipelineFileError? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    /// The 1-based column where `token` first starts on `line` of `text`.
    private func column(of token: String, line: Int, in text: String) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count, let range = lines[line - 1].range(of: token) else { return nil }
        return lines[line - 1].distance(from: lines[line - 1].startIndex, to: range.lowerBound) + 1
    }

    @Test func aVersion2FileReadsIntoRelationshipsNestedMappingsAndKeyPathColumns() throws {
        let pipeline = try load("""
        version: 2
        name: tracker
        entities:
          Issue:
            key: [id]
            attributes: { id: integer, title: string, reactions: json? }
            relationships:
              author: { to: User, required: true }
              labels: { to: Label, many: true, inverse: issues }
              comments: { to: Comment, many: true, ordered: true, inverse: issue, delete: cascade }
              tags: { to: Tag, many: true, delete: no_action }
          User: { key: [id], attributes: { id: integer, login: string } }
          Label:
            key: [name]
            attributes: { name: string, color: string? }
            relationships: { issues: { to: Issue, many: true, inverse: labels, delete: deny } }
          Comment:
            key: [id]
            attributes: { id: integer, body: string, at: date? }
            relationships: { issue: { to: Issue, inverse: comments }, author: { to: User } }
          Tag: { key: [name], attributes: { name: string } }
        sources:
          - name: issues
            entity: Issue
            url: data/issues.json
            fields:
              reactions: reactions
              author: { path: user, fields: { id: id, login: login } }
              labels: { path: labels, fields: { name: name, color: color } }
              comments:
                path: thread.comments
                fields:
                  id: id
                  body: text
                  at: { path: created, format: unix }
                  author: { path: user, fields: { id: id, login: login } }
              tags: { path: tags, fields: { name: "." } }
        exports:
          - name: issues
            entity: Issue
            path: out/issues.csv
            columns:
              - id
              - author.login
              - { name: labels, value: labels.name, join: "|" }
              - { name: commenters, value: comments.author.login, join: ";" }
              - reactions
        """)
        #expect(pipeline.version == 2)
        let issue = try #require(pipeline.entity(named: "Issue"))
        #expect(issue.attributes.first { $0.name == "reactions" }?.type == .json)
        #expect(issue.relationships == [
            RelationshipDescription(name: "author", destination: "User", isOptional: false),
            RelationshipDescription(name: "labels", destination: "Label", toMany: true, inverse: "issues"),
            RelationshipDescription(name: "comments", destination: "Comment", toMany: true, isOrdered: true, inverse: "issue", deleteRule: .cascade),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, deleteRule: .noAction),
        ])
        #expect(pipeline.entity(named: "Label")?.relationships == [
            RelationshipDescription(name: "issues", destination: "Issue", toMany: true, inverse: "labels", deleteRule: .deny),
        ])
        #expect(pipeline.entity(named: "Comment")?.relationships == [
            RelationshipDescription(name: "issue", destination: "Issue", inverse: "comments"),
            RelationshipDescription(name: "author", destination: "User"),
        ])
        // The model the store is opened with carries them too.
        #expect(pipeline.model.entitiesByName["Issue"]?.relationships == issue.relationships)

        let source = pipeline.sources[0]
        #expect(source.fields.keys.sorted() == ["id", "reactions", "title"])
        func field(_ path: String...) -> FieldSpec { FieldSpec(path: path, dateFormat: nil) }
        let user = NestedMapping(relationship: "author", destination: "User", path: ["user"],
                                 fields: ["id": field("id"), "login": field("login")], nested: [])
        #expect(source.nested == [
            user,
            NestedMapping(relationship: "labels", destination: "Label", path: ["labels"],
                          fields: ["name": field("name"), "color": field("color")], nested: []),
            NestedMapping(relationship: "comments", destination: "Comment", path: ["thread", "comments"],
                          fields: ["id": field("id"), "body": field("text"), "at": FieldSpec(path: ["created"], dateFormat: .unix)],
                          nested: [user]),
            NestedMapping(relationship: "tags", destination: "Tag", path: ["tags"], fields: ["name": field(".")], nested: []),
        ])

        #expect(pipeline.exports[0].columns == [
            ExportColumn(name: "id", attribute: "id", format: nil),
            ExportColumn(name: "author.login", attribute: "author.login", format: nil),
            ExportColumn(name: "labels", attribute: "labels.name", format: nil, join: "|"),
            ExportColumn(name: "commenters", attribute: "comments.author.login", format: nil, join: ";"),
            ExportColumn(name: "reactions", attribute: "reactions", format: nil),
        ])
    }

    /// The two sides of an inverse pair may each be to-one or to-many; an ordered
    /// to-many may have a to-one inverse (the contract allows it, as Core Data does).
    @Test(arguments: [
        ("{ to: B, inverse: a }", "{ to: A, inverse: b }"),
        ("{ to: B, many: true, inverse: a }", "{ to: A, inverse: b }"),
        ("{ to: B, many: true, ordered: true, inverse: a, delete: cascade }", "{ to: A, inverse: b, required: true }"),
        ("{ to: B, many: true, inverse: a }", "{ to: A, many: true, ordered: true, inverse: b }"),
    ])
    func everyShapeOfAnInversePairValidates(forward: String, backward: String) throws {
        let pipeline = try load("""
        version: 2
        name: pairs
        entities:
          A: { key: [id], attributes: { id: integer }, relationships: { b: \(forward) } }
          B: { key: [id], attributes: { id: integer }, relationships: { a: \(backward) } }
        """)
        #expect(pipeline.entity(named: "A")?.relationships.first?.inverse == "a")
        #expect(pipeline.entity(named: "B")?.relationships.first?.inverse == "b")
    }

    /// One rule of the version-2 file: what replaces the placeholders of `base`, and
    /// the message with its line and the text the column points at.
    struct Rule: Sendable, CustomTestStringConvertible {
        var relationships = Rule.standardRelationships
        var fields = "{ title: title }"
        var columns = "id"
        var message: String
        var line: Int
        var at: String

        static let labels = "labels: { to: Label, many: true, inverse: issues }"
        static let standardRelationships = "{ author: { to: User }, \(labels) }"
        var testDescription: String { message }
    }

    static let base = """
    version: 2
    name: v2
    entities:
      Issue:
        key: [id]
        attributes: { id: integer, title: string, raw: json? }
        relationships: RELATIONSHIPS
      User: { key: [id], attributes: { id: integer, login: string } }
      Label: { key: [name], attributes: { name: string }, relationships: { issues: { to: Issue, many: true, inverse: labels } } }
    sources:
      - name: issues
        entity: Issue
        url: data/x.json
        fields: FIELDS
    exports:
      - { name: e, entity: Issue, path: out/e.csv, columns: [COLUMNS] }
    """

    static let rules: [Rule] = [
        Rule(relationships: "{ author: { to: Person }, \(Rule.labels) }",
             message: "relationship Issue.author points to 'Person', which is not an entity of this file", line: 7, at: "Person"),
        Rule(relationships: "{ author: { to: User, inverse: issues }, \(Rule.labels) }",
             message: "inverse 'issues' of relationship Issue.author is not a relationship of User", line: 7, at: "issues"),
        Rule(relationships: "{ author: { to: User }, tags: { to: Label, many: true, inverse: issues }, \(Rule.labels) }",
             message: "inverse 'issues' of relationship Issue.tags does not name it back: Label.issues must say to: Issue, inverse: tags",
             line: 7, at: "issues"),
        Rule(relationships: "{ author: { to: User, ordered: true }, \(Rule.labels) }",
             message: "relationship Issue.author is ordered but not many: only a to-many can be ordered", line: 7, at: "true"),
        Rule(relationships: "{ author: { to: User, delete: purge }, \(Rule.labels) }",
             message: "delete \"purge\" of relationship Issue.author must be nullify, cascade, deny or no_action", line: 7, at: "purge"),
        Rule(relationships: "{ author: { to: User, many: lots }, \(Rule.labels) }",
             message: "many of relationship Issue.author must be true or false, not \"lots\"", line: 7, at: "lots"),
        Rule(relationships: "{ author: { many: false }, \(Rule.labels) }",
             message: "relationship Issue.author needs 'to'", line: 7, at: "{ many"),
        Rule(relationships: "{ author: { to: User, owner: true }, \(Rule.labels) }",
             message: "unknown key 'owner' in relationship Issue.author (known keys: delete, inverse, many, ordered, required, to)", line: 7, at: "owner"),
        Rule(relationships: "{ title: { to: User }, \(Rule.labels) }",
             message: "'Issue.title' is defined twice (as an attribute or a relationship)", line: 7, at: "title"),
        Rule(fields: "{ author: { path: user, fields: { login: login } } }",
             message: "field author of source issues does not map User's key 'id': each nested User is upserted by its key", line: 14, at: "{ login"),
        Rule(fields: "{ author: { path: user, fields: { id: id, email: email } } }",
             message: "fields of field author of source issues name 'email', which is not an attribute or relationship of User", line: 14, at: "email"),
        Rule(fields: "{ title: { path: t, fields: { id: id } } }",
             message: "field title of source issues has nested fields, but 'title' is an attribute of Issue: only a relationship is mapped with { path, fields } (relationships of Issue: author, labels)",
             line: 14, at: "title"),
        Rule(fields: "{ owner: { path: user, fields: { id: id } } }",
             message: "field owner of source issues has nested fields, but 'owner' is not a relationship of Issue: only a relationship is mapped with { path, fields } (relationships of Issue: author, labels)",
             line: 14, at: "owner"),
        Rule(fields: "{ author: user }",
             message: "field author of source issues maps relationship 'author': it needs { path: …, fields: { … } }", line: 14, at: "user"),
        Rule(fields: "{ author: { fields: { id: id } } }",
             message: "field author of source issues needs 'path'", line: 14, at: "{ fields"),
        Rule(fields: "{ labels: { path: labels, fields: { name: name, issues: { path: issues, fields: { title: title } } } } }",
             message: "field issues of field labels of source issues does not map Issue's key 'id': each nested Issue is upserted by its key",
             line: 14, at: "{ title"),
        Rule(fields: "{ labels: { path: labels, fields: { name: { path: n, fields: { id: id } } } } }",
             message: "field name of field labels of source issues has nested fields, but 'name' is an attribute of Label: only a relationship is mapped with { path, fields } (relationships of Label: issues)",
             line: 14, at: "name"),
        Rule(fields: "{ title: \".\" }",
             message: "path of field title is \".\", the element itself, which only a field of a nested mapping can use", line: 14, at: "\".\""),
        Rule(columns: "{ value: author.login, join: \"|\" }",
             message: "column author.login of export e has a join but 'author.login' does not go through a to-many relationship", line: 16, at: "\"|\""),
        Rule(columns: "owner.login",
             message: "column value 'owner.login' of export e: 'owner' is not a relationship of Issue", line: 16, at: "owner.login"),
        Rule(columns: "author.email",
             message: "column value 'author.email' of export e: 'email' is not an attribute of User", line: 16, at: "author.email"),
        Rule(columns: "labels.name",
             message: "column 'labels.name' of export e goes through a to-many relationship and needs a join: write { value: labels.name, join: \"|\" }",
             line: 16, at: "labels.name"),
        Rule(columns: "{ value: labels.issues.title, join: \"|\" }",
             message: "column value 'labels.issues.title' of export e goes through two to-many relationships", line: 16, at: "labels.issues.title"),
        // `columns` closes the list early to give the export a sort.
        Rule(columns: "id], sort: [owner.login",
             message: "sort key 'owner.login' of export e: 'owner' is not a relationship of Issue", line: 16, at: "owner.login"),
        Rule(columns: "id], sort: [labels.name",
             message: "sort key 'labels.name' of export e goes through a to-many relationship", line: 16, at: "labels.name"),
    ]

    @Test(arguments: rules)
    func eachVersion2RuleNamesItsLineAndColumn(rule: Rule) throws {
        let text = Self.base.replacingOccurrences(of: "RELATIONSHIPS", with: rule.relationships)
            .replacingOccurrences(of: "FIELDS", with: rule.fields).replacingOccurrences(of: "COLUMNS", with: rule.columns)
        let error = try #require(failure(text))
        #expect(error.message == rule.message)
        #expect(error.path == "v2.yml")
        #expect(error.line == rule.line, "\(error)")
        #expect(error.column == column(of: rule.at, line: rule.line, in: text), "\(error)")
    }

    @Test func theBaseOfTheRulesValidates() throws {
        let text = Self.base.replacingOccurrences(of: "RELATIONSHIPS", with: Rule.standardRelationships)
            .replacingOccurrences(of: "FIELDS", with: "{ author: { path: user, fields: { id: id } }, raw: meta }")
            .replacingOccurrences(of: "COLUMNS", with: "id, author.login, { value: labels.name, join: \"|\" }, raw")
        let pipeline = try load(text)
        #expect(pipeline.sources[0].nested.map(\.relationship) == ["author"])
    }

    /// Anything of version 2 in a `version: 1` file is an error naming the version it needs.
    @Test(arguments: [
        ("Item: { key: [id], attributes: { id: integer, raw: json } }", "", "",
         "the json type of Item.raw needs version: 2 (this file says version: 1)", 4, "json"),
        ("Item: { key: [id], attributes: { id: integer }, relationships: { parent: { to: Item } } }", "", "",
         "the relationships key of Item needs version: 2 (this file says version: 1)", 4, "{ parent"),
        ("Item: { key: [id], attributes: { id: integer, title: string } }", "{ title: { path: t, fields: { id: id } } }", "",
         "field title of source s (a nested mapping) needs version: 2 (this file says version: 1)", 6, "{ path"),
        ("Item: { key: [id], attributes: { id: integer, title: string } }", "", "owner.login",
         "column value 'owner.login' of export e (a key path) needs version: 2 (this file says version: 1)", 6, "owner.login"),
        ("Item: { key: [id], attributes: { id: integer, title: string } }", "", "{ value: title, join: \"|\" }",
         "join of column title needs version: 2 (this file says version: 1)", 6, "\"|\""),
        ("Item: { key: [id], attributes: { id: integer, title: string } }", "", "id], sort: [owner.login",
         "sort key 'owner.login' of export e (a key path) needs version: 2 (this file says version: 1)", 6, "owner.login"),
    ] as [(String, String, String, String, Int, String)])
    func version2FeaturesInAVersion1FileNameTheVersion(entity: String, fields: String, columns: String, message: String, line: Int, at: String) throws {
        var text = "version: 1\nname: v1\nentities:\n  \(entity)\n"
        if !fields.isEmpty { text += "sources:\n  - { name: s, entity: Item, url: x.json, fields: \(fields) }\n" }
        if !columns.isEmpty { text += "exports:\n  - { name: e, entity: Item, path: o.csv, columns: [\(columns)] }\n" }
        let error = try #require(failure(text))
        #expect(error.message == message)
        #expect(error.line == line, "\(error)")
        #expect(error.column == column(of: at, line: line, in: text), "\(error)")
    }
}
