import SwellJSON
import SwellContexts
import SwellTestSupport
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// `swell init`'s inference as pure functions, from a JSON value to the pipeline
/// description and its YAML: types, optional, keys, nesting, names, pagination, comments.
@Suite struct InitInferenceTests {
    private func infer(_ json: String, records: [String]? = nil, linkHeader: String? = nil,
                       url: String = "https://api.example.com/v1/items") throws -> InitPipeline {
        try PipelineInference.infer(JSONValue.parse(Array(json.utf8)),
                                    options: InitOptions(url: url, records: records, linkHeader: linkHeader))
    }

    /// The written file loads as a pipeline file does (`swell validate`'s check).
    @discardableResult
    private func validate(_ pipeline: InitPipeline) throws -> PipelineFile {
        try PipelineFileLoader(environment: [:]).load(text: pipeline.yaml, path: "init.yml")
    }

    @Test func typesFollowEveryValueSeen() throws {
        let pipeline = try infer("""
        [{"id": 1, "count": 2, "price": 1.5, "paid": true, "at": "2024-05-01T06:30:00Z", "day": "2024-05-01", "name": "a",
          "when": "2024-05-01", "extra": {"a": 1}, "tags": ["x", "y"], "mixed": 1, "huge": 98765432109876543210},
         {"id": 2, "count": 3, "price": 2, "paid": false, "at": "2024-05-02T06:30:00.250+02:00", "day": "2024-05-02", "name": "b",
          "when": "soon", "extra": "text", "tags": [], "mixed": "one", "huge": 1}]
        """)
        let entity = pipeline.mainEntity
        let types = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.typeText) })
        #expect(types == ["id": "integer", "count": "integer", "price": "double", "paid": "boolean", "at": "date", "day": "date",
                          "name": "string", "when": "string", "extra": "json", "tags": "json", "mixed": "string", "huge": "string"])
        #expect(entity.attribute("when")?.reason.contains("not all") == true)
        #expect(entity.attribute("extra")?.reason == "json: mixed shapes (objects and strings), kept whole")
        #expect(entity.attribute("tags")?.reason == "json: arrays of scalars (strings), kept whole")
        #expect(entity.attribute("mixed")?.reason == "string: a mix of numbers and strings, kept as text")
        try validate(pipeline)
    }

    @Test func optionalWhenNullOrMissingInAnyRecord() throws {
        let pipeline = try infer(#"[{"id": 1, "a": "x", "b": 1, "c": null}, {"id": 2, "a": null}, {"id": 3, "a": "z", "b": 3, "c": null}]"#)
        let entity = pipeline.mainEntity
        #expect(entity.attribute("id")?.isOptional == false)
        #expect(entity.attribute("a")?.typeText == "string?")
        #expect(entity.attribute("a")?.reason.hasSuffix("; optional: null in 1 of 3") == true)
        #expect(entity.attribute("b")?.typeText == "integer?")
        #expect(entity.attribute("b")?.reason.hasSuffix("; optional: missing in 1 of 3") == true)
        #expect(entity.attribute("c")?.typeText == "json?")
        #expect(entity.attribute("c")?.reason.hasPrefix("json: only null seen") == true)
    }

    @Test func keyIsIdWhenUniqueElseTheFirstUniqueField() throws {
        #expect(try infer(#"[{"code": "a", "id": 1}, {"code": "b", "id": 2}]"#).mainEntity.key == ["id"])
        let noUniqueID = try infer(#"[{"id": 1, "n": 1.5, "flag": true, "sku": "a", "seq": 7}, {"id": 1, "n": 2.5, "flag": false, "sku": "b", "seq": 8}]"#)
        #expect(noUniqueID.mainEntity.key == ["sku"])
        #expect(noUniqueID.mainEntity.keyReason.hasPrefix("sku: the first field present in every record and different in each"))
        let optionalField = try infer(#"[{"a": 1, "b": "x"}, {"b": "y"}]"#)
        #expect(optionalField.mainEntity.key == ["b"])
        let composite = try infer(#"[{"suit": "Hearts", "value": "Jack", "note": null}, {"suit": "Hearts", "value": "Three"}, {"suit": "Clubs", "value": "Jack"}]"#)
        #expect(composite.mainEntity.key == ["suit", "value"])
        #expect(composite.mainEntity.keyReason.contains("every required field together"))
        try validate(composite)
        #expect(throws: PipelineError.self) { try infer(#"[{"a": null, "b": {"c": 1}}, {"b": {"c": 2}}]"#) }
    }

    @Test func nestedObjectsAndArraysBecomeRelatedEntitiesWithKeys() throws {
        let pipeline = try infer("""
        {"data": {"orders": [
          {"id": 1, "customer": {"id": 10, "name": "Ada"}, "lines": [{"id": 100, "qty": 1}, {"id": 101, "qty": 2}],
           "shipping": {"street": "Main", "city": "X"}, "notes": [{"text": "a"}]},
          {"id": 2, "customer": null, "lines": [], "shipping": {"street": "Side", "city": "X"}, "notes": [{"text": "a"}]},
          {"id": 3, "customer": {"id": 10, "name": "Ada"}, "lines": [{"id": 102, "qty": 1}], "shipping": {"street": "Side", "city": "X"}, "notes": []}
        ]}, "meta": {"count": 3}}
        """)
        #expect(pipeline.records == ["data", "orders"])
        #expect(pipeline.entities.map(\.name) == ["Order", "Customer", "Line"])
        let order = pipeline.mainEntity
        #expect(order.relationship("customer") == InferredRelationship(
            name: "customer", field: "customer", destination: "Customer", isToMany: false,
            reason: "to-one: an object with its key id; none (null or missing) in 1 of 3 records"))
        #expect(order.relationship("lines")?.isToMany == true)
        #expect(order.relationship("lines")?.destination == "Line")
        #expect(pipeline.entities[2].key == ["id"])
        // Objects with no id and no field unique to each: kept whole as json.
        #expect(order.attribute("shipping")?.typeText == "json")
        #expect(order.attribute("notes")?.typeText == "json")
        #expect(order.attribute("shipping")?.reason.hasPrefix("json: objects with no key of their own") == true)
        #expect(pipeline.export.columns == ["id"])
        let file = try validate(pipeline)
        #expect(file.version == 2)
        #expect(file.sources[0].nested.map(\.relationship) == ["customer", "lines"])
        #expect(pipeline.yaml.contains("      lines: { to: Line, many: true }  # to-many: arrays of objects (3 elements in all), each with its key id\n"))
    }

    @Test func recordsAreThePageOrTheLargestArrayOfObjects() throws {
        let page = try infer(#"{"tags": [{"id": 1}], "items": [{"id": 1}, {"id": 2}], "names": ["a", "b", "c"]}"#)
        #expect(page.records == ["items"])
        #expect(page.recordsReason == "records: items, the largest array of objects in the page (others: tags), 2 records")
        #expect(page.mainEntity.name == "Item")
        let given = try infer(#"{"tags": [{"id": 1}], "items": [{"id": 1}, {"id": 2}]}"#, records: ["tags"])
        #expect(given.records == ["tags"])
        #expect(given.recordCount == 1)
        #expect(try infer(#"[{"id": 1}]"#).records == nil)
        #expect(throws: PipelineError.self) { try infer(#"{"a": [1, 2]}"#) }
        #expect(throws: PipelineError.self) { try infer(#"[]"#) }
        #expect(throws: PipelineError.self) { try infer(#"[1, 2]"#) }
    }

    @Test func namesThatAreNotAttributeNamesGetAFieldsMapping() throws {
        let pipeline = try infer(#"[{"id": 1, "+1": 2, "-1": 0, "created-at": "x", "2fa": true, "_id": "a", "a.b": 1, "swell_x": 1, "ID": 5}]"#,
                                 url: "https://api.example.com/v1/line_items?page=1")
        let entity = pipeline.mainEntity
        #expect(pipeline.name == "line_items")
        #expect(entity.name == "LineItem")
        #expect(entity.attributes.map(\.name) == ["id", "plus_1", "minus_1", "created_at", "field_2fa", "id_2", "field_swell_x", "ID_3"])
        #expect(entity.skipped == ["'a.b' left out: a dot path cannot name it"])
        let file = try validate(pipeline)
        #expect(file.sources[0].fields["plus_1"]?.path == ["+1"])
        #expect(file.sources[0].fields["id_2"]?.path == ["_id"])
        #expect(pipeline.yaml.contains("      plus_1: \"+1\"  # the JSON key \"+1\" is not a valid attribute name\n"))
    }

    @Test func paginationFromABodyNextLink() throws {
        let relative = try infer(#"{"data": [{"id": 1}], "next": "page-0002.json"}"#)
        #expect(relative.pagination == .next(path: ["next"]))
        let nested = try infer(#"{"data": [{"id": 1}], "links": {"self": "https://x/1", "next": "https://x/2"}}"#)
        #expect(nested.pagination == .next(path: ["links", "next"]))
        #expect(nested.paginationReason == "links.next holds the next page's URL (\"https://x/2\")")
        let hal = try infer(#"{"items": [{"id": 1}], "_links": {"next": {"href": "/items?page=2"}}}"#)
        #expect(hal.pagination == .next(path: ["_links", "next", "href"]))
        let last = try infer(#"{"data": [{"id": 1}], "next": null}"#)
        #expect(last.pagination == nil)
        #expect(last.paginationReason.contains("next is null on this page"))
        #expect(try infer(#"[{"id": 1, "next": "https://x/2"}]"#).pagination == nil)
        try validate(hal)
    }

    @Test func paginationFromACursor() throws {
        let meta = try infer(#"{"data": [{"id": 1}], "meta": {"next_cursor": "eyJpZCI6MX0"}}"#)
        #expect(meta.pagination == .cursor(path: ["meta", "next_cursor"], parameter: "cursor"))
        let token = try infer(#"{"items": [{"id": 1}], "nextPageToken": "abc123"}"#)
        #expect(token.pagination == .cursor(path: ["nextPageToken"], parameter: "pageToken"))
        #expect(token.yaml.contains("    paginate: { cursor: nextPageToken, param: pageToken }  # nextPageToken looks like a cursor"))
        let page = try infer(#"{"items": [{"id": 1}], "next_page": 2}"#)
        #expect(page.pagination == .cursor(path: ["next_page"], parameter: "page"))
        #expect(try infer(#"{"items": [{"id": 1}], "access_token": "abc123"}"#).pagination == nil)
        try validate(token)
    }

    /// Offset, limit and total side by side: offset paging, in a version-3 file that loads
    /// and pages as the sample says.
    @Test func paginationFromAnOffsetAndALimit() throws {
        let top = try infer(#"{"offset": 0, "limit": 25, "total": 80, "results": [{"id": 1}]}"#)
        #expect(top.pagination == .offset(parameter: "offset", limitParameter: "limit", limit: 25, start: 0, total: ["total"]))
        #expect(top.version == 3 && top.yaml.hasPrefix("# ") && top.yaml.contains("\nversion: 3\n"))
        #expect(top.yaml.contains("    paginate: { offset: { param: offset, limit_param: limit, limit: 25, total: total } }"))
        let loaded = try validate(top)
        #expect(loaded.sources.first?.pagination == top.pagination)
        let meta = try infer(#"{"data": [{"id": 1}], "meta": {"skip": 0, "page_size": 10}}"#)
        #expect(meta.pagination == .offset(parameter: "skip", limitParameter: "page_size", limit: 10, start: 0, total: nil))
        try validate(meta)
        // An offset without a limit beside it is not paging.
        #expect(try infer(#"{"items": [{"id": 1}], "offset": 0, "meta": {"limit": 5}}"#).pagination == nil)
        #expect(try infer(#"{"items": [{"id": 1}], "next": null}"#).version == 2)
    }

    @Test func paginationFromALinkHeaderComesFirst() throws {
        let pipeline = try infer(#"{"data": [{"id": 1}], "next": "https://x/2"}"#,
                                 linkHeader: #"<https://api.example.com/v1/items?page=2>; rel="next", <https://api.example.com/v1/items?page=9>; rel="last""#)
        #expect(pipeline.pagination == .linkHeader)
        #expect(try infer(#"[{"id": 1}]"#, linkHeader: #"<https://x/9>; rel="last""#).pagination == nil)
    }

    @Test func linkHeaderOfARealResponseIsSeen() throws {
        let server = try LoopbackHTTPServer { request in
            .json(#"[{"id": 1}, {"id": 2}]"#, headers: [("Link", "<\(request.path)?page=2>; rel=\"next\"")])
        }
        defer { server.stop() }
        let url = "\(server.baseURL)/v1/widgets"
        let sample = try InitSample.fetch(url: url, headers: [], environment: [:])
        let pipeline = try PipelineInference.infer(sample.body, options: InitOptions(url: url, linkHeader: sample.linkHeader))
        #expect(pipeline.pagination == .linkHeader)
        #expect(pipeline.name == "widgets")
        #expect(pipeline.mainEntity.name == "Widget")
    }

    @Test func everyGuessHasAComment() throws {
        let pipeline = try infer(#"{"data": [{"id": 1, "name": "a", "tags": [1], "user": {"id": 3}}], "next": "https://x/2"}"#)
        let yaml = pipeline.yaml
        #expect(yaml.contains("    key: [id]  # id: present in every record (1), different in each\n"))
        #expect(yaml.contains("      id: integer  # integer: whole numbers in all 1 values\n"))
        #expect(yaml.contains("      name: string  # string: text (e.g. \"a\")\n"))
        #expect(yaml.contains("      tags: json  # json: arrays of scalars (numbers), kept whole\n"))
        #expect(yaml.contains("      user: { to: User }  # to-one: an object with its key id\n"))
        #expect(yaml.contains("    records: data  # records: data, the only array of objects in the page, 1 records\n"))
        #expect(yaml.contains("    paginate: { next: next }  # next holds the next page's URL"))
        #expect(yaml.contains("    columns: [id, name]  # the key and the scalar attributes of Item\n"))
        for line in yaml.split(separator: "\n") where line.contains(": ") && !line.hasPrefix("#") {
            let guessed = ["key:", "records:", "paginate:", "columns:"].contains { line.trimmingCharacters(in: .whitespaces).hasPrefix($0) }
            if guessed { #expect(line.contains("  # "), "\(line)") }
        }
        try validate(pipeline)
    }
}
