import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellTestSupport
import SwellStoreTestSupport

/// `BatchColumns.truncate(toRows:)`, which drops a row begun and given up (the pipeline's
/// reader appends a record's values as they come and drops them when the record turns out
/// bad): random appends of every kind, nulls included, and truncations, compared with a
/// model of plain arrays. Whatever was truncated must leave no trace: no null bit, no text
/// byte, no count. Seeds 1–200; a failure names its seed.
@Suite(.onEveryStore) struct BatchColumnsTruncateTests {
    /// One row's values in the model, per column (nil: null).
    private struct ModelRow: Equatable {
        var integer: Int64?
        var double: Double?
        var boolean: Bool?
        var text: String?
    }

    @Test(arguments: 1...200)
    func truncatedRowsLeaveNothingBehind(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        var columns = BatchColumns()
        let integers = columns.integers("i"), doubles = columns.doubles("d")
        let booleans = columns.booleans("b"), texts = columns.strings("t")
        var model: [ModelRow] = []
        for _ in 0..<Int.random(in: 1...300, using: &random) {
            if Bool.random(using: &random) || model.isEmpty || Int.random(in: 0..<4, using: &random) > 0 {
                let row = ModelRow(
                    integer: Bool.random(using: &random) ? nil : Int64.random(in: -9...9, using: &random),
                    double: Int.random(in: 0..<3, using: &random) == 0 ? nil : Double(Int.random(in: 0...99, using: &random)) / 4,
                    boolean: Int.random(in: 0..<3, using: &random) == 0 ? nil : Bool.random(using: &random),
                    text: Int.random(in: 0..<3, using: &random) == 0 ? nil : String(repeating: "é", count: Int.random(in: 0...5, using: &random)))
                columns.append(row.integer, to: integers)
                columns.append(row.double, to: doubles)
                columns.append(row.boolean, to: booleans)
                columns.append(row.text, to: texts)
                model.append(row)
            } else {
                // A row begun in some columns only, then given up; sometimes a longer stretch.
                let keep = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 0...model.count, using: &random) : model.count
                if keep == model.count {
                    columns.append(nil as Int64?, to: integers)
                    if Bool.random(using: &random) { columns.append("dropped", to: texts) }
                    if Bool.random(using: &random) { columns.append(nil as Bool?, to: booleans) }
                }
                columns.truncate(toRows: keep)
                model.removeLast(model.count - keep)
            }
            #expect(columns.rowCount == model.count, "seed \(seed)")
        }
        for (row, expected) in model.enumerated() {
            let found = ModelRow(
                integer: columns.value(row: row, column: 0).integer,
                double: columns.value(row: row, column: 1).real,
                boolean: columns.value(row: row, column: 2).integer.map { $0 != 0 },
                text: columns.value(row: row, column: 3).text)
            #expect(found == expected, "seed \(seed), row \(row)")
        }
    }
}

private extension StoreValue {
    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    var real: Double? { if case .real(let value) = self { value } else { nil } }
    var text: String? { if case .text(let value) = self { value } else { nil } }
}
