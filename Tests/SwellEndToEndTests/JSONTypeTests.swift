import Foundation
import SwellCSV
import SwellCalendar
import SwellJSON
@testable import SwellSQLite
@testable import SwellContexts
import SwellStoreCore
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// The `json` type (Pipeline file reference, Values, version 2): any JSON value, kept as its
/// compact text with object members in their order and numbers as written; null is
/// null; in the store TEXT, in CSV the compact text.
@Suite struct JSONTypeTests {
    private func convert(_ json: String) throws -> StoreValue? {
        let value = try JSONValue.parse(Array(json.utf8))
        if case .success(let converted) = ValueConverter.convert(value, to: .json, dates: .iso8601, patterns: DatePatterns()) { return converted }
        return nil
    }

    @Test func everyJsonValueBecomesItsCompactTextWithMemberOrderAndNumbersKept() throws {
        #expect(try convert(#"{ "b": 1, "a": [1, [2.50, {"z": null}]], "s": "x,\"y\"" }"#)
            == .text(#"{"b":1,"a":[1,[2.50,{"z":null}]],"s":"x,\"y\""}"#))
        #expect(try convert("[ 1e2 , -0.0, 10.0, 92233720368547758070 ]") == .text("[1e2,-0.0,10.0,92233720368547758070]"))
        #expect(try convert("[]") == .text("[]"))
        #expect(try convert("{}") == .text("{}"))
        #expect(try convert(#""gift""#) == .text(#""gift""#))
        #expect(try convert(#""\u00e9\/\n""#) == .text("\"é/\\n\""))
        #expect(try convert("12.50") == .text("12.50"))
        #expect(try convert("true") == .text("true"))
        #expect(try convert("false") == .text("false"))
        #expect(try convert("null") == .null)
    }

    @Test func aJsonAttributeGoesFromThePageToTheStoreAndTheCSVAsCompactText() throws {
        let workspace = try Workspace()
        try workspace.write("data/docs.json", #"""
        [
          {"id": 1, "meta": {"b": 1, "a": [1, [2.50, {"z": null}]], "s": "x,\"y\""}},
          {"id": 2, "meta": [ 1e2 , -0.0, "\u00e9" ]},
          {"id": 3, "meta": "gift"},
          {"id": 4, "meta": 12.50},
          {"id": 5, "meta": false},
          {"id": 6, "meta": null},
          {"id": 7}
        ]
        """#)
        try workspace.write("docs.yml", """
        version: 2
        name: docs
        entities:
          Doc: { key: [id], attributes: { id: integer, meta: json? } }
        sources:
          - { name: docs, entity: Doc, url: data/docs.json }
        exports:
          - { name: docs, entity: Doc, path: out/docs.csv, columns: [id, meta] }
        """)
        let outcome = try workspace.run("run", "docs.yml")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let connection = try SQLiteConnection(path: workspace.path(".swell/docs.sqlite"), mode: .readOnly)
        #expect(try connection.query("SELECT typeof(meta), meta FROM Doc ORDER BY id") == [
            [.text("text"), .text(#"{"b":1,"a":[1,[2.50,{"z":null}]],"s":"x,\"y\""}"#)],
            [.text("text"), .text(#"[1e2,-0.0,"é"]"#)],
            [.text("text"), .text(#""gift""#)],
            [.text("text"), .text("12.50")],
            [.text("text"), .text("false")],
            [.text("null"), .null],
            [.text("null"), .null],
        ])
        #expect(try workspace.read("out/docs.csv") == #"""
        id,meta
        1,"{""b"":1,""a"":[1,[2.50,{""z"":null}]],""s"":""x,\""y\""""}"
        2,"[1e2,-0.0,""é""]"
        3,"""gift"""
        4,12.50
        5,false
        6,
        7,

        """#)
    }
}
