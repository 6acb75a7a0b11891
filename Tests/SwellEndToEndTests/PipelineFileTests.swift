import Foundation
import Testing
@testable import SwellPipeline
import SwellContexts
import SwellPipelineTestSupport

/// The pipeline file contract: every key loads, every malformed file fails naming file, line and column.
@Suite struct PipelineFileTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let minimal = """
    version: 1
    name: demo
    entities:
      Item:
        key: [id]
        attributes:
          id: integer
          title: string?
    """

    private func load(_ text: String, environment: [String: String] = [:]) throws(PipelineFileError) -> PipelineFile {
        try PipelineFileLoader(environment: environment).load(text: text, path: "demo.yml")
    }

    private func failure(_ text: String, environment: [String: String] = [:]) -> PipelineFileError? {
        do {
            _ = try load(text, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test func theBundledPipelinesLoad() throws {
        for folderName in ["pipelines", "examples/bulk-import", "bench"] {
            let folder = Self.repositoryRoot.appendingPathComponent(folderName)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".yml") }
            #expect(!files.isEmpty)
            for file in files {
                let pipeline = try PipelineFileLoader(environment: [:]).load(path: folder.appendingPathComponent(file).path)
                #expect(!pipeline.entities.isEmpty, "\(file)")
            }
        }
    }

    @Test func everyKeyOfTheContractLoads() throws {
        let text = """
        version: 1
        name: surf-journal
        store: ${STORE_DIR:-.swell}/surf.sqlite
        entities:
          JournalEntry:
            key: [id]
            attributes:
              id: integer
              date: date
              height: string?
              rating: integer?
              spotName: string?
              score: double?
              good: boolean?
        sources:
          - name: journal
            entity: JournalEntry
            url: ${SURF_API_URL:-fixtures/surf-journal/page-0001.json}
            format: json
            records: data
            headers:
              Authorization: Bearer ${SURF_API_TOKEN}
            paginate:
              next: next
            fields:
              spotName: spot.name
              date: { path: when, format: unix }
            dates: "yyyy-MM-dd HH:mm"
            mode: append
            on_error: skip
            rejects: out/journal.rejects.ndjson
            timeout: 12.5
            retries: 4
            max_bytes: 1073741824
            incremental:
              cursor: date
              param: since
          - { name: links, entity: JournalEntry, url: "http://x/a", format: ndjson, paginate: { link_header: true } }
          - { name: pages, entity: JournalEntry, url: "http://x/a", paginate: { param: page, start: 0 } }
          - { name: cursors, entity: JournalEntry, url: "http://x/a", paginate: { cursor: meta.next_cursor, param: cursor } }
        exports:
          - name: journal-csv
            entity: JournalEntry
            path: out/surf-journal.csv.gz
            columns:
              - date
              - { name: Height, value: height }
              - { name: Day, value: date, format: "yyyy-MM-dd" }
              - rating
            where: "rating >= 3 AND spotName CONTAINS[c] 'beach'"
            sort: [date desc, spotName]
            header: false
            gzip_level: 9
            escape_formulas: true
        """
        let pipeline = try load(text, environment: ["SURF_API_TOKEN": "s3cret-token"])
        #expect(pipeline.store == ".swell/surf.sqlite")
        let source = pipeline.sources[0]
        #expect(source.url == "fixtures/surf-journal/page-0001.json")
        #expect(source.headers.map(\.value) == ["Bearer s3cret-token"])
        #expect(pipeline.secrets == ["s3cret-token"])
        #expect(source.records == ["data"])
        #expect(source.pagination == .next(path: ["next"]))
        #expect(source.fields["spotName"] == FieldSpec(path: ["spot", "name"], dateFormat: nil))
        #expect(source.fields["date"] == FieldSpec(path: ["when"], dateFormat: .unix))
        #expect(source.fields["height"] == FieldSpec(path: ["height"], dateFormat: nil))
        #expect(source.dates == .pattern("yyyy-MM-dd HH:mm"))
        #expect(source.mode == .append && source.onError == .skip)
        #expect(source.rejects == "out/journal.rejects.ndjson")
        #expect(source.timeout == 12.5 && source.retries == 4 && source.maxBytes == 1_073_741_824)
        #expect(source.incremental == IncrementalSpec(cursor: "date", parameter: "since"))
        #expect(pipeline.sources[1].isNDJSON && pipeline.sources[1].pagination == .linkHeader)
        #expect(pipeline.sources[2].pagination == .page(parameter: "page", start: 0))
        #expect(pipeline.sources[3].pagination == .cursor(path: ["meta", "next_cursor"], parameter: "cursor"))
        let export = pipeline.exports[0]
        #expect(export.isGzip && !export.header && export.gzipLevel == 9 && export.escapeFormulas)
        #expect(export.columns == [ExportColumn(name: "date", attribute: "date", format: nil),
                                   ExportColumn(name: "Height", attribute: "height", format: nil),
                                   ExportColumn(name: "Day", attribute: "date", format: "yyyy-MM-dd"),
                                   ExportColumn(name: "rating", attribute: "rating", format: nil)])
        #expect(export.sort.map(\.attribute) == ["date", "spotName"])
        #expect(export.sort.map(\.ascending) == [false, true])
        let entity = try #require(pipeline.entity(named: "JournalEntry"))
        #expect(entity.attributes.first { $0.name == "height" }?.isOptional == true)
        #expect(entity.attributes.first { $0.name == "good" }?.type == .boolean)
    }

    /// `swell validate` reports every problem of a file in one run, in file order, each at
    /// its line; what names an entity that failed is not read (its errors would repeat).
    @Test func everyProblemOfAFileIsReportedAtOnce() throws {
        let text = """
            version: 3
            name: shop
            history: maybe
            entities:
              Item:
                key: [id]
                attributes: { id: integer, title: strng }
              Order:
                key: [id]
                attributes: { id: integer, total: double }
            sources:
              - { name: items, entity: Item, url: items.json }
              - name: orders
                entity: Order
                url: orders.json
                paginate: { nxt: next }
            exports:
              - { name: orders, entity: Order, path: out/orders.csv, columns: [id, totl] }
              - { name: items, entity: Item, path: out/items.csv, columns: [id] }
              - { name: orders, entity: Order, path: out/again.csv, columns: [id] }
            """
        do {
            _ = try load(text)
            Issue.record("the file loaded")
        } catch {
            // In file order, though `history` is checked after the sources.
            #expect(error.all.map(\.line) == [3, 7, 16, 18, 20], "\(error)")
            #expect(error.all.map(\.message).joined(separator: "\n").contains("strng"))
            let messages = error.all.map(\.message) + ["", "", "", "", ""]
            #expect(messages[0].contains("history") && messages[2].contains("nxt") && messages[3].contains("totl")
                    && messages[4].contains("two exports are named 'orders'"), "\(error)")
            #expect(error.description.split(separator: "\n").count == 5)
        }
    }

    @Test func defaultsFollowTheContract() throws {
        let pipeline = try load(minimal + "\nsources:\n  - { name: items, entity: Item, url: items.json }\n")
        #expect(pipeline.store == ".swell/demo.sqlite")
        let source = pipeline.sources[0]
        #expect(!source.isNDJSON && source.records == nil && source.pagination == nil)
        #expect(source.mode == .upsert && source.onError == .fail && source.dates == .iso8601)
        #expect(source.rejects == "rejects/demo-items.ndjson")
        #expect(source.timeout == 30 && source.maxBytes == nil)
    }

    @Test(arguments: [
        ("version: 1\nname: demo\nentities:\n  Item:\n    key: [id]\n    attributes: { id: integer }\ncolour: blue\n", 7, "unknown key 'colour'"),
        ("version: 6\nname: demo\nentities: {}\n", 1, "version 6 is not known: it must be 1, 2 (nested records and relationships), 3 (auth, bodies, offsets) or 4"),
        ("version: 1\nname: Demo!\nentities:\n  Item: { key: [id], attributes: { id: integer } }\n", 2, "must match [a-z0-9_-]+"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: int } }\n", 4, "unknown type \"int\""),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [nope], attributes: { id: integer } }\n", 4, "names 'nope'"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Other, url: x }\n", 6, "'Other', which is not defined"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x, fields: { title: t } }\n", 6, "not an attribute"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x }\n  - { name: a, entity: Item, url: y }\n", 7, "two sources are named 'a'"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x, retries: many }\n", 6, "retries of source a must be a whole number"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x, dates: \"yyyy-MM-dd QQQQ ii\" }\n", 6, "not a date pattern letter"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x, paginate: {} }\n", 6, "needs one of"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id, title] }\n", 6, "column 'title'"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id], sort: [id sideways] }\n", 6, "must be asc or desc"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id] }\n  - { name: e, entity: Item, path: p.csv, columns: [id] }\n", 7, "two exports are named 'e'"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id], gzip_level: 11 }\n", 6, "between 1 and 9"),
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer, id: string } }\n", 4, "twice"),
    ] as [(String, Int, String)])
    func malformedFilesNameTheLine(text: String, line: Int, message: String) {
        let error = failure(text)
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
        #expect(error?.path == "demo.yml")
        #expect((error?.column ?? 0) >= 1)
    }

    /// Every message about a value of the wrong kind or outside a set names the value written (issue 12).
    @Test(arguments: [
        ("mode: merge", "mode \"merge\" of source a must be upsert, append, replace or insert"),
        ("on_error: ignore", "on_error \"ignore\" of source a must be fail or skip"),
        ("format: xml", "format \"xml\" of source a must be json, ndjson or csv (version 3)"),
        ("retries: many", "retries of source a must be a whole number, not \"many\""),
        ("retries: [1]", "retries of source a must be a whole number, not a list"),
        ("records: \"a..b\"", "must be a dot path like 'data' or 'meta.next', not \"a..b\""),
        ("timeout: -1", "must be a positive number, not \"-1\""),
        ("headers: [x]", "headers of source a must be a mapping, not a list"),
        ("fields: oops", "fields of source a must be a mapping of attribute: path, not \"oops\""),
        ("for_each: 3", "for_each of source a must be a list of items, { file: PATH } (an item per line) or { entity, value, where } (version 3), not \"3\""),
    ] as [(String, String)])
    func aSourceValueOfTheWrongKindIsNamed(setting: String, message: String) {
        let error = failure("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources:\n  - { name: a, entity: Item, url: x, \(setting) }\n")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
        #expect(error?.line == 6)
    }

    @Test(arguments: [
        ("gzip_level: 11", "gzip_level of export e must be between 1 and 9, not 11"),
        ("sort: [id sideways]", "sort direction \"sideways\" must be asc or desc"),
        ("sort: { a: 1 }", "sort of export e must be a list like [date desc, location], not a mapping"),
        ("header: maybe", "must be true or false, not \"maybe\""),
    ] as [(String, String)])
    func anExportValueOfTheWrongKindIsNamed(setting: String, message: String) {
        let error = failure("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: [id], \(setting) }\n")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test func typesKeysAndTopLevelValuesOfTheWrongKindAreNamed() {
        let type = failure("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: int } }\n")
        #expect(type?.message.contains("unknown type \"int\" for Item.id") == true, "\(String(describing: type))")
        let sources = failure("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nsources: { a: 1 }\n")
        #expect(sources?.message.contains("sources must be a list, not a mapping") == true, "\(String(describing: sources))")
        let key = failure("version: 1\nname: demo\nentities:\n  Item: { key: { a: 1 }, attributes: { id: integer } }\n")
        #expect(key?.message.contains("key of Item must be a list of attribute names, not a mapping") == true, "\(String(describing: key))")
        let delete = failure("version: 2\nname: demo\nentities:\n  Item:\n    key: [id]\n    attributes: { id: integer }\n    relationships: { owner: { to: Item, delete: purge } }\n")
        #expect(delete?.message.contains("delete \"purge\"") == true, "\(String(describing: delete))")
        let columns = failure("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer } }\nexports:\n  - { name: e, entity: Item, path: o.csv, columns: { a: 1 } }\n")
        #expect(columns?.message.contains("columns of export e must be a list of attribute names or {name, value, format}, not a mapping") == true,
                "\(String(describing: columns))")
    }

    /// Names follow the model's one rule (issue 13): what the store would refuse to open is
    /// refused by the file already, at the name's line, for entities, attributes and relationships.
    @Test(arguments: [
        ("version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer, sqlite_x: string } }\n", "attribute name 'sqlite_x'"),
        ("version: 1\nname: demo\nentities:\n  sqlite_items: { key: [id], attributes: { id: integer } }\n", "entity name 'sqlite_items'"),
        ("version: 2\nname: demo\nentities:\n  Item:\n    key: [id]\n    attributes: { id: integer }\n    relationships: { sqlite_owner: { to: Item } }\n",
         "relationship name 'sqlite_owner'"),
    ] as [(String, String)])
    func namesTheStoreReservesAreRefusedByTheFile(text: String, message: String) {
        let error = failure(text)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
        #expect(error?.message.contains("not start with '_', 'swell_' or 'sqlite_'") == true)
    }

    @Test func aReservedAttributeNameExits64AtValidate() throws {
        let workspace = try Workspace()
        try workspace.write("items.yml", "version: 1\nname: demo\nentities:\n  Item: { key: [id], attributes: { id: integer, sqlite_x: string } }\n")
        let validate = try workspace.run("validate", "items.yml")
        #expect(validate.status == 64, "\(validate.stderr)")
        #expect(validate.stderr.contains("items.yml:4:"), "\(validate.stderr)")
        #expect(validate.stderr.contains("sqlite_x"))
    }

    @Test func yamlSyntaxErrorsGiveLineAndColumn() {
        let error = failure("version: 1\nname: demo\nentities:\n  Item: [unclosed\n")
        #expect(error != nil)
        #expect(error?.message.contains("YAML") == true)
        #expect((error?.line ?? 0) >= 4)
        #expect((error?.column ?? 0) >= 1)
    }

    @Test func aBadPredicateNamesItsColumnInTheFile() {
        let text = minimal + "\nexports:\n  - name: e\n    entity: Item\n    path: o.csv\n    columns: [id]\n    where: id >= 3 AND titel == 'x'\n"
        let error = failure(text)
        #expect(error?.line == 14)
        #expect(error?.column == 24)
        #expect(error?.message.contains("titel") == true)
    }

    /// Issue 5: TLS verification cannot be switched off, silently or otherwise:
    /// the keys other tools use for it are unknown keys here (exit 64).
    @Test(arguments: ["insecure: true", "verify_tls: false", "tls_verify: false", "ssl_verify: false"])
    func tlsVerificationCannotBeSwitchedOff(key: String) {
        let text = minimal + "\nsources:\n  - { name: items, entity: Item, url: \"https://example.test/items\", \(key) }\n"
        let error = failure(text)
        #expect(error?.line == 10)
        #expect(error?.message.contains("unknown key") == true, "\(String(describing: error))")
    }

    @Test func aMissingEnvironmentVariableIsNamed() {
        let text = minimal + "\nsources:\n  - { name: items, entity: Item, url: \"${API_BASE}/items\" }\n"
        let error = failure(text)
        #expect(error?.message.contains("API_BASE") == true)
        #expect(error?.line == 10)
        let loaded = try? load(text, environment: ["API_BASE": "https://example.test"])
        #expect(loaded?.sources[0].url == "https://example.test/items")
        #expect(loaded?.secrets == ["https://example.test"])
    }
}
