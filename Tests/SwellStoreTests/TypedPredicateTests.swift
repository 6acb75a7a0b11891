import Foundation
@testable import SwellSQLite
import SwellStoreCore
import Testing
@testable import SwellContexts
import SwellStore
import SwellTestSupport
import SwellStoreTestSupport

/// Key-path predicates and sorts over typed entities (store guarantee 52): each `#Predicate`
/// compiles to the SQL of the format string that says the same thing, and fetches match
/// what Foundation's own evaluator says of the same objects, saved or not.
@Suite struct TypedPredicateSQLTests {
    private func sql(_ predicate: FetchPredicate, entity: String = "JournalEntry") throws -> String {
        let entities = typedModel.storageModel.entitiesByName
        let bound = try predicate.bind(to: try #require(entities[entity]), entities: entities)
        let (clause, arguments) = bound.sql(SQLiteDialect())
        return "\(clause) \(arguments)"
    }

    @Test func aKeyPathPredicateCompilesToTheSQLOfItsFormatString() throws {
        let cutoff = Date(timeIntervalSince1970: 1_700_000_000)
        let ids = [1, 3, 5]
        let heights: [String?] = [nil, "2 ft"]
        let pairs: [(Predicate<JournalEntry>, FetchPredicate)] = [
            (#Predicate { $0.rating ?? 0 >= 3 && $0.spot?.name == "Ocean Beach" },
             FetchPredicate(format: "rating >= 3 AND spot.name == 'Ocean Beach'")),
            (#Predicate { $0.rating ?? 0 >= 3 }, FetchPredicate(format: "rating >= 3")),
            (#Predicate { $0.rating ?? 0 < 3 }, FetchPredicate(format: "rating < 3 OR rating == nil")),
            (#Predicate { $0.rating ?? 5 < 3 }, FetchPredicate(format: "rating < 3")),
            // Swift's nil is NSPredicate's (store guarantee 63): `!=` and `== nil` compile as they are written.
            (#Predicate { $0.spot?.name != "Pacifica" }, FetchPredicate(format: "spot.name != 'Pacifica'")),
            (#Predicate { $0.rating != 3 }, FetchPredicate(format: "rating != 3")),
            (#Predicate { $0.spot?.name == nil }, FetchPredicate(format: "spot.name == nil")),
            (#Predicate { heights.contains($0.height) }, FetchPredicate(format: "height IN %@", heights)),
            (#Predicate { $0.spot?.entries.count != 2 }, FetchPredicate(format: "spot.entries.@count != 2")),
            // ALL of a nil spot's entries is nil in Swift, not NSPredicate's vacuous true.
            (#Predicate { $0.spot?.entries.allSatisfy { $0.rating == 3 } == true },
             FetchPredicate(format: "spot != nil AND ALL spot.entries.rating == 3")),
            (#Predicate { $0.height == nil }, FetchPredicate(format: "height == nil")),
            (#Predicate { $0.date > cutoff }, FetchPredicate(format: "date > %@", cutoff)),
            (#Predicate { ids.contains($0.id) }, FetchPredicate(format: "id IN %@", ids)),
            (#Predicate { $0.tags.contains { $0.label == "glassy" } }, FetchPredicate(format: "ANY tags.label == 'glassy'")),
            (#Predicate { $0.tags.count > 1 }, FetchPredicate(format: "tags.@count > 1")),
            (#Predicate { !$0.isFavourite || $0.id < 5 }, FetchPredicate(format: "NOT isFavourite == YES OR id < 5")),
            (#Predicate { $0.spot?.latitude ?? 0 > 30.5 }, FetchPredicate(format: "spot.latitude > 30.5")),
        ]
        for (typed, format) in pairs {
            #expect(try sql(FetchPredicate(typed)) == (try sql(format)), "\(format.format)")
        }
        #expect(try sql(FetchPredicate(#Predicate<SwellStoreTestSupport.Tag> { $0.all == 3 }), entity: "Tag") == (try sql(FetchPredicate(format: "#all == 3"), entity: "Tag")))
        let strings: [(Predicate<Spot>, FetchPredicate)] = [
            (#Predicate { $0.name.contains("Beach") }, FetchPredicate(format: "name CONTAINS 'Beach'")),
            (#Predicate { $0.name.starts(with: "Ocean") }, FetchPredicate(format: "name BEGINSWITH 'Ocean'")),
        ]
        for (typed, format) in strings {
            #expect(try sql(FetchPredicate(typed), entity: "Spot") == (try sql(format, entity: "Spot")), "\(format.format)")
        }
    }

    @Test func aKeyPathSortIsTheSortOfItsName() throws {
        #expect(try FetchSortDescriptor(SortDescriptor(\JournalEntry.date, order: .reverse)) == FetchSortDescriptor(key: "date", ascending: false))
        #expect(try FetchSortDescriptor(SortDescriptor(\JournalEntry.rating)) == FetchSortDescriptor(key: "rating", ascending: true))
    }

    @Test func whatCannotBeCompiledIsAnErrorNamingIt() throws {
        let twoProperties = #expect(throws: StoreError.self) {
            try FetchPredicate(#Predicate<JournalEntry> { $0.rating ?? 0 > $0.id })
        }
        #expect(twoProperties?.kind == .invalidPredicate)
        #expect(twoProperties?.description.contains("two properties") == true)
        let transient = #expect(throws: StoreError.self) {
            try FetchPredicate(#Predicate<JournalEntry> { $0.scratch > 1 })
        }
        #expect(transient?.kind == .invalidPredicate)
        #expect(transient?.description.contains("@Transient") == true)
        let arithmetic = #expect(throws: StoreError.self) {
            try FetchPredicate(#Predicate<JournalEntry> { $0.id + 1 > 3 })
        }
        #expect(arithmetic?.description.contains("Arithmetic") == true)
        let sort = #expect(throws: StoreError.self) {
            try FetchSortDescriptor(SortDescriptor(\JournalEntry.scratch))
        }
        #expect(sort?.kind == .invalidSortKey)
    }
}

/// Random journals, part saved and part not, fetched with key-path predicates and compared
/// with Foundation's evaluation of the same predicates on the same typed objects. Seeds 1–12
/// (`SWELL_DIFF_SEED` replays one); a failure names its seed and predicate.
@Suite(.onEveryStore) struct TypedPredicateDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 12) }

    @Test(arguments: seeds)
    func fetchesMatchFoundationsEvaluation(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "typed", model: typedModel)
        let context = container.newBackgroundContext()
        let spotNames = ["Ocean Beach", "Pacifica", "Linda Mar"]
        let labels = ["glassy", "crowded", "windy"]
        let r = Int.random(in: 0...5, using: &random), s = spotNames.randomElement(using: &random)!
        let l = labels.randomElement(using: &random)!, n = Int.random(in: 0...2, using: &random)
        let d = Date(timeIntervalSince1970: Double(Int.random(in: 0...100, using: &random)))
        let i = Int.random(in: 0...40, using: &random), x = Double.random(in: 0...3, using: &random)
        let ids = (0..<5).map { _ in Int.random(in: 0...40, using: &random) }
        let h = ["1 ft", "2 ft", "3 ft"].randomElement(using: &random)!
        let heights: [String?] = [nil, h]
        let predicates: [(String, Predicate<JournalEntry>)] = [
            ("rating ?? 0 >= r", #Predicate { $0.rating ?? 0 >= r }),
            ("rating ?? 9 < r", #Predicate { $0.rating ?? 9 < r }),
            ("rating != r", #Predicate { $0.rating != r }),
            ("rating == nil", #Predicate { $0.rating == nil }),
            ("spot?.name == s", #Predicate { $0.spot?.name == s }),
            ("spot?.name != s", #Predicate { $0.spot?.name != s }),
            ("date > d && isFavourite", #Predicate { $0.date > d && $0.isFavourite }),
            ("!(rating == r) || id < i", #Predicate { !($0.rating == r) || $0.id < i }),
            ("ids.contains(id)", #Predicate { ids.contains($0.id) }),
            ("tags contain l", #Predicate { $0.tags.contains { $0.label == l } }),
            ("tags.count >= n", #Predicate { $0.tags.count >= n }),
            ("tags.isEmpty", #Predicate { $0.tags.isEmpty }),
            ("spot?.latitude ?? 0 > x", #Predicate { $0.spot?.latitude ?? 0 > x }),
            ("height == h || height == nil", #Predicate { $0.height == h || $0.height == nil }),
            ("spot?.name == nil", #Predicate { $0.spot?.name == nil }),
            ("spot?.latitude != nil", #Predicate { $0.spot?.latitude != nil }),
            ("spot?.latitude ?? 9 > x", #Predicate { $0.spot?.latitude ?? 9 > x }),
            ("spot != nil && !isFavourite", #Predicate { $0.spot != nil && !$0.isFavourite }),
            ("height?.contains(2) == true", #Predicate { $0.height?.contains("2") == true }),
            ("height?.contains(2) != true", #Predicate { $0.height?.contains("2") != true }),
            ("height?.starts(with: 1) ?? false", #Predicate { $0.height?.starts(with: "1") ?? false }),
            ("spot?.name.contains(a) == true", #Predicate { $0.spot?.name.contains("a") == true }),
            ("spot?.entries.count != n", #Predicate { $0.spot?.entries.count != n }),
            ("[nil, h].contains(height)", #Predicate { heights.contains($0.height) }),
            ("tags contain all > 0", #Predicate { $0.tags.contains { $0.all ?? 0 > 0 } }),
        ]
        try context.performAndWait {
            let spots = spotNames.map { Spot(name: $0, latitude: Double.random(in: 0...3, using: &random)) }
            let tags = labels.map { Tag(label: $0) }
            for tag in tags where Bool.random(using: &random) { tag.all = Int.random(in: 0...2, using: &random) }
            var entries: [JournalEntry] = []
            for id in 0..<30 {
                let entry = JournalEntry(id: id, date: Date(timeIntervalSince1970: Double(Int.random(in: 0...100, using: &random))),
                                         height: Bool.random(using: &random) ? ["1 ft", "2 ft", "3 ft"].randomElement(using: &random) : nil,
                                         rating: Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil)
                entry.isFavourite = Bool.random(using: &random)
                entry.spot = Int.random(in: 0...3, using: &random) == 0 ? nil : spots.randomElement(using: &random)
                if let spot = entry.spot, Int.random(in: 0...5, using: &random) == 0 { spot.latitude = nil }
                entry.tags = Set(tags.filter { _ in Bool.random(using: &random) })
                context.insert(entry)
                entries.append(entry)
                // The first half goes to the store; the rest stays unsaved in the context.
                if id == 14 { try context.save() }
            }
            for stage in ["half unsaved", "all saved"] {
                if stage == "all saved" { try context.save() }
                for (name, predicate) in predicates {
                    let fetched = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
                    let expected = Set(try entries.filter { try predicate.evaluate($0) }.map(\.id))
                    #expect(fetched == expected, "seed \(seed), \(stage): \(name)")
                }
            }
            let sorted = try context.fetch(FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.date, order: .reverse)]))
            #expect(sorted.map(\.date) == entries.map(\.date).sorted(by: >), "seed \(seed): sort by date, reversed")
        }
    }
}
