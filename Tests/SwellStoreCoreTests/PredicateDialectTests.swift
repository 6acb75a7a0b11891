@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Predicates compile through a visitor with one dialect per store (issue 11, item 0):
/// the tree's SQL is the compiler's, the spelling of placeholders, constants and string
/// tests the dialect's.
@Suite(.onEveryStore) struct PredicateDialectTests {
    /// A dialect spelled as PostgreSQL would be: numbered placeholders, TRUE/FALSE.
    struct NumberedDialect: PredicateStringSQLDialect {
        func quote(_ identifier: String) -> String { "\"\(identifier)\"" }
        func placeholder(_ position: Int, for value: StoreValue) -> String { "$\(position)" }
        func constant(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
        func falseIfNull(_ test: String) -> String { "COALESCE(\(test), FALSE)" }
        func isDistinct(_ lhs: String, from rhs: String) -> String { "\(lhs) IS DISTINCT FROM \(rhs)" }
        func folded(_ expression: String, _ options: PredicateStringOptions) -> String { "fold(\(expression))" }
        func stringTest(_ operation: PredicateFunctions.StringOperation, column: String, operand: String,
                        _ options: PredicateStringOptions) -> String {
            "strpos(fold(\(column)), fold(\(operand))) > 0"
        }
        func like(column: String, pattern: String, _ options: PredicateStringOptions) -> String { "\(column) LIKE \(pattern)" }
        var primaryKeyColumn: String { "\"_pk\"" }
        func joined(_ value: String, separator: String, orderedBy order: String?, from: String) -> String { "joined(\(value))" }
    }

    private func bound(_ format: String, _ arguments: Any?...) throws -> BoundPredicate {
        try FetchPredicate(format: format, argumentArray: arguments).bind(to: journalEntity)
    }

    @Test func theSameTreeComesOutInEachDialectWithItsPlaceholdersAndArgumentsInOrder() throws {
        let predicate = try bound("rating >= %@ AND (location CONTAINS[c] %@ OR id IN %@) AND NOT height == nil", 3, "beach", [1, 2])
        let sqlite = predicate.sql(SQLiteDialect())
        #expect(sqlite.clause == """
            (("rating" IS NOT NULL AND "rating" >= ?) AND (COALESCE(swell_strop(3, "location", ?, 1), 0) OR ("id" IS NOT NULL AND "id" IN (?, ?))) AND NOT ("height" IS NULL))
            """)
        let numbered = predicate.sql(NumberedDialect())
        #expect(numbered.clause == """
            (("rating" IS NOT NULL AND "rating" >= $1) AND (COALESCE(strpos(fold("location"), fold($2)) > 0, FALSE) OR ("id" IS NOT NULL AND "id" IN ($3, $4))) AND NOT ("height" IS NULL))
            """)
        #expect(sqlite.arguments == [.integer(3), .text("beach"), .integer(1), .integer(2)])
        #expect(numbered.arguments == sqlite.arguments)
    }

    @Test func constantsAndEmptyListsUseTheDialectsBooleans() throws {
        #expect(try bound("TRUEPREDICATE").sql(NumberedDialect()).clause == "TRUE")
        #expect(try bound("id IN %@", [Int]()).sql(NumberedDialect()).clause == "FALSE")
        #expect(try bound("id IN %@", [Int]()).sql(SQLiteDialect()).clause == "0")
    }
}
