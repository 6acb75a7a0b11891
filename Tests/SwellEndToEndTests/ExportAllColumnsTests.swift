import Foundation
import Testing
@testable import SwellPipeline
import SwellPipelineTestSupport

/// Pipeline file reference, "Schema drift (version 4)": an export's `columns: "*"` is every
/// attribute of its entity, the key first, then in model order; it needs `version: 4`.
@Suite struct ExportAllColumnsTests {
    static func file(version: Int) -> String {
        """
        version: \(version)
        name: shop
        store: .swell/shop.sqlite
        entities:
          Item:
            key: [code]
            attributes: { name: string, code: string, stock: integer?, price: double? }
        sources:
          - { name: items, entity: Item, url: items.json }
        exports:
          - { name: items, entity: Item, path: out/items.csv, columns: "*" }
        """
    }

    @Test func starIsEveryAttributeKeyFirstInModelOrder() throws {
        let pipeline = try PipelineFileLoader(environment: [:]).load(text: Self.file(version: 4), path: "shop.yml")
        #expect(pipeline.exports.first?.columns.map(\.attribute) == ["code", "name", "stock", "price"])
        let workspace = try Workspace()
        try workspace.write("shop.yml", Self.file(version: 4))
        try workspace.write("items.json", #"[{"code": "b", "name": "Bolt", "stock": 3, "price": 0.25}, {"code": "a", "name": "Axle"}]"#)
        let run = try workspace.run("run", "shop.yml", "--progress", "never")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try workspace.read("out/items.csv") == "code,name,stock,price\na,Axle,,\nb,Bolt,3,0.25\n")
    }

    @Test func starNeedsVersion4() {
        #expect {
            _ = try PipelineFileLoader(environment: [:]).load(text: Self.file(version: 3), path: "shop.yml")
        } throws: { error in
            "\(error)".contains("columns: \"*\" needs version: 4")
        }
    }
}
