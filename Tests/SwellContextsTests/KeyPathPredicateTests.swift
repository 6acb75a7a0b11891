import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

@Suite("Relationships: key-path predicates in SQL and in memory (Store guarantees 33)", .onEveryStore)
struct KeyPathPredicateTests {
    /// A model with both kinds of to-many: Spot ↔ Entry (inverse to-one), Issue ↔ Label (join table).
    static let model = ManagedObjectModel(entities: relationshipModel.entities.filter { ["Spot", "Entry"].contains($0.name) }
        + joinModel.entities.filter { ["Issue", "Label"].contains($0.name) })

    /// A deterministic graph: 6 spots, 30 entries (some without a spot), 12 issues with 0–3 of 4 labels.
    static func build(_ context: ManagedObjectContext) {
        let names = ["Ocean Beach", "Malibu", "Mavericks", "old pier", "Rincon", "Trestles"]
        let spots = names.map { name -> ManagedObject in
            let spot = context.insertNewObject(forEntityName: "Spot")
            spot["name"] = name
            return spot
        }
        for id in 1...30 {
            let entry = context.insertNewObject(forEntityName: "Entry")
            entry["id"] = id
            entry["title"] = ["dawn", "dusk", "x-large", "glassy"][id % 4]
            if id % 7 != 0 { entry.setValue(spots[id % 5], forKey: "spot") }
        }
        let labels = ["bug", "ui", "docs", "perf"].map { name -> ManagedObject in
            let label = context.insertNewObject(forEntityName: "Label")
            label["name"] = name
            return label
        }
        for id in 1...12 {
            let issue = context.insertNewObject(forEntityName: "Issue")
            issue["id"] = id
            issue.setValue(Set((0..<4).filter { (id >> $0) & 1 == 1 && $0 < 3 || id % 5 == $0 }.map { labels[$0] }), forKey: "labels")
        }
    }

    static let cases: [(entity: String, format: String, key: String)] = [
        ("Entry", "spot.name == 'Ocean Beach'", "id"),
        ("Entry", "spot.name BEGINSWITH[c] 'o'", "id"),
        ("Entry", "spot == nil", "id"),
        ("Entry", "NOT (spot.name == 'Malibu') AND id > 10", "id"),
        ("Spot", "ANY entries.title == 'dawn'", "name"),
        ("Spot", "ALL entries.id > 2", "name"),
        ("Spot", "NONE entries.title CONTAINS 'x'", "name"),
        ("Spot", "entries.@count > 1", "name"),
        ("Spot", "entries.@count == 0", "name"),
        ("Issue", "ANY labels.name == 'bug'", "id"),
        ("Issue", "labels.@count >= 2", "id"),
        ("Issue", "ALL labels.name IN {'bug', 'ui'}", "id"),
        ("Label", "ANY issues.id < 4", "name"),
        ("Label", "SOME issues.id == 12", "name"),
    ]

    private static func keys(_ context: ManagedObjectContext, _ entity: String, _ format: String, _ key: String) throws -> [String] {
        var request = FetchRequest(entityName: entity)
        request.predicate = FetchPredicate(format: format)
        return try context.fetch(request).map { "\($0[key] ?? "nil")" }.sorted()
    }

    @Test("each key-path predicate gives the same objects from saved rows (SQL) and from unsaved ones (memory)")
    func sqlAndMemoryAgree() async throws {
        let saved = TemporaryDirectory()
        let stored = try makeContainer(saved, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let reader = try makeContainer(saved, name: "paths", model: Self.model).newBackgroundContext()
        let unsavedDirectory = TemporaryDirectory()
        let unsaved = try makeContainer(unsavedDirectory, name: "paths", model: Self.model).newBackgroundContext()
        unsaved.performAndWait { Self.build(unsaved) }
        var nonEmpty = 0
        for (entity, format, key) in Self.cases {
            let fromSQL = try reader.performAndWait { try Self.keys(reader, entity, format, key) }
            let fromMemory = try unsaved.performAndWait { try Self.keys(unsaved, entity, format, key) }
            #expect(fromSQL == fromMemory, "\(entity) where \(format)")
            if !fromSQL.isEmpty { nonEmpty += 1 }
        }
        // The cases are not vacuous: most select something.
        #expect(nonEmpty >= 11)
        // One exact answer: the spots none of whose entries has an 'x' title.
        let none = try reader.performAndWait { try Self.keys(reader, "Spot", "NONE entries.title CONTAINS 'x'", "name") }
        // Spot 4 (Rincon) lost its only 'x-large' entry (14) to the multiples of 7; Trestles has no entries.
        #expect(none == ["Rincon", "Trestles"])
    }

    @Test("sorting by a to-one key path gives one order from saved rows (SQL) and unsaved ones (memory); nil first",
          .onStores(except: .memory, "the in-memory store reads no key paths in its queries"))
    func sortByKeyPath() async throws {
        let saved = TemporaryDirectory()
        let stored = try makeContainer(saved, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let reader = try makeContainer(saved, name: "paths", model: Self.model).newBackgroundContext()
        let unsavedDirectory = TemporaryDirectory()
        let unsaved = try makeContainer(unsavedDirectory, name: "paths", model: Self.model).newBackgroundContext()
        unsaved.performAndWait { Self.build(unsaved) }
        func order(_ context: ManagedObjectContext) throws -> [String] {
            var request = FetchRequest(entityName: "Entry")
            request.sortDescriptors = [FetchSortDescriptor(key: "spot.name", ascending: true), FetchSortDescriptor(key: "id", ascending: false)]
            return try context.fetch(request).map { "\(($0.value(forKey: "spot") as? ManagedObject)?["name"] ?? "-")/\($0["id"]!)" }
        }
        let fromSQL = try reader.performAndWait { try order(reader) }
        let fromMemory = try unsaved.performAndWait { try order(unsaved) }
        #expect(fromSQL == fromMemory)
        #expect(fromSQL.prefix(4) == ["-/28", "-/21", "-/14", "-/7"])
        #expect(fromSQL[4] == "Malibu/26")
        // A to-many path is not a sort key.
        reader.performAndWait {
            var request = FetchRequest(entityName: "Spot")
            request.sortDescriptors = [FetchSortDescriptor(key: "entries.title")]
            #expect(throws: StoreError.self) { try reader.fetch(request) }
        }
    }

    @Test("sorting by a to-one key path sees the destinations' unsaved values, with and without a limit",
          .onStores(except: .memory, "the in-memory store reads no key paths in its queries"))
    func sortByKeyPathSeesUnsavedDestinations() async throws {
        let directory = TemporaryDirectory()
        let stored = try makeContainer(directory, name: "paths", model: Self.model)
        let writer = stored.newBackgroundContext()
        try writer.performAndWait {
            Self.build(writer)
            try writer.save()
        }
        try await stored.saveToDisk()
        let context = stored.newBackgroundContext()
        func order(limit: Int) throws -> [String] {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = FetchPredicate(format: "spot != nil")
            request.sortDescriptors = [FetchSortDescriptor(key: "spot.name", ascending: true), FetchSortDescriptor(key: "id", ascending: true)]
            request.fetchLimit = limit
            return try context.fetch(request).map { "\(($0.value(forKey: "spot") as? ManagedObject)?["name"] ?? "-")/\($0["id"]!)" }
        }
        try context.performAndWait {
            // Only a spot changes, unsaved: no Entry does.
            var request = FetchRequest(entityName: "Spot")
            request.predicate = FetchPredicate(format: "name == 'Trestles' OR name == 'Rincon'")
            for spot in try context.fetch(request) where spot["name"] as? String == "Rincon" { spot["name"] = "Aaa Rincon" }
            let all = try order(limit: 0)
            #expect(all.first?.hasPrefix("Aaa Rincon/") == true, "\(all.prefix(3))")
            #expect(try order(limit: 2) == Array(all.prefix(2)))
        }
    }

    @Test("an unknown relationship in a key path, or ANY without a to-many, is a predicate error with its column")
    func errors() throws {
        let directory = TemporaryDirectory()
        let context = try makeContainer(directory, name: "paths", model: Self.model).newBackgroundContext()
        context.performAndWait {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = FetchPredicate(format: "id > 1 AND place.name == 'x'")
            let error = #expect(throws: StoreError.self) { try context.fetch(request) }
            #expect(error?.description.contains("'place' in key path 'place.name' is not a relationship of Entry at column 12") == true)
            request.predicate = FetchPredicate(format: "ANY spot.name == 'x'")
            let quantified = #expect(throws: StoreError.self) { try context.fetch(request) }
            #expect(quantified?.description.contains("ANY, ALL and NONE need a key path through a to-many relationship") == true)
        }
    }
}
