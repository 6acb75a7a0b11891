import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Fetch result types against the objects (Store guarantees 44–45): random rows saved, then
/// unsaved inserts, updates and deletes at the three levels (writer ← view ← worker); for
/// random requests, the worker's ID, count and dictionary results — plain, grouped, with
/// expressions, a having predicate, distinct rows — equal what the test computes from the
/// objects the same request fetches. Runs on the store the suite runs on (all three in CI).
/// A failing seed is named; `SWELL_DIFF_SEED=n` replays it.
@Suite(.onEveryStore) struct ResultTypeDifferentialTests {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(name: "Spot", attributes: [
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "region", type: .string, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "spot"),
        ], uniquenessConstraint: ["code"]),
        EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "id", type: .integer),
            AttributeDescription(name: "rating", type: .integer, isOptional: true),
            AttributeDescription(name: "height", type: .double, isOptional: true),
            AttributeDescription(name: "location", type: .string, isOptional: true),
            AttributeDescription(name: "day", type: .date, isOptional: true),
            AttributeDescription(name: "pinned", type: .boolean, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "spot", destination: "Spot", inverse: "entries"),
        ], uniquenessConstraint: ["id"]),
    ])

    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 6) }

    static let locations = ["Ocean Beach", "Pacifica", "Mavericks", "Linda Mar"]
    static let predicates = [nil, "rating >= 3", "location != NIL", "spot.region == 'north'", "height < 2.5 OR pinned == TRUE"]
    static let groupings: [[String]] = [[], ["location"], ["pinned"], ["spot.region"], ["location", "pinned"], ["spot"]]

    /// Sets random values (and a random spot) on an entry.
    static func fill(_ entry: ManagedObject, spots: [ManagedObject], using random: inout SeededGenerator) {
        entry.setValue(Bool.random(using: &random) ? Int.random(in: 0...5, using: &random) : nil, forKey: "rating")
        entry.setValue(Bool.random(using: &random) ? Double(Int.random(in: 0...40, using: &random)) / 8 : nil, forKey: "height")
        entry.setValue(Int.random(in: 0..<5, using: &random) > 0 ? locations.randomElement(using: &random)! : nil, forKey: "location")
        entry.setValue(Bool.random(using: &random) ? Date(timeIntervalSince1970: Double(Int.random(in: 0...9, using: &random)) * 86_400) : nil,
                       forKey: "day")
        entry.setValue(Bool.random(using: &random) ? Bool.random(using: &random) : nil, forKey: "pinned")
        entry.setValue(Int.random(in: 0..<4, using: &random) > 0 ? spots.randomElement(using: &random)! : nil, forKey: "spot")
    }

    /// Random inserts, updates and deletes of entries in `context` (left unsaved).
    static func edit(_ context: ManagedObjectContext, ids: inout Int, using random: inout SeededGenerator) throws {
        let spots = try context.fetch(FetchRequest(entityName: "Spot"))
        let entries = try context.fetch(FetchRequest(entityName: "Entry"))
        for entry in entries where Int.random(in: 0..<5, using: &random) == 0 { fill(entry, spots: spots, using: &random) }
        for entry in entries where Int.random(in: 0..<12, using: &random) == 0 { context.delete(entry) }
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let entry = context.insertNewObject(forEntityName: "Entry")
            ids += 1
            entry.setValue(ids, forKey: "id")
            fill(entry, spots: spots, using: &random)
        }
        if Int.random(in: 0..<3, using: &random) == 0, let spot = spots.randomElement(using: &random) {
            spot.setValue(["north", "south", nil].randomElement(using: &random)!, forKey: "region")
        }
    }

    @Test(arguments: seeds) func resultsAgreeWithTheObjects(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "results", model: Self.model)
        var random = SeededGenerator(state: seed)
        var ids = 0
        let writer = container.writerContext
        try writer.performAndWait {
            let spots = (0..<4).map { index -> ManagedObject in
                let spot = writer.insertNewObject(forEntityName: "Spot")
                spot.setValue("s\(index)", forKey: "code")
                spot.setValue(["north", "south", nil].randomElement(using: &random)!, forKey: "region")
                return spot
            }
            for _ in 0..<Int.random(in: 20...60, using: &random) {
                let entry = writer.insertNewObject(forEntityName: "Entry")
                ids += 1
                entry.setValue(ids, forKey: "id")
                Self.fill(entry, spots: spots, using: &random)
            }
            try writer.save()
            try Self.edit(writer, ids: &ids, using: &random)
        }
        try container.viewContext.performAndWait { try Self.edit(container.viewContext, ids: &ids, using: &random) }
        let worker = container.newBackgroundContext()
        var failures: [String] = []
        func compare(in context: ManagedObjectContext, steps: Int, phase: String) throws {
            for step in 0..<steps {
                let request = Self.request(using: &random)
                let objects = try context.fetch(request.objects)
                let ids = try context.fetchObjectIDs(request.objects)
                if ids != objects.map(\.objectID) { failures.append("\(phase) step \(step) \(request): object IDs differ") }
                if try context.count(for: request.objects) != objects.count { failures.append("\(phase) step \(step) \(request): count differs") }
                let expected = DictionaryModel.results(request, objects: objects)
                let got = try context.fetchDictionaries(request.dictionaries).map(DictionaryModel.row)
                if got != expected {
                    failures.append("\(phase) step \(step) \(request):\n  got      \(got)\n  expected \(expected)")
                }
            }
        }
        // Unsaved changes at every level: the results are merged with them.
        try worker.performAndWait {
            try Self.edit(worker, ids: &ids, using: &random)
            try compare(in: worker, steps: 30, phase: "unsaved")
            try worker.save()
        }
        try container.viewContext.performAndWait { try container.viewContext.save() }
        try writer.performAndWait { try writer.save() }
        // Everything saved: the results are read in one pass over the store's query.
        let reader = container.newBackgroundContext()
        try reader.performAndWait { try compare(in: reader, steps: 30, phase: "saved") }
        #expect(failures.isEmpty, "seed \(seed) (SWELL_DIFF_SEED=\(seed) replays it):\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    /// A random request, as an object fetch and as the dictionary fetch of the same rows.
    struct Request: CustomStringConvertible {
        var predicate: String?
        var sort: [FetchSortDescriptor]
        var groupBy: [String]
        var expressions: [ExpressionDescription]
        var having: String?
        var distinct: Bool
        var limit: Int

        var objects: FetchRequest {
            var request = FetchRequest(entityName: "Entry")
            request.predicate = predicate.map { FetchPredicate(format: $0) }
            request.sortDescriptors = sort
            if groupBy.isEmpty && expressions.isEmpty && !distinct { request.fetchLimit = limit }
            return request
        }

        var dictionaries: FetchRequest {
            var request = objects
            request.resultType = .dictionary
            request.propertiesToFetch = groupBy.isEmpty && expressions.isEmpty ? ["id", "location", "spot.region", "spot"] : groupBy
            request.propertiesToFetch += expressions as [any FetchProperty]
            request.propertiesToGroupBy = groupBy
            request.havingPredicate = having.map { FetchPredicate(format: $0) }
            request.returnsDistinctResults = distinct
            request.fetchLimit = limit
            return request
        }

        var description: String {
            "where \(predicate ?? "-") sort \(sort.map { "\($0.key)\($0.ascending ? "" : " desc")" }) group \(groupBy) "
                + "expressions \(expressions.map { "\($0.name)=\($0.function.rawValue)(\($0.keyPath))" }) having \(having ?? "-") "
                + "distinct \(distinct) limit \(limit)"
        }
    }

    static func request(using random: inout SeededGenerator) -> Request {
        let groupBy = groupings.randomElement(using: &random)!
        let functions = AggregateFunction.allCases
        var expressions: [ExpressionDescription] = []
        if !groupBy.isEmpty || Bool.random(using: &random) {
            for index in 0..<Int.random(in: 0...3, using: &random) {
                let function = functions.randomElement(using: &random)!
                let keyPath = [.sum, .average].contains(function) ? ["rating", "height"].randomElement(using: &random)!
                    : ["rating", "height", "location", "day", "pinned", "spot.region", "id"].randomElement(using: &random)!
                expressions.append(ExpressionDescription(name: "e\(index)", function: function, keyPath: keyPath))
            }
        }
        let grouped = !groupBy.isEmpty || !expressions.isEmpty
        // `e0 > 1` where e0 is a number: a count, a sum, an average, or the least or greatest number.
        let numeric = expressions.first.map { [.count, .countDistinct, .sum, .average].contains($0.function) || ["rating", "height", "id"].contains($0.keyPath) } ?? false
        let having = grouped && numeric && Bool.random(using: &random) ? "e0 != NIL AND e0 > 1" : nil
        let sortKeys = ["id", "rating", "location", "height", "spot.code"]
        let sort = (0..<Int.random(in: 0...2, using: &random)).map { _ in
            FetchSortDescriptor(key: sortKeys.randomElement(using: &random)!, ascending: Bool.random(using: &random))
        }
        return Request(predicate: predicates.randomElement(using: &random)!, sort: sort, groupBy: groupBy, expressions: expressions,
                       having: having, distinct: Int.random(in: 0..<4, using: &random) == 0,
                       limit: Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 1...6, using: &random) : 0)
    }
}

/// The dictionary results computed from the fetched objects, written apart from the store's
/// code: values read with `value(forKeyPath:)`, groups by first appearance, aggregates over
/// the values that are not nil.
enum DictionaryModel {
    /// A comparable rendering of one result dictionary.
    static func row(_ dictionary: [String: Any]) -> [String: String] {
        dictionary.mapValues(render)
    }

    static func render(_ value: Any) -> String {
        switch value {
        case let id as ObjectID: "id:\(id.entityName)/\(id.primaryKey)"
        case let date as Date: "date:\(date.timeIntervalSince1970)"
        case let bool as Bool: "bool:\(bool)"
        case let int as Int: "int:\(int)"
        case let double as Double: "double:\(double)"
        case let string as String: "text:\(string)"
        default: "?\(value)"
        }
    }

    static func value(_ object: ManagedObject, _ keyPath: String) -> Any? {
        if keyPath == "spot" { return (object.value(forKey: "spot") as? ManagedObject)?.objectID }
        return object.value(forKeyPath: keyPath)
    }

    static func results(_ request: ResultTypeDifferentialTests.Request, objects: [ManagedObject]) -> [[String: String]] {
        var rows: [[String: String]] = []
        if request.groupBy.isEmpty && request.expressions.isEmpty {
            rows = objects.map { object in
                var row: [String: String] = [:]
                for key in ["id", "location", "spot.region", "spot"] { if let value = value(object, key) { row[key] = render(value) } }
                return row
            }
        } else {
            var order: [[String]] = []
            var groups: [[String]: [ManagedObject]] = [:]
            for object in objects {
                let key = request.groupBy.map { value(object, $0).map(render) ?? "nil" }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(object)
            }
            if objects.isEmpty && request.groupBy.isEmpty { order = [[]]; groups[[]] = [] }
            for key in order {
                let members = groups[key]!
                var row: [String: String] = [:]
                for name in request.groupBy { if let value = value(members[0], name) { row[name] = render(value) } }
                var havingValue: Double?
                for expression in request.expressions {
                    let values = members.compactMap { value($0, expression.keyPath) }
                    let result = aggregate(expression.function, values, doubles: expression.keyPath == "height")
                    if let result { row[expression.name] = render(result) }
                    if expression.name == "e0" { havingValue = result.flatMap(number) }
                }
                if request.having != nil {
                    guard let having = havingValue, having > 1 else { continue }
                }
                rows.append(row)
            }
        }
        if request.distinct {
            var seen: Set<[String: String]> = []
            rows = rows.filter { seen.insert($0).inserted }
        }
        if request.limit > 0 { rows = Array(rows.prefix(request.limit)) }
        return rows
    }

    static func number(_ value: Any) -> Double? {
        switch value {
        case let int as Int: Double(int)
        case let double as Double: double
        case let date as Date: date.timeIntervalSince1970
        case let bool as Bool: bool ? 1 : 0
        default: nil
        }
    }

    static func aggregate(_ function: AggregateFunction, _ values: [Any], doubles: Bool) -> Any? {
        switch function {
        case .count: return values.count
        case .countDistinct: return Set(values.map(render)).count
        case .sum:
            if doubles { return values.reduce(0.0) { $0 + number($1)! } }
            return values.reduce(0) { $0 + ($1 as! Int) }
        case .average:
            guard !values.isEmpty else { return nil }
            return values.reduce(0.0) { $0 + number($1)! } / Double(values.count)
        case .min, .max:
            guard var best = values.first else { return nil }
            for value in values.dropFirst() where isLess(value, best) == (function == .min) && render(value) != render(best) { best = value }
            return best
        }
    }

    static func isLess(_ lhs: Any, _ rhs: Any) -> Bool {
        if let left = lhs as? String, let right = rhs as? String { return Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8)) }
        return number(lhs)! < number(rhs)!
    }
}
