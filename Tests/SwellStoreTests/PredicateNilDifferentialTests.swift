import Foundation
import Testing
import SwellStore
import SwellStoreCore
import SwellTestSupport
import SwellStoreTestSupport

/// Store guarantee 63 ("a predicate means one thing"), differentially: random journals with
/// nil attributes and a sometimes-nil spot, part saved, part unsaved (new objects and
/// unsaved changes to saved ones), fetched with random predicates (`NilPredicateGrammar`)
/// three ways — the format string, the `#Predicate` that says the same where Swift can, and
/// the grammar's own NSPredicate evaluation — which must agree, on every store. Seeds 1–12
/// (`SWELL_DIFF_SEED` replays one); a failure names its seed, stage and predicate.
@Suite(.onEveryStore) struct PredicateNilDifferentialTests {
    @Test(arguments: TypedPredicateDifferentialTests.seeds)
    func formatTypedAndNSPredicatesMeaningAgree(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "nils", model: typedModel)
        let context = container.newBackgroundContext()
        let labels = ["glassy", "crowded", "windy"]
        let heights = ["1 ft", "2 ft", "3 ft"]
        let spotNames = ["Ocean Beach", "Pacifica", "Linda Mar"]
        try context.performAndWait {
            let spots = spotNames.map { Spot(name: $0, latitude: Bool.random(using: &random) ? Double.random(in: 0...3, using: &random) : nil) }
            let tags = labels.map { Tag(label: $0) }
            for tag in tags where Bool.random(using: &random) { tag.all = Int.random(in: 0...2, using: &random) }
            var entries: [JournalEntry] = []
            for id in 0..<24 {
                let entry = JournalEntry(id: id, date: Date(timeIntervalSince1970: Double(id)),
                                         height: Bool.random(using: &random) ? heights.randomElement(using: &random) : nil,
                                         rating: Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil)
                entry.spot = Int.random(in: 0..<3, using: &random) == 0 ? nil : spots.randomElement(using: &random)
                entry.tags = Set(tags.filter { _ in Bool.random(using: &random) })
                context.insert(entry)
                entries.append(entry)
                if id == 11 { try context.save() }
            }
            // Unsaved changes to saved objects: a value set to nil, a spot taken away, a latitude cleared.
            for entry in entries.prefix(12) where Int.random(in: 0..<3, using: &random) == 0 {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: entry.rating = nil
                case 1: entry.spot = nil
                default: entry.height = Bool.random(using: &random) ? nil : heights.randomElement(using: &random)
                }
            }
            if Bool.random(using: &random) { spots[0].latitude = nil }
            let grammar = NilPredicateGrammar(entries: entries, labels: labels, heights: heights, spotNames: spotNames)
            let terms = (0..<40).map { _ in grammar.term(depth: 3, using: &random) }
            for stage in ["part unsaved", "all saved"] {
                if stage == "all saved" { try context.save() }
                for term in terms {
                    try check(term, entries: entries, in: context, "seed \(seed), \(stage)")
                }
            }
        }
    }

    /// Fetches `term` as a format predicate and as a typed one, and compares both with its meaning.
    private func check(_ term: NilPredicateTerm, entries: [JournalEntry], in context: ManagedObjectContext, _ where: String) throws {
        let expected = Set(entries.filter(term.holds).map(\.id))
        let format = FetchPredicate(format: term.format, argumentArray: term.arguments)
        do {
            var request = FetchRequest(entityName: "JournalEntry")
            request.predicate = format
            let fetched = Set(try context.fetch(request).compactMap { $0.model(as: JournalEntry.self)?.id })
            #expect(fetched == expected, "\(`where`): format \(term.format) \(format.argumentsDescription)")
        } catch {
            Issue.record("\(`where`): format \(term.format) throws \(error)")
        }
        guard let build = term.typed else { return }
        let typed = Predicate<JournalEntry> { ErasedPredicateBody(build($0)) }
        // The typed form is written to say what the format says: Foundation's own evaluation agrees.
        let foundation = Set(try entries.filter { try typed.evaluate($0) }.map(\.id))
        #expect(foundation == expected, "\(`where`): Foundation's evaluation of the typed form of \(term.format)")
        do {
            let fetched = Set(try context.fetch(FetchDescriptor(predicate: typed)).map(\.id))
            #expect(fetched == expected, "\(`where`): typed form of \(term.format), compiled to \((try? FetchPredicate(typed).format) ?? "?")")
        } catch {
            Issue.record("\(`where`): typed form of \(term.format) throws \(error)")
        }
    }
}

extension FetchPredicate {
    /// The arguments as a failure message shows them.
    fileprivate var argumentsDescription: String { "\(arguments)" }
}
