// swell-typed-batch-bench: a batch insert of the flat sync's records (the bench records of
// ../shared/bench/gen.py: id, date, height, period, wind, location, rating) into a new SQLite
// store, through a described entity and through the same entity as an `@Entity` class.
//
//   swell-typed-batch-bench described|typed [--rows N] [--batch N] [--repeat N]
//
// Each pass makes a new store in a temporary folder, fills BatchColumns for --batch rows at a
// time (as the flat sync's writer does) and executes a BatchInsertRequest per batch on a
// private-queue root context; it prints the pass's process CPU seconds and wall seconds.
// The rows are generated in memory; only building columns and inserting them is timed.
// Not part of any product.

import Foundation
import SwellStore

@Entity final class BenchEntry {
    @Unique var id: Int
    var date: Date
    var height: String?
    var period: String?
    var wind: String?
    var location: String?
    var rating: Int?

    init(id: Int, date: Date) {
        self.id = id
        self.date = date
    }
}

let described = EntityDescription(name: "BenchEntry", attributes: [
    AttributeDescription(name: "id", type: .integer), AttributeDescription(name: "date", type: .date),
    AttributeDescription(name: "height", type: .string, isOptional: true),
    AttributeDescription(name: "period", type: .string, isOptional: true),
    AttributeDescription(name: "wind", type: .string, isOptional: true),
    AttributeDescription(name: "location", type: .string, isOptional: true),
    AttributeDescription(name: "rating", type: .integer, isOptional: true),
], uniquenessConstraint: ["id"])

var mode = "typed", rows = 1_000_000, batch = 10_000, repeats = 1
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "described", "typed": mode = argument
    case "--rows": rows = Int(arguments.popFirst() ?? "") ?? rows
    case "--batch": batch = Int(arguments.popFirst() ?? "") ?? batch
    case "--repeat": repeats = Int(arguments.popFirst() ?? "") ?? repeats
    default:
        FileHandle.standardError.write(Data("usage: swell-typed-batch-bench described|typed [--rows N] [--batch N] [--repeat N]\n".utf8))
        exit(2)
    }
}

let winds = ["light", "onshore", "offshore", "cross-shore"], locations = ["Ocean Beach", "Pacifica", "Linda Mar", "Montara"]

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The column handles of one batch, made by name or by key path.
struct Handles {
    var id: BatchColumns.IntegerColumn, date: BatchColumns.DateColumn, height: BatchColumns.TextColumn
    var period: BatchColumns.TextColumn, wind: BatchColumns.TextColumn, location: BatchColumns.TextColumn
    var rating: BatchColumns.IntegerColumn

    init(typed columns: inout BatchColumns) {
        id = columns.column(\BenchEntry.id); date = columns.column(\BenchEntry.date)
        height = columns.column(\BenchEntry.height); period = columns.column(\BenchEntry.period)
        wind = columns.column(\BenchEntry.wind); location = columns.column(\BenchEntry.location)
        rating = columns.column(\BenchEntry.rating)
    }

    init(described columns: inout BatchColumns) {
        id = columns.integers("id"); date = columns.dates("date"); height = columns.strings("height")
        period = columns.strings("period"); wind = columns.strings("wind"); location = columns.strings("location")
        rating = columns.integers("rating")
    }
}

for pass in 1...repeats {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("typed-batch-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let model = mode == "typed" ? ManagedObjectModel(entities: [BenchEntry.self]) : ManagedObjectModel(entities: [described])
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(at: folder.appendingPathComponent("bench.sqlite"))
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    let startCPU = cpuSeconds(), start = Date()
    try context.performAndWait {
        var row = 0
        while row < rows {
            var columns = BatchColumns()
            let handles = mode == "typed" ? Handles(typed: &columns) : Handles(described: &columns)
            columns.reserveCapacity(rows: batch, textBytes: 12)
            for _ in 0..<min(batch, rows - row) {
                columns.append(row, to: handles.id)
                columns.append(secondsSince1970: 1_600_000_000 + Double(row * 60), to: handles.date)
                columns.append(row % 7 == 0 ? nil : "\(row % 9 + 1) ft", to: handles.height)
                columns.append("\(row % 15 + 5) s", to: handles.period)
                columns.append(winds[row % winds.count], to: handles.wind)
                columns.append(locations[row % locations.count], to: handles.location)
                columns.append(row % 5 == 0 ? nil : row % 6, to: handles.rating)
                row += 1
            }
            let request = mode == "typed"
                ? BatchInsertRequest(entity: BenchEntry.self, columns: columns)
                : BatchInsertRequest(entityName: "BenchEntry", columns: columns)
            _ = try context.execute(request)
        }
    }
    let cpu = cpuSeconds() - startCPU, wall = Date().timeIntervalSince(start)
    print("\(mode) pass \(pass): \(rows) rows, cpu \(String(format: "%.2f", cpu)) s, wall \(String(format: "%.2f", wall)) s")
}
