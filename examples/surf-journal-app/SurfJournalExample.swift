// The SurfJournal flow (Apple's Core Data concurrency sample) on SwellStore:
// import the bundled journal pages on a background context, edit in a child
// context and discard, edit and save, edit with undo (a rule refusing a bad rating),
// add and cancel, then export a CSV on a background context while the view context is in use. Each entry's surf spot is a
// `Spot` object: `JournalEntry.spot` ↔ `Spot.entries`, delete rule nullify.
//
// Run from the package root: `swift run surf-journal` (writes .swell/surf-journal-example.sqlite
// and out/surf-journal-example.csv).
import Foundation
import SwellStore

/// A logged surf session: an `@Entity` class, so its properties read and write the context's values.
@Entity final class JournalEntry {
    @Unique var id: Int
    var date: Date
    var height: String?
    var period: String?
    var wind: String?
    var location: String?
    @Validated(.minValue(1), .maxValue(5)) var rating: Int?   // every save checks it
    @Relationship(inverse: "entries", deleteRule: .nullify) var spot: Spot?

    init(id: Int, date: Date) {
        self.id = id
        self.date = date
    }
}

/// A surf spot; deleting one leaves its entries without a spot.
@Entity final class Spot {
    @Unique var name: String
    @Relationship(inverse: "spot", deleteRule: .nullify) var entries: Set<JournalEntry> = []

    init(name: String) { self.name = name }
}

let model = ManagedObjectModel(entities: [JournalEntry.self, Spot.self])

/// One journal entry as it arrives in the bundled pages.
struct Entry: Decodable, Sendable {
    struct Spot: Decodable, Sendable { let name: String }
    let id: Int
    let date: Date
    let height, period, wind, location: String?
    let rating: Int?
    let spot: Spot?
}

struct Page: Decodable { let data: [Entry]; let next: String? }

/// Reads every bundled page, following `next`.
func loadPages(from first: URL) throws -> [Entry] {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    var entries: [Entry] = []
    var url: URL? = first
    while let current = url {
        let page = try decoder.decode(Page.self, from: Data(contentsOf: current))
        entries += page.data
        url = page.next.map { current.deletingLastPathComponent().appendingPathComponent($0) }
    }
    return entries
}

func csvField(_ value: Any?) -> String {
    guard let value else { return "" }
    let text = value is Date ? ISO8601DateFormatter().string(from: value as! Date) : "\(value)"
    return text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
        ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
}

@main
struct SurfJournalExample {
    static func main() async throws {
        let storeURL = URL(fileURLWithPath: ".swell/surf-journal-example.sqlite")
        let container = PersistentContainer(name: "SurfJournal", managedObjectModel: model, storeURL: storeURL)
        try container.loadPersistentStores()
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump  // re-running the import updates rows

        // 1. Import on a background context (a child of the view context), then save to disk off the main queue.
        let entries = try loadPages(from: URL(fileURLWithPath: "fixtures/surf-journal/page-0001.json"))
        let imported = try await container.performBackgroundTask { context throws -> Int in
            // One Spot per name: those already stored, then those this import creates.
            var spots: [String: Spot] = [:]
            for spot in try context.fetch(FetchDescriptor<Spot>()) { spots[spot.name] = spot }
            for entry in entries {
                let object = JournalEntry(id: entry.id, date: entry.date)
                object.height = entry.height
                object.period = entry.period
                object.wind = entry.wind
                object.location = entry.location
                object.rating = entry.rating
                context.insert(object)
                if let name = entry.spot?.name {
                    let spot = spots[name] ?? Spot(name: name)
                    spots[name] = spot
                    object.spot = spot   // inserts a new spot; Spot.entries gains the entry at once
                }
            }
            try context.save()
            return entries.count
        }
        try await container.saveToDisk()
        print("imported \(imported) journal entries into \(storeURL.path)")

        let view = container.viewContext
        let firstID = try await view.perform {
            var first = FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.id)])
            first.fetchLimit = 1
            return try view.fetch(first)[0].objectID
        }

        // 2. Edit in a child context, then discard: the view context never sees it.
        let scratchpad = ManagedObjectContext(concurrencyType: .mainQueue)
        scratchpad.parent = view
        await scratchpad.perform { scratchpad.object(with: firstID, as: JournalEntry.self).rating = 1 }
        let ratingAfterDiscard = await view.perform { view.object(with: firstID, as: JournalEntry.self).rating }
        print("after a discarded edit, entry 1 is rated \(ratingAfterDiscard.map(String.init) ?? "-")")

        // 3. Edit in a child context and save: the change moves into the view context, then to disk.
        let editor = ManagedObjectContext(concurrencyType: .mainQueue)
        editor.parent = view
        try await editor.perform {
            editor.object(with: firstID, as: JournalEntry.self).rating = 5
            try editor.save()
        }
        try await container.saveToDisk()
        let ratingAfterSave = await view.perform { view.object(with: firstID, as: JournalEntry.self).rating }
        print("after a saved edit, entry 1 is rated \(ratingAfterSave.map(String.init) ?? "-")")

        // 4. The scratchpad with undo: each perform block is one undo group; a save breaking
        //    the rating rule is refused whole, listing what broke; undo, then save what is left.
        let undoable = ManagedObjectContext(concurrencyType: .mainQueue)
        undoable.parent = view
        await undoable.perform {
            undoable.undoManager = UndoManager()
            undoable.object(with: firstID, as: JournalEntry.self).wind = "light offshore"
        }
        await undoable.perform {
            let entry = undoable.object(with: firstID, as: JournalEntry.self)
            entry.rating = 9
            entry.height = "head high"
        }
        let refusal = await undoable.perform { () -> String in
            do {
                try undoable.save()
                return "saved"
            } catch let error as StoreError {
                return error.validationFailures.map(\.description).joined(separator: "; ")
            } catch {
                return "\(error)"
            }
        }
        print("saving a rating of 9 is refused: \(refusal)")
        try await undoable.perform {
            undoable.undoManager?.undo()   // rating and height as they were; the wind edit stays
            try undoable.save()
        }
        try await container.saveToDisk()
        let (wind, rating, height) = await view.perform {
            let entry = view.object(with: firstID, as: JournalEntry.self)
            return (entry.wind, entry.rating, entry.height)
        }
        print("after undo and save, entry 1: wind \(wind ?? "-"), rated \(rating.map(String.init) ?? "-"), height \(height ?? "-")")

        // 5. Add in a child context and cancel: nothing reaches the view context.
        let adder = ManagedObjectContext(concurrencyType: .mainQueue)
        adder.parent = view
        await adder.perform {
            adder.insert(JournalEntry(id: 999, date: Date()))
        }
        let count = try await view.perform { try view.fetchCount(FetchDescriptor<JournalEntry>()) }
        print("after a cancelled add, the journal holds \(count) entries")

        // 6. Export on a background context while the view context stays in use.
        let exporter = container.newBackgroundContext()
        async let exported: Int = exporter.perform { () throws -> Int in
            var all = FetchDescriptor<JournalEntry>(sortBy: [SortDescriptor(\.date), SortDescriptor(\.id)])
            all.fetchBatchSize = 500
            var csv = "id,date,height,period,wind,location,rating,spot\n"
            let objects = try exporter.fetch(all)
            for entry in objects {
                let fields: [Any?] = [entry.id, entry.date, entry.height, entry.period, entry.wind, entry.location,
                                      entry.rating, entry.spot?.name]
                csv += fields.map(csvField).joined(separator: ",") + "\n"
            }
            try FileManager.default.createDirectory(atPath: "out", withIntermediateDirectories: true)
            try csv.write(toFile: "out/surf-journal-example.csv", atomically: true, encoding: .utf8)
            return objects.count
        }
        let highlyRated = try await view.perform { () throws -> Int in
            try view.fetchCount(FetchDescriptor<JournalEntry>(predicate: #Predicate { $0.rating ?? 0 >= 4 }))
        }
        print("\(highlyRated) entries are rated 4 or 5")
        let busiest = try await view.perform { () throws -> String in
            let spots = try view.fetch(FetchDescriptor<Spot>())
            let counts = spots.map { ($0.name, $0.entries.count) }
            guard let top = counts.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) else { return "no spots" }
            return "\(spots.count) spots; the most logged is \(top.0) with \(top.1) entries"
        }
        print(busiest)
        print("exported \(try await exported) entries to out/surf-journal-example.csv")
    }
}
