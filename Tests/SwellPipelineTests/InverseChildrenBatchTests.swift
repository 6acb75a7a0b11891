import Foundation
import SwellPipeline
import Testing
import SwellPipelineTestSupport

/// A to-many kept by its inverse to-one (an order's lines, each line naming its order) goes
/// down on the batch path (`GraphShape`): each line points at the last record that lists it,
/// a line an order no longer lists is unlinked, and an order whose lines changed counts as
/// updated — on every store, as the object-by-object writer left them.
@Suite struct InverseChildrenBatchTests {
    static let orders = """
        version: 2
        name: orders
        entities:
          Order:
            key: [id]
            attributes: { id: integer, note: string? }
            relationships: { lines: { to: Line, many: true, inverse: order } }
          Line:
            key: [sku]
            attributes: { sku: string, qty: integer? }
            relationships: { order: { to: Order, inverse: lines } }
        sources:
          - name: orders
            entity: Order
            url: "{dir}/orders.json"
            fields:
              lines: { path: lines, fields: { sku: sku, qty: qty } }
        """

    private func counts(_ source: RunReport.Source) -> [Int] {
        let lines = source.nested?["Line"] ?? RunReport.Counts()
        return [source.inserted, source.updated, source.unchanged, lines.inserted, lines.updated, lines.unchanged]
    }

    private func owners(_ pipeline: InProcessPipeline) throws -> [String: String] {
        let lines = try pipeline.graph().objects["Line"] ?? [:]
        return lines.mapValues { $0["order"] ?? "absent" }
    }

    @Test(arguments: PipelineStore.allCases)
    func linesFollowTheLastOrderThatListsThemAndUnlistedOnesAreUnlinked(store: PipelineStore) throws {
        let pipeline = try InProcessPipeline(yaml: Self.orders, store: store)
        try pipeline.write("orders.json", """
            [{"id": 1, "lines": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}]}, {"id": 2, "lines": [{"sku": "c", "qty": 3}]}]
            """)
        var report = try pipeline.run()
        #expect(counts(report[0]) == [2, 0, 0, 3, 0, 0])
        #expect(try owners(pipeline) == ["'a'": "[1]", "'b'": "[1]", "'c'": "[2]"], "\((try? owners(pipeline)) ?? [:])")

        report = try pipeline.run()
        #expect(counts(report[0]) == [0, 0, 2, 0, 0, 3], "nothing changed")

        // b moves from order 1 to order 2: both orders' sets changed, and b's to-one.
        try pipeline.write("orders.json", """
            [{"id": 1, "lines": [{"sku": "a", "qty": 1}]}, {"id": 2, "lines": [{"sku": "c", "qty": 3}, {"sku": "b", "qty": 2}]}]
            """)
        report = try pipeline.run()
        #expect(counts(report[0]) == [0, 2, 0, 0, 1, 2])
        #expect(try owners(pipeline) == ["'a'": "[1]", "'b'": "[2]", "'c'": "[2]"], "\((try? owners(pipeline)) ?? [:])")

        // Order 1 lists nothing now: a is unlinked (kept, without an order); order 2 is not in the page.
        try pipeline.write("orders.json", #"[{"id": 1, "lines": []}]"#)
        report = try pipeline.run()
        #expect(counts(report[0]) == [0, 1, 0, 0, 1, 0], "a, unlinked, counts as updated")
        #expect(try owners(pipeline) == ["'a'": "[]", "'b'": "[2]", "'c'": "[2]"], "\((try? owners(pipeline)) ?? [:])")

        // Order 2 twice in one batch: the later record, which lists only b, is what the store keeps.
        try pipeline.write("orders.json", """
            [{"id": 2, "lines": [{"sku": "d", "qty": 4}, {"sku": "b", "qty": 2}]}, {"id": 2, "lines": [{"sku": "b", "qty": 5}]}]
            """)
        report = try pipeline.run()
        #expect(try owners(pipeline) == ["'a'": "[]", "'b'": "[2]", "'c'": "[]", "'d'": "[]"], "\((try? owners(pipeline)) ?? [:])")
        #expect(try pipeline.graph().objects["Line"]?["'b'"]?["qty"] == "5")
        #expect(counts(report[0])[1] == 1, "order 2 counts once, as updated")
        #expect(report[0].nested?["Line"]?.inserted == 1)
    }
}

extension InverseChildrenBatchTests {
    @Test(arguments: PipelineStore.allCases)
    func anOrderedListKeepsTheLastListingsPlaces(store: PipelineStore) throws {
        let yaml = Self.orders.replacingOccurrences(of: "lines: { to: Line, many: true, inverse: order }",
                                                    with: "lines: { to: Line, many: true, ordered: true, inverse: order }")
        let pipeline = try InProcessPipeline(yaml: yaml, store: store)
        try pipeline.write("orders.json", #"[{"id": 1, "lines": [{"sku": "b"}, {"sku": "a"}, {"sku": "c"}]}]"#)
        var report = try pipeline.run()
        #expect(try pipeline.graph().objects["Order"]?["1"]?["lines"] == "['b', 'a', 'c']")
        #expect(counts(report[0]) == [1, 0, 0, 3, 0, 0])

        // Reordered, c dropped: the order's list changed, and each line's place or to-one.
        try pipeline.write("orders.json", #"[{"id": 1, "lines": [{"sku": "a"}, {"sku": "b"}]}]"#)
        report = try pipeline.run()
        #expect(try pipeline.graph().objects["Order"]?["1"]?["lines"] == "['a', 'b']")
        #expect(try owners(pipeline) == ["'a'": "[1]", "'b'": "[1]", "'c'": "[]"])
        #expect(counts(report[0]) == [0, 1, 0, 0, 3, 0])
    }
}
