import Foundation
import SwellTestSupport
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Batch requests against a model computed in the test (Store guarantees 37–42): random batch
/// inserts (dictionaries, handlers and columns; random merge policies, carried attributes,
/// repeated keys, rows missing a required value), batch updates and batch deletes; after
/// every request its counts and the stored rows are compared with `BatchModel`.
///
/// CI runs fixed seeds on every store; `SWELL_DIFF_SEEDS=500` runs more,
/// `SWELL_DIFF_SEED=n` replays one, `SWELL_DIFF_STEPS` sets the requests per seed.
@Suite(.onEveryStore) struct BatchDifferentialTests {
    static var seeds: [UInt64] { DifferentialSeeds.seeds(ci: 8) }

    static var steps: Int { DifferentialSeeds.steps(ci: 40) }

    @Test(arguments: seeds) func batchRequestsDoWhatTheModelSays(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let container = try makeContainer(directory, name: "batches")
        var random = SeededGenerator(state: seed)
        var model = BatchModel()
        var log: [String] = []
        let worker = container.newBackgroundContext()
        // A column insert may be compared ahead (`compareAhead`) from another context and
        // executed only after up to two later requests: it must do what the model says for
        // the order of execution, as if it had not been compared ahead.
        let comparer = container.newBackgroundContext()
        var deferred: [(request: BatchModel.Request, made: any BatchRequest, after: Int, step: Int)] = []
        var failure: String?

        func execute(_ request: BatchModel.Request, _ made: any BatchRequest, step: Int, ahead: Bool) throws {
            log.append("\(step). \(ahead ? "(compared ahead) " : "")\(request)")
            worker.mergePolicy = request.policy
            let expected = model.apply(request)
            let outcome = Result { try worker.performAndWait { try worker.execute(made) } }
            var mismatches: [String] = []
            switch (outcome, expected) {
            case (.success(let result), let counts?):
                let got = [result.inserted, result.updated, result.unchanged, result.deleted]
                if got != counts { mismatches.append("counts (inserted, updated, unchanged, deleted): got \(got), expected \(counts)") }
            case (.failure(let error), nil):
                guard error is StoreError else { mismatches.append("error of type \(type(of: error)): \(error)"); break }
            case (.success(let result), nil):
                mismatches.append("succeeded (\(result.inserted) inserted, \(result.updated) updated), expected an error")
            case (.failure(let error), _?):
                mismatches.append("failed: \(error)")
            }
            let stored = try BatchModel.read(container)
            if stored != model.rows {
                for id in Set(stored.keys).union(model.rows.keys).sorted() where stored[id] != model.rows[id] {
                    mismatches.append("id \(id): stored \(stored[id].map { "\($0)" } ?? "nothing"), model \(model.rows[id].map { "\($0)" } ?? "nothing")")
                }
            }
            if !mismatches.isEmpty {
                failure = """
                    seed \(seed), store \(directory.store), request \(step): \(mismatches.joined(separator: "; "))
                    replay: SWELL_DIFF_SEED=\(seed) SWELL_TEST_STORE=\(directory.store) swift test --filter BatchDifferentialTests
                    requests, in the order executed:
                    \(log.map { "  \($0)" }.joined(separator: "\n"))
                    """
            }
        }

        for step in 1...Self.steps where failure == nil {
            let request = BatchModel.randomRequest(&random, known: model.rows.keys.sorted())
            let made = request.make()
            if case .insert(let policy, 2, _) = request, random.next() % 3 == 0, let insert = made as? BatchInsertRequest {
                // Mostly under the policy it will run with; else the comparison must go unused.
                let aheadPolicy = random.next() % 5 == 0 ? BatchModel.policies[Int(random.next() % UInt64(BatchModel.policies.count))] : policy
                comparer.performAndWait {
                    comparer.mergePolicy = aheadPolicy
                    comparer.compareAhead(insert)
                }
                deferred.append((request, made, Int(random.next() % 3), step))
            } else {
                try execute(request, made, step: step, ahead: false)
            }
            while failure == nil, let index = deferred.firstIndex(where: { $0.after == 0 }) {
                let due = deferred.remove(at: index)
                try execute(due.request, due.made, step: due.step, ahead: true)
            }
            for index in deferred.indices { deferred[index].after -= 1 }
        }
        for due in deferred where failure == nil {
            try execute(due.request, due.made, step: due.step, ahead: true)
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }
}

/// The stored journal entries as the batch requests should leave them: id → the values
/// that are not nil ("date" as seconds, "rating" as a number, the strings as they are).
struct BatchModel {
    typealias Row = [String: String]
    var rows: [Int: Row] = [:]

    static let optional = ["location", "period", "rating", "height", "wind"]

    static let policies: [MergePolicy] = [.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback]

    /// One random request, described the way the model applies it.
    enum Request: CustomStringConvertible {
        /// Rows as attribute → value (nil: an explicit nil); `form` 0 dictionaries, 1 a handler, 2 columns.
        case insert(policy: MergePolicy, form: Int, rows: [[String: String?]])
        /// `rating >= minimum` (nil: every row) gets `rating + add`, or `location = value`.
        case update(minimum: Int?, add: Int?, location: String?)
        case delete(ids: [Int])

        var policy: MergePolicy {
            if case .insert(let policy, _, _) = self { return policy }
            return .mergeByPropertyObjectTrump
        }

        var description: String {
            switch self {
            case .insert(let policy, let form, let rows):
                let text = rows.map { row in row.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value ?? "nil")" }.joined(separator: " ") }
                return "insert \(["dictionaries", "handler", "columns"][form]) \(policy): [\(text.joined(separator: " | "))]"
            case .update(let minimum, let add, let location):
                return "update where rating >= \(minimum.map(String.init) ?? "-"): " + (add.map { "rating + \($0)" } ?? "location = \(location ?? "nil")")
            case .delete(let ids): return "delete \(ids)"
            }
        }

        func make() -> any BatchRequest {
            let request: any BatchRequest
            switch self {
            case .insert(_, let form, let rows):
                let dictionaries: [[String: Any]] = rows.map { row in
                    var dictionary: [String: Any] = [:]
                    for (name, value) in row { dictionary[name] = value.map { BatchModel.typed(name, $0) } ?? NSNull() }
                    return dictionary
                }
                switch form {
                case 0: request = BatchInsertRequest(entityName: "JournalEntry", objects: dictionaries)
                case 1:
                    let counter = LockedCounter()
                    request = BatchInsertRequest(entityName: "JournalEntry") { row in
                        let index = counter.next()
                        guard index < dictionaries.count else { return true }
                        row = dictionaries[index]
                        return false
                    }
                default:
                    // Columns carry the same attributes in every row: those of the first.
                    var columns = BatchColumns()
                    let names = rows.first.map { Array($0.keys).sorted() } ?? []
                    var integers: [String: BatchColumns.IntegerColumn] = [:], texts: [String: BatchColumns.TextColumn] = [:]
                    var dates: [String: BatchColumns.DateColumn] = [:]
                    for name in names {
                        switch name {
                        case "id", "rating": integers[name] = columns.integers(name)
                        case "date": dates[name] = columns.dates(name)
                        default: texts[name] = columns.strings(name)
                        }
                    }
                    for row in rows {
                        for name in names {
                            let value = row[name] ?? nil
                            if let column = integers[name] { columns.append(value.flatMap { Int64($0) }, to: column) }
                            if let column = dates[name] { columns.append(value.flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) }, to: column) }
                            if let column = texts[name] { columns.append(value, to: column) }
                        }
                    }
                    request = BatchInsertRequest(entityName: "JournalEntry", columns: columns)
                }
            case .update(let minimum, let add, let location):
                let update = BatchUpdateRequest(entityName: "JournalEntry")
                if let minimum { update.predicate = FetchPredicate(format: "rating >= %@", minimum) }
                if let add {
                    update.propertiesToUpdate = ["rating": BatchExpression("rating + \(add)")]
                } else {
                    update.propertiesToUpdate = ["location": location as Any? ?? NSNull()]
                }
                request = update
            case .delete(let ids):
                var fetch = FetchRequest(entityName: "JournalEntry")
                fetch.predicate = FetchPredicate(format: "id IN %@", ids)
                request = BatchDeleteRequest(fetchRequest: fetch)
            }
            request.resultType = .changes
            return request
        }
    }

    /// The Swift value an attribute takes for the model's text of it.
    static func typed(_ name: String, _ text: String) -> Any {
        switch name {
        case "id", "rating": return Int(text)!
        case "date": return Date(timeIntervalSince1970: Double(text)!)
        default: return text
        }
    }

    static func randomRequest(_ random: inout SeededGenerator, known: [Int]) -> Request {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6:
            let policy = policies.randomElement(using: &random)!
            let form = Int.random(in: 0..<3, using: &random)
            // Columns carry one set of attributes for all rows; dictionaries each their own.
            func attributes() -> [String] {
                var names = ["id"]
                if Int.random(in: 0..<12, using: &random) > 0 { names.append("date") }
                names += optional.filter { _ in Bool.random(using: &random) }
                return names
            }
            // A third of the column requests carry every attribute: the path where differing
            // rows are updated from the buffers, without their stored values.
            let shared = form == 2 && Int.random(in: 0..<3, using: &random) == 0 ? ["id", "date"] + optional : attributes()
            let rows: [[String: String?]] = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                var row: [String: String?] = [:]
                for name in form == 2 ? shared : attributes() {
                    switch name {
                    case "id": row[name] = String(Int.random(in: 1...12, using: &random))
                    case "date": row[name] = String(Int.random(in: 0...2, using: &random) * 86_400)
                    case "rating": row[name] = Int.random(in: 0..<4, using: &random) == 0 ? .some(nil) : String(Int.random(in: 0...5, using: &random))
                    default: row[name] = Int.random(in: 0..<4, using: &random) == 0 ? .some(nil) : ["a", "b", "c"].randomElement(using: &random)!
                    }
                }
                return row
            }
            return .insert(policy: policy, form: form, rows: rows)
        case 6..<8:
            let minimum = Bool.random(using: &random) ? Int.random(in: 0...6, using: &random) : nil
            if Bool.random(using: &random) { return .update(minimum: minimum, add: Int.random(in: -1...2, using: &random), location: nil) }
            return .update(minimum: minimum, add: nil, location: Bool.random(using: &random) ? nil : ["a", "b", "z"].randomElement(using: &random)!)
        default:
            let ids = (0..<Int.random(in: 0...3, using: &random)).map { _ in known.randomElement(using: &random) ?? 1 } + [Int.random(in: 1...12, using: &random)]
            return .delete(ids: ids)
        }
    }

    /// Applies a request; returns (inserted, updated, unchanged, deleted), or nil when it must fail (nothing changes then).
    mutating func apply(_ request: Request) -> [Int]? {
        switch request {
        case .insert(let policy, _, let given):
            // The later row for a key wins, whole.
            var order: [Int] = []
            var byID: [Int: [String: String?]] = [:]
            for row in given {
                let id = Int((row["id"] ?? nil)!)!
                if byID[id] == nil { order.append(id) }
                byID[id] = row
            }
            var next = rows
            var counts = [0, 0, 0, 0]
            for id in order {
                let incoming = byID[id]!
                var carried: Row = [:]
                for (name, value) in incoming where name != "id" { if let value { carried[name] = value } }
                guard let existing = rows[id] else {
                    if carried["date"] == nil { return nil }
                    next[id] = carried
                    counts[0] += 1
                    continue
                }
                var merged = existing
                switch policy {
                case .error: return nil
                case .rollback: break
                case .mergeByPropertyObjectTrump:
                    for name in incoming.keys where name != "id" { merged[name] = carried[name] }
                case .mergeByPropertyStoreTrump:
                    for (name, value) in carried where merged[name] == nil { merged[name] = value }
                case .overwrite:
                    merged = carried
                }
                if merged["date"] == nil { return nil }
                if merged == existing { counts[2] += 1 } else { counts[1] += 1 }
                next[id] = merged
            }
            rows = next
            return counts
        case .update(let minimum, let add, let location):
            var counts = [0, 0, 0, 0]
            for (id, row) in rows {
                if let minimum {
                    guard let rating = row["rating"].flatMap({ Int($0) }), rating >= minimum else { continue }
                }
                var changed = row
                if let add {
                    changed["rating"] = row["rating"].flatMap { Int($0) }.map { String($0 + add) }
                } else {
                    changed["location"] = location
                }
                if changed == row { counts[2] += 1 } else { counts[1] += 1 }
                rows[id] = changed
            }
            return counts
        case .delete(let ids):
            let gone = Set(ids).intersection(rows.keys)
            for id in gone { rows[id] = nil }
            return [0, 0, 0, gone.count]
        }
    }

    /// The stored entries, read by a root context of its own.
    static func read(_ container: PersistentContainer) throws -> [Int: Row] {
        let reader = try makeRootContext(at: container.storeURL)
        return try reader.performAndWait {
            var result: [Int: Row] = [:]
            for object in try reader.fetch(FetchRequest(entityName: "JournalEntry")) {
                var row: Row = [:]
                if let date = object["date"] as? Date { row["date"] = String(Int(date.timeIntervalSince1970)) }
                for name in optional { if let value = object[name] { row[name] = "\(value)" } }
                result[object["id"] as! Int] = row
            }
            return result
        }
    }
}
