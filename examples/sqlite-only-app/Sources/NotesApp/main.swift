// Notes kept in a SQLite file through SwellStore's three-level stack, with the untyped API
// (no `@Entity`: this package turns SwellStore's `Macros` trait off, and its `PostgreSQL` one).
// `swift run notes-app [store.sqlite]` adds a note and lists what the store holds.
import Foundation
import SwellStore

let note = EntityDescription(name: "Note", attributes: [
    AttributeDescription(name: "id", type: .integer),
    AttributeDescription(name: "text", type: .string),
    AttributeDescription(name: "written", type: .date),
], uniquenessConstraint: ["id"])

let path = CommandLine.arguments.dropFirst().first ?? ".swell/notes.sqlite"
let container = PersistentContainer(name: "Notes", managedObjectModel: ManagedObjectModel(entities: [note]),
                                    storeURL: URL(fileURLWithPath: path))
do {
    try container.loadPersistentStores()
    let context = container.newBackgroundContext()
    try context.performAndWait {
        let count = try context.count(for: FetchRequest(entityName: "Note"))
        let added = context.insertNewObject(forEntityName: "Note")
        added.setValue(count + 1, forKey: "id")
        added.setValue("note \(count + 1)", forKey: "text")
        added.setValue(Date(), forKey: "written")
        try context.save()
    }
    try await container.saveToDisk()
    var request = FetchRequest(entityName: "Note")
    request.sortDescriptors = [FetchSortDescriptor(key: "id")]
    try container.viewContext.performAndWait {
        for object in try container.viewContext.fetch(request) {
            print(object.value(forKey: "id") ?? "", object.value(forKey: "text") ?? "")
        }
    }
    // A postgres:// URL is refused here, naming what this program opens.
    let other = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [note]))
    do {
        try other.addPersistentStore(at: URL(string: "postgres://localhost/notes")!)
    } catch {
        print(error)
    }
} catch {
    FileHandle.standardError.write(Data("notes-app: \(error)\n".utf8))
    exit(1)
}
