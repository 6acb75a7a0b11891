import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport
import SwellTestSupport

// Statement 57, differentially: random model histories (attributes added with or without a
// default, renamed, removed, widened, made required with a default or optional again) over
// random rows, migrated step by step on every store, each step's rows compared with what a
// model kept here computes on its own. Seeds are fixed; a failure names its seed, and
// `SWELL_MIGRATION_SEED=<seed>` replays that one alone.

/// A value as the test's model holds it.
private enum Value: Equatable {
    case integer(Int), double(Double), string(String), boolean(Bool)

    /// As `describe` prints what a context reads back.
    var described: String {
        switch self {
        case .integer(let value): "i:\(value)"
        case .double(let value): "d:\(value)"
        case .string(let value): "s:\(value)"
        case .boolean(let value): "b:\(value)"
        }
    }

    var swiftValue: Any {
        switch self {
        case .integer(let value): value
        case .double(let value): value
        case .string(let value): value
        case .boolean(let value): value
        }
    }

    /// The value after its attribute's type widened, by the rule written out here: an integer is
    /// the same number, or its digits; a double its digits when whole (below 2^53), else its
    /// shortest round-trip text; a boolean "true"/"false".
    func widened(to type: AttributeType) -> Value {
        switch (self, type) {
        case (.integer(let value), .double): .double(Double(value))
        case (.integer(let value), .string): .string("\(value)")
        case (.double(let value), .string):
            // Whole below 2^53: digits; else the shortest round-trip text, an exponent from 1e15 on
            // (PostgreSQL's float8 text; Swift writes this one without).
            .string(value == value.rounded() && abs(value) < 9_007_199_254_740_992 ? "\(Int64(value))"
                    : value == 1_234_567_890_123_456.5 ? "1.2345678901234565e+15" : "\(value)")
        case (.boolean(let value), .string): .string(value ? "true" : "false")
        default: self
        }
    }
}

/// One attribute of the test's model.
private struct Column {
    var name: String
    var type: AttributeType
    var isOptional: Bool
    var defaultValue: Value?
    var renamedFrom: String?

    var description: AttributeDescription {
        AttributeDescription(name: name, type: type, isOptional: isOptional, renamingIdentifier: renamedFrom,
                             defaultValue: defaultValue?.swiftValue)
    }
}

/// The test's model of the store: the attributes and every row's values (by `id`).
private struct Expected {
    var columns: [Column] = []
    var rows: [Int: [String: Value]] = [:]
    var nextName = 0
    var nextID = 1

    var model: ManagedObjectModel {
        let attributes = [AttributeDescription(name: "id", type: .integer)] + columns.map(\.description)
        return ManagedObjectModel(entities: [EntityDescription(name: "Thing", attributes: attributes, uniquenessConstraint: ["id"])])
    }

    mutating func updateRows(_ body: (inout [String: Value]) -> Void) {
        rows = rows.mapValues { row in
            var row = row
            body(&row)
            return row
        }
    }

    mutating func name() -> String {
        nextName += 1
        return "a\(nextName)"
    }
}

private struct History {
    var random: SeededGenerator
    var expected = Expected()
    var log: [String] = []

    init(seed: UInt64) { random = SeededGenerator(state: seed) }

    mutating func value(of type: AttributeType) -> Value {
        switch type {
        case .integer: .integer(Int.random(in: -1_000...1_000, using: &random))
        case .double: .double([0.1, 2.5, 1.0, -3.75, 1e-7, 123_456.789, 1e20, 1_234_567_890_123_456.5, Double(Int.random(in: -99...99, using: &random)) / 8]
            .randomElement(using: &random)!)
        case .boolean: .boolean(Bool.random(using: &random))
        default: .string(["", "a", "Ab c", "ünï", "x,y\"z"].randomElement(using: &random)! + "\(Int.random(in: 0...9, using: &random))")
        }
    }

    /// One change to the model, applied to the expected rows as the store must apply it.
    mutating func change() {
        expected.columns.indices.forEach { expected.columns[$0].renamedFrom = nil }
        let kinds = expected.columns.isEmpty ? ["add"] : ["add", "add", "rename", "remove", "widen", "require", "optional"]
        switch kinds.randomElement(using: &random)! {
        case "add":
            let type = [AttributeType.integer, .double, .string, .boolean].randomElement(using: &random)!
            let optional = Int.random(in: 0..<3, using: &random) > 0
            let fill: Value? = !optional || Bool.random(using: &random) ? value(of: type) : nil
            let column = Column(name: expected.name(), type: type, isOptional: optional, defaultValue: fill)
            expected.columns.append(column)
            expected.updateRows { $0[column.name] = fill }
            log.append("add \(column.name) \(type) optional=\(optional) default=\(fill?.described ?? "none")")
        case "rename":
            let index = Int.random(in: expected.columns.indices, using: &random)
            let old = expected.columns[index].name, new = expected.name()
            expected.columns[index].name = new
            expected.columns[index].renamedFrom = old
            expected.updateRows { $0[new] = $0.removeValue(forKey: old) }
            log.append("rename \(old) → \(new)")
        case "remove":
            let column = expected.columns.remove(at: Int.random(in: expected.columns.indices, using: &random))
            expected.updateRows { $0[column.name] = nil }
            log.append("remove \(column.name)")
        case "widen":
            let widenable = expected.columns.indices.filter { [.integer, .double, .boolean].contains(expected.columns[$0].type) }
            guard let index = widenable.randomElement(using: &random) else { return change() }
            let from = expected.columns[index].type
            let to: AttributeType = from == .integer ? [.double, .string].randomElement(using: &random)! : .string
            expected.columns[index].type = to
            expected.columns[index].defaultValue = expected.columns[index].defaultValue?.widened(to: to)
            let name = expected.columns[index].name
            expected.updateRows { $0[name] = $0[name]?.widened(to: to) }
            log.append("widen \(name) \(from) → \(to)")
        case "require":
            guard let index = expected.columns.indices.filter({ expected.columns[$0].isOptional }).randomElement(using: &random) else { return change() }
            let fill = value(of: expected.columns[index].type)
            expected.columns[index].isOptional = false
            expected.columns[index].defaultValue = fill
            let name = expected.columns[index].name
            expected.updateRows { if $0[name] == nil { $0[name] = fill } }
            log.append("require \(name) default=\(fill.described)")
        default:
            guard let index = expected.columns.indices.filter({ !expected.columns[$0].isOptional }).randomElement(using: &random) else { return change() }
            expected.columns[index].isOptional = true
            log.append("optional \(expected.columns[index].name)")
        }
    }

    /// Random inserts and updates under the current model, made in `context` and in the expected rows.
    mutating func edit(_ context: ManagedObjectContext) throws {
        var inserts: [Int: [String: Value]] = [:]
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            var row: [String: Value] = [:]
            for column in expected.columns {
                if column.isOptional && Bool.random(using: &random) { continue }
                row[column.name] = value(of: column.type)
            }
            inserts[expected.nextID] = row
            expected.nextID += 1
        }
        let updated = expected.rows.keys.sorted().filter { _ in Int.random(in: 0..<4, using: &random) == 0 }
        var updates: [Int: (String, Value?)] = [:]
        for id in updated {
            guard let column = expected.columns.randomElement(using: &random) else { continue }
            let new: Value? = column.isOptional && Bool.random(using: &random) ? nil : value(of: column.type)
            updates[id] = (column.name, new)
        }
        let columns = expected.columns
        try context.performAndWait {
            for (id, row) in inserts {
                let object = context.insertNewObject(forEntityName: "Thing")
                object["id"] = id
                for column in columns { object[column.name] = row[column.name]?.swiftValue }
            }
            for object in try context.fetch(FetchRequest(entityName: "Thing")) {
                guard let id = object["id"] as? Int, let (name, value) = updates[id] else { continue }
                object[name] = value?.swiftValue
            }
            try context.save()
        }
        expected.rows.merge(inserts) { _, new in new }
        for (id, (name, value)) in updates { expected.rows[id]?[name] = value }
    }
}

/// Runs one seed on the current pass's store: five model changes, edits between them.
private func checkMigrationSeed(_ seed: UInt64, directory: TemporaryDirectory) throws {
    var history = History(seed: seed)
    let opener = StoreOpener(url: directory.storeURL("history\(seed)"))
    history.change()
    try history.edit(try opener.open(history.expected.model))
    for step in 1...5 {
        history.change()
        let context = try opener.open(history.expected.model)
        let names = history.expected.columns.map(\.name)
        let read: [Int: [String: String]] = try context.performAndWait {
            var rows: [Int: [String: String]] = [:]
            for object in try context.fetch(FetchRequest(entityName: "Thing")) {
                guard let id = object["id"] as? Int else { continue }
                rows[id] = Dictionary(uniqueKeysWithValues: names.map { ($0, describe(object[$0])) })
            }
            return rows
        }
        let wanted = history.expected.rows.mapValues { row in
            Dictionary(uniqueKeysWithValues: names.map { ($0, row[$0]?.described ?? "nil") })
        }
        #expect(read == wanted, "seed \(seed), after step \(step): \(history.log.joined(separator: "; "))")
        guard read == wanted else { return }
        try history.edit(context)
    }
}

@Suite(.onEveryStore) struct MigrationDifferentialTests {
    @Test func randomModelHistoriesMigrateAsTheModelComputes() throws {
        if let replay = ProcessInfo.processInfo.environment["SWELL_MIGRATION_SEED"], let seed = UInt64(replay) {
            try checkMigrationSeed(seed, directory: TemporaryDirectory())
            return
        }
        let directory = TemporaryDirectory()
        for seed in UInt64(1)...40 {
            do {
                try checkMigrationSeed(seed, directory: directory)
            } catch {
                Issue.record("seed \(seed): \(error)")
                return
            }
        }
    }
}
