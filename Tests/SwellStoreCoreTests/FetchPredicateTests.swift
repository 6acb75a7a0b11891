import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing

@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

// MARK: - Fixtures

private let journal = EntityDescription(
    name: "JournalEntry",
    attributes: [
        AttributeDescription(name: "name", type: .string, isOptional: true),
        AttributeDescription(name: "location", type: .string, isOptional: true),
        AttributeDescription(name: "rating", type: .integer, isOptional: true),
        AttributeDescription(name: "height", type: .double, isOptional: true),
        AttributeDescription(name: "favorite", type: .boolean, isOptional: true),
        AttributeDescription(name: "date", type: .date, isOptional: true),
    ])

/// 2024-05-01T06:30:00Z.
private let mayFirstDawn: Double = 1_714_545_000

/// A row of `journal`, in attribute order.
private func entry(
    _ name: String? = nil, location: String? = nil, rating: Int64? = nil, height: Double? = nil,
    favorite: Bool? = nil, date: Double? = nil
) -> [StoreValue] {
    [
        name.map(StoreValue.text) ?? .null,
        location.map(StoreValue.text) ?? .null,
        rating.map(StoreValue.integer) ?? .null,
        height.map(StoreValue.real) ?? .null,
        favorite.map { .integer($0 ? 1 : 0) } ?? .null,
        date.map(StoreValue.real) ?? .null,
    ]
}

/// `journal` with a required integer key, `seq`: its table keeps `seq` as the rowid (issue 9).
private let keyedJournal: EntityDescription = {
    var entity = journal
    entity.name = "KeyedEntry"
    entity.attributes.insert(AttributeDescription(name: "seq", type: .integer), at: 2)
    entity.uniquenessConstraint = ["seq"]
    return entity
}()

/// An in-memory SQLite table of an entity's rows, made by the store's own schema code,
/// each row's object ID its index (kept in `_pk`, or for a row whose rowid key equals its
/// index, that key). Rows are read back from SQLite, so in-memory evaluation sees what the store holds.
private struct JournalTable {
    let connection: SQLiteConnection
    let layout: TableLayout
    let rows: [Int: [StoreValue]]

    init(_ rows: [[StoreValue]], entity: EntityDescription = journal) throws {
        connection = try SQLiteConnection(path: ":memory:")
        _ = try SQLiteSchema(connection: connection).migrate(to: ManagedObjectModel(entities: [entity]))
        layout = TableLayout(entity)
        let names = entity.attributes.map { quoteIdentifier($0.name) }
        let placeholders = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        let insert = "INSERT INTO \(layout.table) (\(names.joined(separator: ", ")), \"_pk\") VALUES (\(placeholders))"
        for (index, row) in rows.enumerated() {
            let idIsKey = layout.rowidKeyIndex.map { row[$0] == .integer(Int64(index)) } ?? false
            _ = try connection.query(insert, row + [idIsKey ? .null : .integer(Int64(index))])
        }
        var stored: [Int: [StoreValue]] = [:]
        for row in try connection.query("SELECT \(layout.id), \(names.joined(separator: ", ")) FROM \(layout.table)", []) {
            guard case .integer(let pk) = row[0] else { continue }
            stored[Int(pk)] = Array(row.dropFirst())
        }
        self.rows = stored
    }

    func sqlMatches(_ bound: BoundPredicate) throws -> Set<Int> {
        let (clause, arguments) = bound.sql(SQLiteDialect())
        let result = try connection.query("SELECT \(layout.id) FROM \(layout.table) WHERE \(clause)", arguments)
        return Set(result.compactMap { if case .integer(let pk) = $0[0] { Int(pk) } else { nil } })
    }

    func memoryMatches(_ bound: BoundPredicate) -> Set<Int> {
        Set(rows.filter { bound.evaluate($0.value) }.keys)
    }
}

/// Expects `predicate` to select exactly `expected` (row indices) from `rows`,
/// both in SQLite and in memory.
private func expectMatches(
    _ predicate: FetchPredicate, in rows: [[StoreValue]], _ expected: Set<Int>,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let table = try JournalTable(rows)
    let bound = try predicate.bind(to: journal)
    #expect(try table.sqlMatches(bound) == expected, "SQL: \(predicate)", sourceLocation: sourceLocation)
    #expect(table.memoryMatches(bound) == expected, "memory: \(predicate)", sourceLocation: sourceLocation)
}

/// The error binding `format` to `journal` throws, or nil.
private func bindError(_ format: String, _ arguments: Any?...) -> FetchPredicateError? {
    do {
        _ = try FetchPredicate(format: format, argumentArray: arguments).bind(to: journal)
        return nil
    } catch {
        return error
    }
}

// MARK: - Syntax errors

@Test(arguments: zip(
    [
        "name == 'abc",
        "rating >= ",
        "rating == 1 AND",
        "rating EQUALS 3",
        "rating MATCHES 'a'",
        "rating ~ 1",
        "(rating == 1",
        "rating == 1)",
        "((rating == 1) OR (name == 'a')",
        "rating == 1 name",
        "rating == 1 2",
        "",
        "name ==[x] 'a'",
        "name == 'a\\q'",
        "rating IN {1, 2",
        "rating == 1.",
        "rating == %d",
        "rating == AND",
        "'a' == 'b'",
    ],
    [8, 10, 15, 7, 7, 7, 0, 11, 0, 12, 12, 0, 8, 10, 10, 12, 10, 10, 0]
))
func syntaxErrorsReportTheirOffset(format: String, offset: Int) {
    #expect(throws: FetchPredicateError.self) { try FetchPredicate.parse(format: format) }
    let error = bindError(format)
    #expect(error?.offset == offset, "\(error?.description ?? "no error")")
    #expect(error?.format == format)
}

@Test func syntaxErrorDescriptionNamesColumnAndFormat() {
    let error = bindError("rating EQUALS 3")
    #expect(error?.message == "unknown operator 'EQUALS'")
    #expect(error?.column == 8)
    #expect(error?.description == "unknown operator 'EQUALS' at column 8 of predicate \"rating EQUALS 3\"")
}

@Test func unclosedQuoteIsReportedAtTheOpeningQuote() {
    let error = bindError("name == \"Sunny")
    #expect(error?.message.contains("unterminated string") == true)
    #expect(error?.offset == 8)
}

@Test func offsetsCountCharactersNotBytes() {
    let error = bindError("name == '🏄‍♀️東京' AND ratng == 1")
    #expect(error?.message == "unknown attribute 'ratng' of JournalEntry")
    #expect(error?.offset == 18)
}

@Test func deepNestingIsAnErrorNotACrash() {
    let format = String(repeating: "(", count: 10_000) + "rating == 1" + String(repeating: ")", count: 10_000)
    #expect(bindError(format)?.message.contains("nests") == true)
    let nots = String(repeating: "NOT ", count: 10_000) + "rating == 1"
    #expect(bindError(nots)?.message.contains("nests") == true)
}

@Test func longChainsStayWithinSQLiteExpressionDepth() throws {
    let format = (0..<5_000).map { "rating == \($0 * 2 + 1)" }.joined(separator: " OR ")
    try expectMatches(FetchPredicate(format: format), in: [entry(rating: 9_999), entry(rating: 2)], [0])
}

@Test func deepestAllowedNestingCompilesToSQLiteReadableSQL() throws {
    // The worst case for SQLite's parser: alternating NOT, AND and OR at every
    // level, around a chain long enough to be grouped.
    let chain = (0..<5_000).map { "rating == \($0 + 100)" }.joined(separator: " OR ")
    var format = "(" + chain + " OR NOT name LIKE[cd] 'x' OR rating IN {1, NIL})"
    var depth = 2
    var level = 0
    while depth + 2 <= PredicateParser.maximumDepth {
        format = "NOT (rating == \(level) \(level % 2 == 0 ? "AND" : "OR") \(format))"
        depth += 2
        level += 1
    }
    if depth < PredicateParser.maximumDepth { format = "(\(format))" }
    var rows: [[StoreValue]] = [entry()]
    for index in 0..<40 {
        let rating = index * 7 % 30 + (index % 3 == 0 ? 100 : 0)
        rows.append(entry(rating: Int64(rating)))
    }
    let table = try JournalTable(rows)
    let bound = try FetchPredicate(format: format).bind(to: journal)
    #expect(try table.sqlMatches(bound) == table.memoryMatches(bound))
    #expect(bindError("NOT " + format)?.message.contains("nests") == true)
}

@Test func initNeverTrapsAndParseThrows() {
    let predicate = FetchPredicate(format: "rating >= (")
    #expect(predicate.description == "rating >= (")
    #expect(throws: FetchPredicateError.self) { try predicate.validate(against: journal) }
    #expect(throws: FetchPredicateError.self) { try FetchPredicate.parse(format: "rating >= (") }
    #expect(throws: Never.self) { try FetchPredicate.parse(format: "rating >= %@", arguments: [3]) }
}

// MARK: - Binding errors

@Test func unknownAttributeIsReportedAtItsOffset() {
    let error = bindError("rating > 1 AND locaton == 'x'")
    #expect(error?.message == "unknown attribute 'locaton' of JournalEntry")
    #expect(error?.offset == 15)
    #expect(bindError("ratng >= 3")?.offset == 0)
    #expect(bindError("3 <= ratng")?.offset == 5)
    #expect(bindError("%K == 1", "ratng")?.message == "unknown attribute 'ratng' of JournalEntry")
}

@Test(arguments: zip(
    [
        "rating == 'five'",
        "name == 5",
        "height > TRUE",
        "favorite == 2",
        "favorite == 'yes'",
        "date > 'yesterday'",
        "date > '2023-02-29'",
        "rating CONTAINS '1'",
        "rating ==[c] 3",
        "name LIKE 5",
        "name IN 'abc'",
        "rating == {1, 2}",
        "rating BETWEEN {1, 2, 3}",
        "rating IN {1, 'a'}",
        "name == location",
    ],
    [10, 8, 9, 12, 12, 7, 7, 7, 7, 10, 8, 10, 15, 14, 8]
))
func typeMismatchesAreReportedAtTheirOffset(format: String, offset: Int) {
    let error = bindError(format)
    #expect(error?.offset == offset, "\(error?.description ?? "no error")")
}

/// An ordering or string test with NIL is NSPredicate's false (store guarantee 63); the older
/// rule (`.onlyNilTests`, pipeline files of versions 1–3) refuses it where the NIL is written.
@Test(arguments: zip(["height < NIL", "rating BETWEEN {NIL, 2}", "name BEGINSWITH NIL"], [9, 16, 16]))
func nilInAnOrderingIsFalseAndAnErrorUnderTheOlderRule(format: String, offset: Int) throws {
    #expect(bindError(format) == nil)
    try expectMatches(FetchPredicate(format: format), in: [entry("a", height: 1), entry()], [])
    try expectMatches(FetchPredicate(format: "NOT (\(format))"), in: [entry("a", height: 1), entry()], [0, 1])
    #expect(throws: FetchPredicateError.self) { try FetchPredicate(format: format).nilMatching(.onlyNilTests).bind(to: journal) }
    do {
        _ = try FetchPredicate(format: format).nilMatching(.onlyNilTests).bind(to: journal)
    } catch {
        #expect(error.offset == offset, "\(error)")
    }
}

@Test func typeMismatchNamesAttributeAndExpectedType() {
    #expect(
        bindError("rating == 'five'")?.message
            == "attribute 'rating' of JournalEntry is an integer: expected a number, found the string 'five'")
    #expect(
        bindError("name == 5")?.message
            == "attribute 'name' of JournalEntry is a string: expected a quoted string, found the number 5")
    #expect(
        bindError("height CONTAINS 'x'")?.message
            == "CONTAINS needs a string attribute, but 'height' of JournalEntry is a double")
}

@Test func argumentsAreCheckedAgainstTheAttributeType() {
    #expect(bindError("name == %@", Date())?.offset == 8)
    #expect(bindError("rating == %@", "3")?.offset == 10)
    #expect(bindError("favorite == %@", 1)?.offset == nil)
    #expect(bindError("rating IN %@", [1, "2"])?.offset == 10)
    #expect(bindError("rating == %@", [1, 2])?.offset == 10)
    #expect(bindError("rating BETWEEN %@", [1])?.offset == 15)
}

@Test func unsupportedArgumentIsAnErrorNotATrap() {
    let predicate = FetchPredicate(format: "rating == 1 AND name == %@", URL(fileURLWithPath: "/tmp"))
    #expect(throws: FetchPredicateError.self) { try predicate.validate(against: journal) }
    #expect(bindError("name == %@", URL(fileURLWithPath: "/tmp"))?.offset == 8)
    #expect(bindError("rating == %@", UInt64.max)?.offset == 10)
    #expect(bindError("height == %@", Double.nan)?.offset == 10)
    #expect(bindError("date == %@", Date(timeIntervalSince1970: .nan))?.offset == 8)
}

@Test func argumentCountMustMatchPlaceholders() {
    #expect(bindError("rating == %@ OR rating == %@", 1)?.offset == 26)
    #expect(bindError("rating == %@", 1, 2)?.offset == 12)
}

// MARK: - Operators

@Test func comparisonOperatorsOnIntegers() throws {
    let rows = [entry(rating: 1), entry(rating: 3), entry(rating: 5), entry()]
    try expectMatches(FetchPredicate(format: "rating == 3"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "rating = 3"), in: rows, [1])
    // A nil rating is not 3 (store guarantee 63; these matched [0, 2] under the older rule).
    try expectMatches(FetchPredicate(format: "rating != 3"), in: rows, [0, 2, 3])
    try expectMatches(FetchPredicate(format: "rating <> 3"), in: rows, [0, 2, 3])
    try expectMatches(FetchPredicate(format: "rating != 3").nilMatching(.onlyNilTests), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating < 3"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating <= 3"), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "rating =< 3"), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "rating > 3"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "rating >= 3"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "rating => 3"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "rating > 2.5"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "rating > -1e1"), in: rows, [0, 1, 2])
}

@Test func literalOnTheLeftFlipsTheComparison() throws {
    let rows = [entry(rating: 1), entry(rating: 3), entry(rating: 5)]
    try expectMatches(FetchPredicate(format: "3 < rating"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "3 >= rating"), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "%@ == rating", 5), in: rows, [2])
    #expect(bindError("'a' BEGINSWITH name")?.offset == 0)
}

@Test func stringOperators() throws {
    let rows = [entry("Sunny beach"), entry("beach day"), entry("Beach"), entry(""), entry()]
    try expectMatches(FetchPredicate(format: "name BEGINSWITH 'beach'"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "name ENDSWITH 'beach'"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "name CONTAINS 'each'"), in: rows, [0, 1, 2])
    try expectMatches(FetchPredicate(format: "name CONTAINS ''"), in: rows, [0, 1, 2, 3])
    try expectMatches(FetchPredicate(format: "name LIKE '*beach*'"), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "name like 'B?ach'"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "name LIKE ''"), in: rows, [3])
}

@Test func likeWildcardsMatchWholeCharacters() throws {
    let rows = [
        entry("👨‍👩‍👧"), entry("Cafe\u{301}"), entry("Caf\u{E9}"), entry("a%b"), entry("a_b"), entry("axb"), entry("ab"),
        entry("a*b"),
    ]
    try expectMatches(FetchPredicate(format: "name LIKE '?'"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "name LIKE 'Caf?'"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "name LIKE 'a?b'"), in: rows, [3, 4, 5, 7])
    try expectMatches(FetchPredicate(format: "name LIKE 'a%b'"), in: rows, [3])
    try expectMatches(FetchPredicate(format: "name LIKE 'a_b'"), in: rows, [4])
    try expectMatches(FetchPredicate(format: "name LIKE 'a*b'"), in: rows, [3, 4, 5, 6, 7])
    try expectMatches(FetchPredicate(format: "name LIKE '**b'"), in: rows, [3, 4, 5, 6, 7])
}

@Test func modifiersFoldCaseAndDiacritics() throws {
    let rows = [entry("Sunny beach"), entry("Café"), entry("CAFE"), entry("Cafe\u{301}"), entry("cafe")]
    try expectMatches(FetchPredicate(format: "name CONTAINS[c] 'BEACH'"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "name CONTAINS 'BEACH'"), in: rows, [])
    try expectMatches(FetchPredicate(format: "name ==[cd] 'cafe'"), in: rows, [1, 2, 3, 4])
    try expectMatches(FetchPredicate(format: "name ==[c] 'cafe'"), in: rows, [2, 4])
    try expectMatches(FetchPredicate(format: "name ==[d] 'Cafe'"), in: rows, [1, 3])
    try expectMatches(FetchPredicate(format: "name BEGINSWITH[cd] 'CAFE'"), in: rows, [1, 2, 3, 4])
    try expectMatches(FetchPredicate(format: "name ENDSWITH[D] 'e'"), in: rows, [1, 3, 4])
    try expectMatches(FetchPredicate(format: "name LIKE[cd] 'c?f?'"), in: rows, [1, 2, 3, 4])
    try expectMatches(FetchPredicate(format: "name IN[c] {'CAFÉ', 'x'}"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "name BETWEEN[cd] {'CAFE', 'cafe'}"), in: rows, [1, 2, 3, 4])
}

@Test func stringsCompareByUTF8Bytes() throws {
    let rows = [entry("Caf\u{E9}"), entry("Cafe\u{301}"), entry("Z"), entry("a"), entry("é")]
    // Swift's == calls these equal (canonical equivalence); SQLite's BINARY does not.
    try expectMatches(FetchPredicate(format: "name == 'Caf\u{E9}'"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "name > 'Z'"), in: rows, [3, 4])
    try expectMatches(FetchPredicate(format: "name > 'a'"), in: rows, [4])
    try expectMatches(FetchPredicate(format: "name ENDSWITH 'e'"), in: rows, [])
}

@Test func keywordsAreCaseInsensitiveAndSymbolsWork() throws {
    let rows = [entry(rating: 1, favorite: true), entry(rating: 2, favorite: false), entry(rating: 3)]
    try expectMatches(FetchPredicate(format: "rating == 1 or rating == 3"), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating == 1 || rating == 3"), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating > 1 and not rating == 3"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "rating > 1 && !(rating == 3)"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "favorite == yes"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating BetWeen {2, 3}"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "TRUEPREDICATE"), in: rows, [0, 1, 2])
    try expectMatches(FetchPredicate(format: "falsepredicate"), in: rows, [])
}

@Test func escapedNamesAndStringEscapes() throws {
    let rows = [entry("O'Brien"), entry("say \"hi\""), entry("back\\slash"), entry("two\nlines"), entry("tab\there")]
    try expectMatches(FetchPredicate(format: "name == 'O\\'Brien'"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "#name == \"O'Brien\""), in: rows, [0])
    try expectMatches(FetchPredicate(format: "name CONTAINS \"\\\"\""), in: rows, [1])
    try expectMatches(FetchPredicate(format: "name CONTAINS '\\\\'"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "name CONTAINS '\\n' OR name CONTAINS '\\t'"), in: rows, [3, 4])
}

// MARK: - Logic and nulls

@Test func notBindsTighterThanAndTighterThanOr() throws {
    let rows = (0..<8).map { bits in
        [StoreValue.null, .null, .integer(bits & 1 == 0 ? 1 : 0), .real(bits & 2 == 0 ? 2 : 0), .integer(bits & 4 == 0 ? 1 : 0), .null]
    }
    func expected(_ rule: (Bool, Bool, Bool) -> Bool) -> Set<Int> {
        Set((0..<8).filter { rule($0 & 1 == 0, $0 & 2 == 0, $0 & 4 == 0) })
    }
    try expectMatches(
        FetchPredicate(format: "rating == 1 OR height == 2 AND favorite == 1"), in: rows, expected { a, b, c in a || (b && c) })
    try expectMatches(
        FetchPredicate(format: "(rating == 1 OR height == 2) AND favorite == 1"), in: rows, expected { a, b, c in (a || b) && c })
    try expectMatches(
        FetchPredicate(format: "NOT rating == 1 AND height == 2"), in: rows, expected { a, b, _ in !a && b })
    try expectMatches(
        FetchPredicate(format: "NOT (rating == 1 AND height == 2)"), in: rows, expected { a, b, _ in !(a && b) })
    try expectMatches(
        FetchPredicate(format: "rating == 1 AND height == 2 OR NOT favorite == 1 AND rating == 0"), in: rows,
        expected { a, b, c in (a && b) || (!c && !a) })
}

/// NSPredicate's meaning of nil (store guarantee 63): `!=` a value matches a null.
@Test func aNullAttributeHasNSPredicatesMeaningOfNil() throws {
    let rows = [entry(rating: 5), entry(rating: 4), entry()]
    try expectMatches(FetchPredicate(format: "rating == 5"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating != 5"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "rating < 5"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "NOT (rating == 5)"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "NOT rating != 5"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating == NIL"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "rating != nil"), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "name !=[c] 'X'"), in: rows, [0, 1, 2])
    try expectMatches(FetchPredicate(format: "NOT (name CONTAINS '')"), in: rows, [0, 1, 2])
}

/// The older rule (`.onlyNilTests`, pipeline files of versions 1–3): a null attribute matches
/// only `== NIL` and `!= NIL`. (These assertions were the default's before store guarantee 63.)
@Test func nullAttributeMatchesOnlyNilComparisonsUnderTheOlderRule() throws {
    let rows = [entry(rating: 5), entry(rating: 4), entry()]
    try expectMatches(FetchPredicate(format: "rating == 5").nilMatching(.onlyNilTests), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating != 5").nilMatching(.onlyNilTests), in: rows, [1])
    try expectMatches(FetchPredicate(format: "rating < 5").nilMatching(.onlyNilTests), in: rows, [1])
    try expectMatches(FetchPredicate(format: "NOT (rating == 5)").nilMatching(.onlyNilTests), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "NOT rating != 5").nilMatching(.onlyNilTests), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating == NIL").nilMatching(.onlyNilTests), in: rows, [2])
    try expectMatches(FetchPredicate(format: "rating == null").nilMatching(.onlyNilTests), in: rows, [2])
    try expectMatches(FetchPredicate(format: "rating != nil").nilMatching(.onlyNilTests), in: rows, [0, 1])
    try expectMatches(FetchPredicate(format: "NIL == rating").nilMatching(.onlyNilTests), in: rows, [2])
    try expectMatches(FetchPredicate(format: "rating == %@", nil).nilMatching(.onlyNilTests), in: rows, [2])
    try expectMatches(FetchPredicate(format: "NOT (name CONTAINS '')").nilMatching(.onlyNilTests), in: rows, [0, 1, 2])
    try expectMatches(FetchPredicate(format: "NOT name LIKE '*'").nilMatching(.onlyNilTests), in: rows, [0, 1, 2])
    try expectMatches(FetchPredicate(format: "NOT name ==[c] 'x'").nilMatching(.onlyNilTests), in: rows, [0, 1, 2])
}

@Test func inMatchesListMembersAndNil() throws {
    let rows = [entry(rating: 1), entry(rating: 2), entry(rating: 3), entry()]
    try expectMatches(FetchPredicate(format: "rating IN {1, 3}"), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating IN {1, NIL}"), in: rows, [0, 3])
    try expectMatches(FetchPredicate(format: "NOT rating IN {1, NIL}"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "NOT rating IN {1}"), in: rows, [1, 2, 3])
    try expectMatches(FetchPredicate(format: "rating IN {}"), in: rows, [])
    try expectMatches(FetchPredicate(format: "rating IN {NIL}"), in: rows, [3])
    try expectMatches(FetchPredicate(format: "rating IN {2.0}"), in: rows, [1])
}

@Test func betweenIncludesBothEnds() throws {
    let rows = [entry(height: 0.9), entry(height: 1), entry(height: 1.5), entry(height: 2), entry(height: 2.1), entry()]
    try expectMatches(FetchPredicate(format: "height BETWEEN {1, 2}"), in: rows, [1, 2, 3])
    try expectMatches(FetchPredicate(format: "height BETWEEN {2, 1}"), in: rows, [])
    try expectMatches(FetchPredicate(format: "NOT height BETWEEN {1, 2}"), in: rows, [0, 4, 5])
    try expectMatches(FetchPredicate(format: "height BETWEEN %@", [1.5, 2.1]), in: rows, [2, 3, 4])
}

// MARK: - Types

@Test func booleansCompareWithOneAndZero() throws {
    let rows = [entry(favorite: true), entry(favorite: false), entry()]
    try expectMatches(FetchPredicate(format: "favorite == TRUE"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "favorite == NO"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "favorite == 1"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "favorite != false"), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "favorite == %@", false), in: rows, [1])
}

@Test func datesCompareWithISOLiteralsByTime() throws {
    let rows = [
        entry(date: mayFirstDawn - 1), entry(date: mayFirstDawn), entry(date: mayFirstDawn + 0.5),
        entry(date: mayFirstDawn - 6.5 * 3600), entry(),
    ]
    try expectMatches(FetchPredicate(format: "date == '2024-05-01T06:30:00Z'"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "date == '2024-05-01T08:30:00+02:00'"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "date == '2024-05-01T01:30:00-0500'"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "date == '2024-05-01T06:30:00.5Z'"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "date == '2024-05-01'"), in: rows, [3])
    try expectMatches(FetchPredicate(format: "date > '2024-05-01T06:29:59.999Z'"), in: rows, [1, 2])
    try expectMatches(FetchPredicate(format: "date BETWEEN {'2024-05-01', '2024-05-01T06:30:00Z'}"), in: rows, [0, 1, 3])
    try expectMatches(FetchPredicate(format: "date == %@", Date(timeIntervalSince1970: mayFirstDawn)), in: rows, [1])
    try expectMatches(FetchPredicate(format: "date == %@", "2024-05-01T06:30:00Z"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "date < \(Int(mayFirstDawn))"), in: rows, [0, 3])
}

@Test func integersAndDoublesCompareExactlyAtTheEdges() throws {
    let rows = [
        entry(rating: 9_007_199_254_740_993), entry(rating: 9_007_199_254_740_992), entry(rating: .max),
        entry(rating: .min), entry(height: 9_007_199_254_740_992),
    ]
    try expectMatches(FetchPredicate(format: "rating > 9007199254740992.0"), in: rows, [0, 2])
    try expectMatches(FetchPredicate(format: "rating == 9007199254740992.0"), in: rows, [1])
    try expectMatches(FetchPredicate(format: "rating < 9223372036854775807.0"), in: rows, [0, 1, 2, 3])
    try expectMatches(FetchPredicate(format: "rating <= -9223372036854775808.0"), in: rows, [3])
    try expectMatches(FetchPredicate(format: "rating == 9223372036854775807"), in: rows, [2])
    try expectMatches(FetchPredicate(format: "height < 9007199254740993"), in: rows, [4])
    try expectMatches(FetchPredicate(format: "rating > 1e300"), in: rows, [])
}

// MARK: - Arguments, identity, SQL

@Test func placeholdersTakeArgumentsInOrder() throws {
    let rows = [entry("Pier", rating: 4), entry("pier", rating: 2), entry("Reef", rating: 5), entry(rating: 1)]
    try expectMatches(
        FetchPredicate(format: "rating >= %@ AND name CONTAINS[c] %@", 3, "pier"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating IN %@", [1, 5]), in: rows, [2, 3])
    try expectMatches(FetchPredicate(format: "name IN %@", ["Reef", nil] as [String?]), in: rows, [2, 3])
    try expectMatches(FetchPredicate(format: "%K == %@", "name", "Pier"), in: rows, [0])
    try expectMatches(FetchPredicate(format: "rating == %@", Int16(2)), in: rows, [1])
    try expectMatches(FetchPredicate(format: "rating < %@", Float(1.5)), in: rows, [3])
    try expectMatches(FetchPredicate(format: "rating IN %@", [Int]()), in: rows, [])
    try expectMatches(FetchPredicate(format: "name == %@", Optional<String>.none as Any), in: rows, [3])
    try expectMatches(FetchPredicate(format: "name == %@", "it's %@"), in: rows, [])
    try expectMatches(FetchPredicate(format: "rating >= %@", argumentArray: [4]), in: rows, [0, 2])
}

@Test func predicatesAreEqualByFormatAndArguments() {
    let a = FetchPredicate(format: "rating >= %@ AND name == %@", 3, "x")
    let b = FetchPredicate(format: "rating >= %@ AND name == %@", 3, "x")
    let c = FetchPredicate(format: "rating >= %@ AND name == %@", 4, "x")
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a != c)
    #expect(FetchPredicate(format: "rating IN %@", [1, 2]) != FetchPredicate(format: "rating IN %@", [1, 3]))
    #expect(Set([a, b, c]).count == 2)
    #expect(a.description == "rating >= %@ AND name == %@")
}

@Test func boundPredicateReportsAttributesAndSQL() throws {
    let bound = try FetchPredicate(format: "rating >= %@ AND (name CONTAINS[c] 'x' OR date == NIL)", 3).bind(to: journal)
    #expect(bound.attributeNames == ["rating", "name", "date"])
    let (clause, arguments) = bound.sql(SQLiteDialect())
    #expect(clause.contains("\"rating\" >= ?"))
    #expect(clause.contains("\"date\" IS NULL"))
    #expect(arguments == [.integer(3), .text("x")])
}

@Test func sqlFunctionsMatchTheSwiftFunctions() throws {
    let connection = try SQLiteConnection(path: ":memory:")
    let rows = try connection.query(
        "SELECT swell_fold('Café', 3), swell_fold(NULL, 1), swell_like('Straße', 'STR?SSE', 1), swell_like(NULL, '*', 0), "
            + "swell_strop(3, 'Sunny beach', 'BEACH', 1), swell_strop(1, 5, '5', 0)", [])
    // Case folding turns ß into ss, in SQL as in memory.
    #expect(rows == [[.text("cafe"), .null, .integer(1), .null, .integer(1), .null]])
    #expect(PredicateFunctions.fold("Café", [.caseInsensitive, .diacriticInsensitive]) == "cafe")
    #expect(PredicateFunctions.like("Straße", "STR?SSE", .caseInsensitive))
    #expect(PredicateFunctions.like("Straße", "str?ße", []) == false)
    #expect(PredicateFunctions.like("Straße", "Stra?e", []))
}

// MARK: - SQL and memory agree

/// Sixty rows mixing nulls, accents (composed and decomposed), emoji, CJK,
/// quotes, wildcard characters, negative and huge numbers, and repeated values.
private let variedRows: [[StoreValue]] = {
    let names: [String?] = [
        "Café", "cafe", "CAFÉ", "Cafe\u{301}", "café au lait", "Sunny beach", "SUNNY BEACH", "beach", "", "O'Brien",
        "say \"hi\"", "🏄‍♀️ surf", "surf 🏄", "東京", "東京タワー", "Zürich", "zurich", "a*b", "a?b", "100%", "snake_case",
        "naïve", "Ångström", nil, "straße", "STRASSE", "ab", "abc", "Ab", "👨‍👩‍👧", "x", "X", "a\nb", nil, "Café",
        "z", "Z", "éclair", "Éclair", "beach",
    ]
    let locations: [String?] = [
        "North Beach", "south shore", "Beach Café", nil, "Pier", "pier", "Reef", "Point Break", "Malibu", "東京湾", "",
        "PIER 39",
    ]
    let ratings: [Int64?] = [
        nil, 0, 1, 2, 3, 4, 5, -1, -42, .max, .min, 9_007_199_254_740_993, 9_007_199_254_740_992, 3, 3, nil, 5,
    ]
    let heights: [Double?] = [
        nil, 0, -0.0, 0.1, 2.5, 3, -1.5, 1e300, -1e300, 1, 0.30000000000000004, 9_007_199_254_740_992, 2.5,
    ]
    let favorites: [Bool?] = [nil, true, false, true]
    let dates: [Double?] = [
        nil, mayFirstDawn, mayFirstDawn - 6.5 * 3600, mayFirstDawn + 0.5, mayFirstDawn - 1, 0, -86_400,
        mayFirstDawn + 86_400, 1e10, mayFirstDawn,
    ]
    return (0..<60).map { i in
        entry(
            names[i % names.count], location: locations[(i * 7 + 3) % locations.count],
            rating: ratings[(i * 5 + 1) % ratings.count], height: heights[(i * 3 + 2) % heights.count],
            favorite: favorites[(i / 2) % favorites.count], date: dates[(i * 11 + 4) % dates.count])
    }
}()

private let variedPredicates: [FetchPredicate] = [
    FetchPredicate(format: "rating == 3"),
    FetchPredicate(format: "rating != 3"),
    FetchPredicate(format: "rating < 0"),
    FetchPredicate(format: "rating >= 9007199254740992.0"),
    FetchPredicate(format: "rating == 9007199254740992.0"),
    FetchPredicate(format: "5 < rating"),
    FetchPredicate(format: "height <= 0"),
    FetchPredicate(format: "height == 3 OR height == 0"),
    FetchPredicate(format: "height BETWEEN {-1.5, 2.5}"),
    FetchPredicate(format: "rating BETWEEN {0, 3}"),
    FetchPredicate(format: "rating IN {1, 3, NIL}"),
    FetchPredicate(format: "NOT rating IN {1, 3}"),
    FetchPredicate(format: "rating IN %@", [5, nil, -42]),
    FetchPredicate(format: "name == 'Café'"),
    FetchPredicate(format: "name != 'Café'"),
    FetchPredicate(format: "name ==[cd] 'cafe'"),
    FetchPredicate(format: "name ==[c] 'café'"),
    FetchPredicate(format: "name <[c] 'm'"),
    FetchPredicate(format: "name > 'Z'"),
    FetchPredicate(format: "name BETWEEN {'a', 'z'}"),
    FetchPredicate(format: "name BEGINSWITH 'caf'"),
    FetchPredicate(format: "name BEGINSWITH[cd] 'CAF'"),
    FetchPredicate(format: "name ENDSWITH 'é'"),
    FetchPredicate(format: "name ENDSWITH[d] 'e'"),
    FetchPredicate(format: "name CONTAINS ''"),
    FetchPredicate(format: "name CONTAINS[c] 'BEACH'"),
    FetchPredicate(format: "name CONTAINS '🏄' OR name CONTAINS '東京'"),
    FetchPredicate(format: "name CONTAINS[cd] 'ECLAIR'"),
    FetchPredicate(format: "name LIKE '*'"),
    FetchPredicate(format: "name LIKE '?'"),
    FetchPredicate(format: "name LIKE 'a?b'"),
    FetchPredicate(format: "name LIKE[c] 's*'"),
    FetchPredicate(format: "name LIKE '*%*' OR name LIKE '*_*'"),
    FetchPredicate(format: "name LIKE[cd] '??'"),
    FetchPredicate(format: "name IN[c] {'x', 'cafe', 'straße'}"),
    FetchPredicate(format: "name == 'O\\'Brien' OR name CONTAINS \"\\\"\""),
    FetchPredicate(format: "favorite == TRUE"),
    FetchPredicate(format: "NOT favorite == TRUE"),
    FetchPredicate(format: "favorite == nil OR favorite == 0"),
    FetchPredicate(format: "date > '2024-05-01'"),
    FetchPredicate(format: "date BETWEEN {'2024-04-30T23:59:59Z', '2024-05-01T08:30:00+02:00'}"),
    FetchPredicate(format: "date < 0"),
    FetchPredicate(format: "date == %@", Date(timeIntervalSince1970: mayFirstDawn)),
    FetchPredicate(format: "rating > 2 AND height > 0 OR name == nil"),
    FetchPredicate(format: "!(rating > 2 && height > 0) || location CONTAINS[cd] 'cafe'"),
    FetchPredicate(format: "location == nil OR NOT name != nil"),
    FetchPredicate(format: "NOT (rating == 5)"),
    FetchPredicate(format: "location BEGINSWITH[c] %@ AND NOT favorite == FALSE", "pier"),
    FetchPredicate(format: "height != 0"),
    FetchPredicate(format: "rating <= -9223372036854775808.0 OR rating > 1e18"),
    FetchPredicate(format: "TRUEPREDICATE AND NOT FALSEPREDICATE AND location != ''"),
]

@Test func sqlAndMemoryAgreeOnVariedRows() throws {
    let table = try JournalTable(variedRows)
    #expect(table.rows.count == 60)
    var distinctResults = Set<Set<Int>>()
    for predicate in variedPredicates {
        let bound = try predicate.bind(to: journal)
        let sql = try table.sqlMatches(bound)
        #expect(sql == table.memoryMatches(bound), "\(predicate)")
        distinctResults.insert(sql)
    }
    // The predicates exercise the data: most select different, non-trivial sets of rows.
    #expect(distinctResults.count >= variedPredicates.count * 3 / 4)
}

/// `variedRows` with a `seq` key: distinct integers at the edges (the largest and smallest,
/// 2^53 and 2^53 + 1, negatives), ten equal to their row's index (their ID is their key).
private let keyedRows: [[StoreValue]] = {
    let edges: [Int64] = [.max, .min, 9_007_199_254_740_993, 9_007_199_254_740_992, -1, 0, 3, 5, -42, 1_000_000_000_000_000_001]
    return variedRows.enumerated().map { index, row in
        let seq = index < edges.count ? edges[index] : (index < 20 ? Int64(index) : Int64(index) * 1000 + 7)
        var keyed = row
        keyed.insert(.integer(seq), at: 2)
        return keyed
    }
}()

private let keyPredicates: [FetchPredicate] = [
    FetchPredicate(format: "seq == 3"),
    FetchPredicate(format: "seq != 3"),
    FetchPredicate(format: "seq < 0"),
    FetchPredicate(format: "seq >= 9007199254740992.0"),
    FetchPredicate(format: "seq == 9007199254740992.0"),
    FetchPredicate(format: "seq > 9007199254740992.0"),
    FetchPredicate(format: "seq BETWEEN {0, 19}"),
    FetchPredicate(format: "seq IN {1, 3, NIL}"),
    FetchPredicate(format: "NOT seq IN {1, 3}"),
    FetchPredicate(format: "seq IN %@", [5, 10, 11, -42]),
    FetchPredicate(format: "seq == nil"),
    FetchPredicate(format: "seq != nil"),
    FetchPredicate(format: "seq > 1e18"),
    FetchPredicate(format: "seq >= 9.3e18 OR seq < -9.3e18"),
    FetchPredicate(format: "seq <= -9223372036854775808.0"),
    FetchPredicate(format: "seq == 2.5 OR seq > 2.5 AND seq < 10.5"),
    FetchPredicate(format: "seq < -0.5"),
    FetchPredicate(format: "seq > 10 AND seq < 10008"),
    FetchPredicate(format: "seq == 19 OR rating == 3"),
    FetchPredicate(format: "seq != nil AND name == nil"),
]

@Test func sqlAndMemoryAgreeOnAnEntityWhoseKeyIsTheRowid() throws {
    let table = try JournalTable(keyedRows, entity: keyedJournal)
    #expect(table.rows.count == 60)
    #expect(try table.connection.query("SELECT count(*) FROM KeyedEntry WHERE _pk IS NULL", []) == [[.integer(10)]])
    var distinctResults = Set<Set<Int>>()
    for predicate in keyPredicates + variedPredicates {
        let bound = try predicate.bind(to: keyedJournal)
        let sql = try table.sqlMatches(bound)
        #expect(sql == table.memoryMatches(bound), "\(predicate)")
        distinctResults.insert(sql)
    }
    #expect(distinctResults.count >= (keyPredicates.count + variedPredicates.count) * 3 / 4)
}

/// Fetches through a store agree with the in-memory rule (sort descriptors, then the rowid
/// key, then the ID) whether the rows come from SQL alone or from SQL and unsaved changes.
@Test(.onEveryStore) func storeFetchesOrderLikeTheInMemoryPathForAnEntityWhoseKeyIsTheRowid() async throws {
    let directory = TemporaryDirectory()
    let model = ManagedObjectModel(entities: [keyedJournal])
    let container = try makeContainer(directory, name: "keyed", model: model)
    container.viewContext.mergePolicy = .objectTrump
    let worker = container.newBackgroundContext()
    try await worker.perform {
        // Keys taken as IDs (insertRow), and objects whose IDs run against their keys (API inserts).
        for row in keyedRows.prefix(40) { worker.insertRow(entity: keyedJournal, values: row) }
        for (offset, row) in keyedRows.suffix(20).enumerated() {
            let object = worker.insertNewObject(forEntityName: "KeyedEntry")
            for (index, attribute) in keyedJournal.attributes.enumerated() where !row[index].isNull {
                object[attribute.name] = row[index].swiftValue(for: attribute.type)
            }
            object["seq"] = -1000 - offset
        }
        try worker.save()
    }
    try await container.saveToDisk()
    let child = container.newBackgroundContext()
    try await child.perform {
        // Unsaved: new objects, changed ratings and names (sort keys), a changed key, deletions.
        let all = try child.fetch(FetchRequest(entityName: "KeyedEntry"))
        for (index, object) in all.enumerated() {
            switch index % 7 {
            case 0: object["rating"] = 3
            case 1: object["name"] = "Café"
            case 2: child.delete(object)
            default: break
            }
        }
        all[5]["seq"] = 123_456
        for number in 0..<6 {
            let object = child.insertNewObject(forEntityName: "KeyedEntry")
            object["seq"] = 50_000 + number
            object["rating"] = number % 3
            object["name"] = number % 2 == 0 ? "Café" : nil
        }
    }
    let seqIndex = keyedJournal.attributes.firstIndex { $0.name == "seq" }!
    let sorts: [[FetchSortDescriptor]] = [
        [], [FetchSortDescriptor(key: "rating")], [FetchSortDescriptor(key: "rating", ascending: false)],
        [FetchSortDescriptor(key: "name"), FetchSortDescriptor(key: "favorite", ascending: false)], [FetchSortDescriptor(key: "seq", ascending: false)],
    ]
    let predicates: [FetchPredicate?] = [nil, FetchPredicate(format: "rating >= 2 OR seq < 0"), FetchPredicate(format: "name ==[cd] 'cafe'")]
    let windows: [(limit: Int, offset: Int)] = [(0, 0), (5, 0), (7, 11)]
    for context in [container.viewContext, child] {
        try await context.perform {
            for sort in sorts {
                for predicate in predicates {
                    // Everything the context sees, ordered by the in-memory rule.
                    var everything = FetchRequest(entityName: "KeyedEntry")
                    everything.predicate = predicate
                    let sortIndices = sort.map { descriptor in (keyedJournal.attributes.firstIndex { $0.name == descriptor.key }!, descriptor.ascending) }
                    let expected = try context.fetch(everything).map { object in
                        (object.objectID, keyedJournal.attributes.map { StoreValue(swiftValue: object.value(forKey: $0.name), for: $0.type) ?? .null })
                    }
                        .sorted { lhs, rhs in
                            for (index, ascending) in sortIndices {
                                let order = StoreValue.compare(lhs.1[index], rhs.1[index])
                                if order != 0 { return ascending ? order < 0 : order > 0 }
                            }
                            let order = StoreValue.compare(lhs.1[seqIndex], rhs.1[seqIndex])
                            return order != 0 ? order < 0 : lhs.0.primaryKey < rhs.0.primaryKey
                        }
                        .map(\.0)
                    for window in windows {
                        var request = everything
                        request.sortDescriptors = sort
                        request.fetchLimit = window.limit
                        request.fetchOffset = window.offset
                        let fetched = try context.fetch(request).map(\.objectID)
                        let start = min(window.offset, expected.count)
                        let end = window.limit > 0 ? min(expected.count, start + window.limit) : expected.count
                        #expect(fetched == Array(expected[start..<end]), "\(sort.map(\.key)) \(predicate?.description ?? "-") \(window)")
                    }
                }
            }
        }
    }
}
