// swell-migration-bench: a lightweight migration of a large store (issue 45's measure), timed.
//
//   swell-migration-bench create PATH     an empty store of model v1 (rows are added by SQL: bench/migration.sh)
//   swell-migration-bench migrate PATH    opens it with v2 and prints wall seconds, CPU seconds and peak RSS
//
// v1: Item {id (key), title?, count? integer, price? double}. v2 renames title to name, widens
// count to double and adds stock, required, default 5: the three changes of statement 57 that
// touch every row. Not part of any product.

import Foundation
import SwellContexts
import SwellSQLite

func model(_ version: Int) -> ManagedObjectModel {
    var attributes = [AttributeDescription(name: "id", type: .integer)]
    if version == 1 {
        attributes += [AttributeDescription(name: "title", type: .string, isOptional: true),
                       AttributeDescription(name: "count", type: .integer, isOptional: true)]
    } else {
        attributes += [AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "title"),
                       AttributeDescription(name: "count", type: .double, isOptional: true)]
    }
    attributes.append(AttributeDescription(name: "price", type: .double, isOptional: true))
    if version == 2 { attributes.append(AttributeDescription(name: "stock", type: .integer, defaultValue: 5)) }
    return ManagedObjectModel(entities: [EntityDescription(name: "Item", attributes: attributes, uniquenessConstraint: ["id"])],
                              versionIdentifier: "v\(version)")
}

func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }

let arguments = CommandLine.arguments
guard arguments.count == 3, ["create", "migrate"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: swell-migration-bench create|migrate PATH\n".utf8))
    exit(64)
}
let url = URL(fileURLWithPath: arguments[2])
let coordinator = PersistentStoreCoordinator(managedObjectModel: model(arguments[1] == "create" ? 1 : 2), storeTypes: [.sqlite])
let start = Date()
try coordinator.addPersistentStore(at: url)
let wall = Date().timeIntervalSince(start)
try coordinator.close()
if arguments[1] == "migrate" {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(String(format: "swell: %.2f s wall, %.2f s CPU, %.1f MiB peak RSS", wall, seconds(usage.ru_utime) + seconds(usage.ru_stime),
                 Double(usage.ru_maxrss) / 1024))
}
