import Foundation
import SwellPipeline
import Testing
import SwellPipelineTestSupport

/// Replace mode deletes exactly the stored rows whose key the run's pages did not bring,
/// for each way the sweeper keeps keys: one integer, one string (bytes in an arena,
/// looked up by binary search), two attributes (values).
@Suite struct ReplaceKeyShapesTests {
    private static func yaml(key: String, attributes: String) -> String {
        """
        version: 2
        name: snapshot
        entities:
          Item:
            key: \(key)
            attributes: \(attributes)
        sources:
          - name: items
            entity: Item
            url: "{dir}/items.json"
            mode: replace
        """
    }

    private func keys(_ pipeline: InProcessPipeline) throws -> [String] {
        (try pipeline.graph().objects["Item"] ?? [:]).keys.sorted()
    }

    @Test(arguments: PipelineStore.allCases)
    func aStringKeyNotBroughtAgainIsDeletedAndEveryOtherKept(store: PipelineStore) throws {
        let pipeline = try InProcessPipeline(yaml: Self.yaml(key: "[code]", attributes: "{ code: string, n: integer? }"), store: store)
        // Prefixes of one another, other lengths, bytes above ASCII: the byte order is what the lookup relies on.
        let first = ["a", "ab", "abc", "b", "B", "é", "zz", "z", "", "ñandú", "\u{212A}elvin"]
        try pipeline.write("items.json", "[" + first.enumerated().map { #"{"code": "\#($1)", "n": \#($0)}"# }.joined(separator: ", ") + "]")
        _ = try pipeline.run()
        #expect(try keys(pipeline).count == first.count)

        // "e" + U+0301 and "Kelvin" with a K are the stored "é" and "\u{212A}elvin" to Swift's
        // String, so the upsert took them as those keys: the sweep must not delete them.
        let second = ["ab", "b", "e\u{301}", "z", "", "new", "Kelvin"]
        try pipeline.write("items.json", "[" + second.map { #"{"code": "\#($0)"}"# }.joined(separator: ", ") + "]")
        let report = try pipeline.run()
        #expect(report[0].deleted == 5, "a, abc, B, zz, ñandú go")
        #expect(try keys(pipeline).count == 7, "\((try? keys(pipeline)) ?? [])")
        #expect(try keys(pipeline).contains("'é'"), "the stored bytes stay")
    }

    @Test(arguments: PipelineStore.allCases)
    func anIntegerKeyAndAPairKeyAreSweptTheSameWay(store: PipelineStore) throws {
        let integers = try InProcessPipeline(yaml: Self.yaml(key: "[id]", attributes: "{ id: integer }"), store: store)
        try integers.write("items.json", #"[{"id": -5}, {"id": 0}, {"id": 7}, {"id": 9007199254740993}]"#)
        _ = try integers.run()
        try integers.write("items.json", #"[{"id": 7}, {"id": -5}, {"id": 8}]"#)
        #expect(try integers.run()[0].deleted == 2)
        #expect(try keys(integers) == ["-5", "7", "8"])

        let pairs = try InProcessPipeline(yaml: Self.yaml(key: "[a, b]", attributes: "{ a: integer, b: string }"), store: store)
        try pairs.write("items.json", #"[{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}]"#)
        _ = try pairs.run()
        try pairs.write("items.json", #"[{"a": 1, "b": "y"}]"#)
        #expect(try pairs.run()[0].deleted == 2)
        #expect(try pairs.graph().objects["Item"]?.count == 1)
    }
}
