// swell-object-bench: the object path (issue 42's cost check for optimistic locking): objects
// inserted, updated and deleted through a context and saved to a new SQLite store.
//
//   swell-object-bench insert|update|delete [--rows N]
//
// `insert` inserts N objects of `Item {id unique, name, price, qty, updated, note?}` and saves;
// `update` first stores N (untimed), fetches them all, changes one attribute of each and saves;
// `delete` first stores N (untimed), fetches them all, deletes every other one and saves. Each
// run prints the timed part's process CPU seconds and wall seconds. Not part of any product.

import Foundation
import SwellContexts
import SwellSQLite

let item = EntityDescription(name: "Item", attributes: [
    AttributeDescription(name: "id", type: .integer), AttributeDescription(name: "name", type: .string),
    AttributeDescription(name: "price", type: .double), AttributeDescription(name: "qty", type: .integer),
    AttributeDescription(name: "updated", type: .date), AttributeDescription(name: "note", type: .string, isOptional: true),
], uniquenessConstraint: ["id"])

var mode = "insert", rows = 100_000
var arguments = CommandLine.arguments.dropFirst()
if let first = arguments.first, !first.hasPrefix("--") { mode = first; arguments = arguments.dropFirst() }
while let flag = arguments.popFirst() {
    guard flag == "--rows", let value = arguments.popFirst().flatMap(Int.init) else {
        FileHandle.standardError.write(Data("usage: swell-object-bench insert|update|delete [--rows N]\n".utf8))
        exit(64)
    }
    rows = value
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func insertAll(_ context: ManagedObjectContext, rows: Int) throws {
    try context.performAndWait {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        for n in 0..<rows {
            let object = context.insertNewObject(forEntityName: "Item")
            object["id"] = n
            object["name"] = "item \(n)"
            object["price"] = Double(n) / 100
            object["qty"] = n % 50
            object["updated"] = now
        }
        try context.save()
        context.reset()
    }
}

/// Runs one workload and prints its timed part.
func run(mode: String, rows: Int) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swell-object-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [item]), storeTypes: [.sqlite])
    try coordinator.addPersistentStore(at: folder.appendingPathComponent("bench.sqlite"))
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    var started = (cpu: cpuSeconds(), wall: Date())
    switch mode {
    case "insert":
        try insertAll(context, rows: rows)
    case "update", "delete":
        try insertAll(context, rows: rows)
        started = (cpuSeconds(), Date())
        try context.performAndWait {
            let objects = try context.fetch(FetchRequest(entityName: "Item"))
            for (n, object) in objects.enumerated() {
                if mode == "update" { object["qty"] = n % 50 + 1 } else if n % 2 == 0 { context.delete(object) }
            }
            try context.save()
        }
    default:
        FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
        exit(64)
    }
    print(String(format: "%@ %d rows: %.2f s CPU, %.2f s wall", mode, rows, cpuSeconds() - started.cpu, Date().timeIntervalSince(started.wall)))
}

try run(mode: mode, rows: rows)
