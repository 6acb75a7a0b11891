import Foundation
@testable import SwellSQLite
import SwellStore
import SwellStoreCore
import SwellTestSupport
import Testing
import SwellStoreTestSupport

/// Store guarantee 63, case by case: what nil means in a predicate (NSPredicate's meaning by
/// default, the older rule on request), and `SELF`, on every store, for unsaved objects and
/// saved ones. The journal: entry 0 ("1 ft", rating 3, at Pacifica, tagged glassy), entry 1
/// (no height, rating, spot or tags) and entry 2 ("2 ft", rating 5, at Linda Mar whose latitude
/// is nil, tagged glassy and windy). Glassy's `all` is nil, windy's 2.
@Suite(.onEveryStore) struct PredicateNilTests {
    /// The journal in a fresh store, with `body` run on its context before and after the save.
    private func withJournal(_ body: (ManagedObjectContext, [JournalEntry], String) throws -> Void) throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "nils", model: typedModel)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let pacifica = Spot(name: "Pacifica", latitude: 1), lindaMar = Spot(name: "Linda Mar")
            let glassy = Tag(label: "glassy"), windy = Tag(label: "windy")
            windy.all = 2
            let entries = [JournalEntry(id: 0, date: Date(timeIntervalSince1970: 0), height: "1 ft", rating: 3),
                           JournalEntry(id: 1, date: Date(timeIntervalSince1970: 1)),
                           JournalEntry(id: 2, date: Date(timeIntervalSince1970: 2), height: "2 ft", rating: 5)]
            entries.forEach(context.insert)
            entries[0].spot = pacifica
            entries[0].tags = [glassy]
            entries[2].spot = lindaMar
            entries[2].tags = [glassy, windy]
            try body(context, entries, "unsaved")
            try context.save()
            try body(context, entries, "saved")
        }
    }

    private func ids(_ predicate: FetchPredicate, in context: ManagedObjectContext) throws -> Set<Int> {
        var request = FetchRequest(entityName: "JournalEntry")
        request.predicate = predicate
        return Set(try context.fetch(request).compactMap { $0.model(as: JournalEntry.self)?.id })
    }

    private func expect(_ cases: [(String, [Any?], Set<Int>)], nilMatching: FetchPredicate.NilMatching = .nsPredicate,
                        in context: ManagedObjectContext, _ stage: String) throws {
        for (format, arguments, expected) in cases {
            let predicate = FetchPredicate(format: format, argumentArray: arguments).nilMatching(nilMatching)
            #expect(try ids(predicate, in: context) == expected, "\(stage): \(format)")
        }
    }

    @Test func theBugReportsPredicateMatchesTheNilInBothForms() throws {
        try withJournal { context, _, stage in
            let typed = Set(try context.fetch(FetchDescriptor(predicate: #Predicate<JournalEntry> { $0.height != "1 ft" })).map(\.id))
            let format = try ids(FetchPredicate(format: "height != %@", "1 ft"), in: context)
            #expect(typed == [1, 2], "\(stage)")
            #expect(format == typed, "\(stage)")
        }
    }

    @Test func comparisonsOfANilAttribute() throws {
        try withJournal { context, _, stage in
            try expect([
                ("height != '1 ft'", [], [1, 2]), ("NOT (height == '1 ft')", [], [1, 2]), ("height <> %@", ["2 ft"], [0, 1]),
                ("height == nil", [], [1]), ("height != NIL", [], [0, 2]), ("height == %@", [nil], [1]), ("%@ != height", [nil], [0, 2]),
                ("height IN {'1 ft', nil}", [], [0, 1]), ("height IN %@", [["1 ft"]], [0]), ("NOT (height IN {'1 ft'})", [], [1, 2]),
                ("NOT (height IN {'1 ft', NIL})", [], [2]),
                ("rating < 4", [], [0]), ("NOT (rating < 4)", [], [1, 2]), ("rating >= %@", [3], [0, 2]),
                ("rating < NIL", [], []), ("NOT (rating <= %@)", [nil], [0, 1, 2]),
                ("rating BETWEEN {1, 4}", [], [0]), ("NOT (rating BETWEEN {1, 4})", [], [1, 2]), ("rating BETWEEN %@", [[nil, 4]], []),
                ("rating != 3 AND rating != 5", [], [1]), ("rating == 3 OR height == nil", [], [0, 1]),
            ], in: context, stage)
        }
    }

    @Test func stringOperatorsOnANilAttributeAreFalseAndTheirNotTrue() throws {
        try withJournal { context, _, stage in
            try expect([
                ("height BEGINSWITH '1'", [], [0]), ("NOT (height BEGINSWITH '1')", [], [1, 2]),
                ("height CONTAINS[c] 'FT'", [], [0, 2]), ("NOT (height CONTAINS[c] 'FT')", [], [1]),
                ("height ENDSWITH[cd] 'FT'", [], [0, 2]), ("height LIKE '?*'", [], [0, 2]), ("NOT (height LIKE '*')", [], [1]),
                ("height BEGINSWITH %@", [nil], []), ("NOT (height CONTAINS %@)", [nil], [0, 1, 2]),
                ("height != 'X' AND NOT (height ==[c] '1 FT')", [], [1, 2]),
            ], in: context, stage)
        }
    }

    @Test func aKeyPathThroughANilToOneReadsNil() throws {
        try withJournal { context, _, stage in
            try expect([
                ("spot.name != 'Pacifica'", [], [1, 2]), ("spot.name == nil", [], [1]), ("spot.name != nil", [], [0, 2]),
                ("spot.latitude == nil", [], [1, 2]), ("spot.latitude != 1.0", [], [1, 2]), ("spot.latitude > 0", [], [0]),
                ("NOT (spot.latitude > 0)", [], [1, 2]), ("spot.name BEGINSWITH 'P'", [], [0]), ("NOT (spot.name BEGINSWITH 'P')", [], [1, 2]),
                ("spot.name IN {'Pacifica', nil}", [], [0, 1]), ("spot == nil", [], [1]),
                ("spot.entries.@count != 1", [], [1]), ("spot.entries.@count == 1", [], [0, 2]),
                ("ALL spot.entries.rating == 3", [], [0, 1]), ("ANY spot.entries.rating == 3", [], [0]),
                ("NONE spot.entries.rating == 5", [], [0, 1]),
            ], in: context, stage)
        }
    }

    @Test func quantifiersAndCountsOnAToMany() throws {
        try withJournal { context, _, stage in
            try expect([
                ("ANY tags.label == 'windy'", [], [2]), ("ALL tags.label == 'glassy'", [], [0, 1]), ("NONE tags.label == 'glassy'", [], [1]),
                ("ANY tags.all != 2", [], [0, 2]), ("ANY tags.all == nil", [], [0, 2]), ("ALL tags.all != 2", [], [0, 1]),
                ("ANY tags.all > 1", [], [2]), ("NOT (ANY tags.all > 1)", [], [0, 1]), ("tags.@count == 0", [], [1]),
            ], in: context, stage)
        }
    }

    @Test func selfComparesTheObjectWithObjectsAndIDs() throws {
        try withJournal { context, entries, stage in
            let (first, last) = (entries[0], entries[2])
            try expect([
                ("SELF == %@", [first], [0]), ("SELF == %@", [first.managedObject], [0]), ("SELF != %@", [first.objectID], [1, 2]),
                ("%@ == SELF", [last], [2]), ("self == %@", [last.objectID], [2]),
                ("SELF IN %@", [[first, last]], [0, 2]), ("SELF IN %@", [Set([first.objectID, last.objectID])], [0, 2]),
                ("SELF IN %@", [[first.managedObject, nil]], [0]), ("NOT (SELF IN %@)", [[first.objectID]], [1, 2]),
                ("SELF IN %@", [[ObjectID]()], []), ("SELF == nil", [], []), ("SELF != nil", [], [0, 1, 2]),
                ("SELF == %@", [first.spot], []), ("SELF != %@ AND rating == 5", [first], [2]),
                ("SELF.height == '1 ft'", [], [0]), ("spot == %@", [first.spot], [0]), ("spot IN %@", [[last.spot?.objectID]], [2]),
            ], in: context, stage)
        }
    }

    @Test func selfTakesOnlyObjectsAndEquality() {
        for (format, arguments) in [("SELF == 3", []), ("SELF BEGINSWITH 'x'", []), ("SELF < %@", [ObjectID?.none]), ("ANY SELF == 3", [])] as [(String, [Any?])] {
            #expect(throws: FetchPredicateError.self, "\(format)") {
                try FetchPredicate(format: format, argumentArray: arguments).validate(against: JournalEntry.entityDescription)
            }
        }
        let unsaved = JournalEntry(id: 9, date: Date(timeIntervalSince1970: 0))
        #expect(FetchPredicate(format: "SELF == %@", unsaved).formatError?.message.contains("no context") == true)
    }

    @Test func theOlderRuleMatchesANullOnlyWithNilTests() throws {
        try withJournal { context, _, stage in
            try expect([
                ("height != '1 ft'", [], [2]), ("NOT (height == '1 ft')", [], [1, 2]), ("height == nil", [], [1]), ("height != nil", [], [0, 2]),
                ("height IN {'1 ft', nil}", [], [0, 1]), ("spot.name != 'Pacifica'", [], [2]), ("spot.name == nil", [], []),
                ("NOT (spot.name == 'Pacifica')", [], [1, 2]), ("ANY tags.all != 2", [], []), ("SELF != %@", [JournalEntry?.none], [0, 1, 2]),
            ], nilMatching: .onlyNilTests, in: context, stage)
        }
        for format in ["rating < NIL", "rating BETWEEN {NIL, 3}", "height BEGINSWITH NIL"] {
            #expect(throws: FetchPredicateError.self, "\(format)") {
                try FetchPredicate(format: format).nilMatching(.onlyNilTests).validate(against: "JournalEntry", in: typedModel)
            }
            #expect(throws: Never.self, "\(format)") {
                try FetchPredicate(format: format).validate(against: "JournalEntry", in: typedModel)
            }
        }
        #expect(FetchPredicate(format: "x != 1") != FetchPredicate(format: "x != 1").nilMatching(.onlyNilTests), "the rule is part of the value")
    }

    /// Only `!=` needs the null-safe form: `==` and the orderings keep plain operators, whose indexes serve them.
    @Test func onlyNotEqualIsWrittenNullSafe() throws {
        func sql(_ format: String, _ arguments: Any?...) throws -> String {
            try FetchPredicate(format: format, argumentArray: arguments).bind(to: journalEntity).sql(SQLiteDialect()).clause
        }
        #expect(try sql("wind != %@", "offshore") == #"("wind" IS NOT ?)"#)
        #expect(try sql("wind == %@", "offshore") == #"("wind" IS NOT NULL AND "wind" = ?)"#)
        #expect(try sql("rating < 3") == #"("rating" IS NOT NULL AND "rating" < ?)"#)
        #expect(try sql("rating < NIL") == "0")
        #expect(try sql("wind !=[c] 'X'") == #"(swell_fold("wind", 1) IS NOT ?)"#)
        let numbered = try FetchPredicate(format: "wind != 'offshore'").bind(to: journalEntity).sql(PredicateDialectTests.NumberedDialect()).clause
        #expect(numbered == #"("wind" IS DISTINCT FROM $1)"#)
        let legacy = try FetchPredicate(format: "wind != 'offshore'").nilMatching(.onlyNilTests).bind(to: journalEntity).sql(SQLiteDialect()).clause
        #expect(legacy == #"("wind" IS NOT NULL AND "wind" <> ?)"#)
    }
}
