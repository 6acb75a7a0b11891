import Foundation
import Testing
@testable import SwellContexts
import SwellStore
import SwellStoreTestSupport

/// Statement 24: lightweight migration, and clear errors for what cannot be inferred.
@Suite(.onEveryStore) struct MigrationTests {
    let directory = TemporaryDirectory()

    private func store(with model: ManagedObjectModel, rows: Int) async throws -> URL {
        let url = directory.file("migrate.sqlite")
        let container = PersistentContainer(name: "migrate", managedObjectModel: model, storeURL: url)
        try container.loadPersistentStores()
        try await container.writerContext.perform {
            for id in 0..<rows { insertEntry(container.writerContext, id: id) }
            try container.writerContext.save()
        }
        return url
    }

    private func model(_ change: (inout EntityDescription) -> Void) -> ManagedObjectModel {
        var entity = journalEntity
        change(&entity)
        return ManagedObjectModel(entities: [entity, noteEntity])
    }

    private func migrationError(_ url: URL, _ model: ManagedObjectModel) -> (entity: String, attribute: String?)? {
        do {
            try PersistentStoreCoordinator(managedObjectModel: model).addPersistentStore(at: url)
            return nil
        } catch let error as StoreError where error.kind == .migrationFailed {
            return (error.entity ?? "", error.attribute)
        } catch {
            return ("unexpected \(error)", nil)
        }
    }

    @Test func anAddedAttributeGetsAColumnAndKeepsTheRows() async throws {
        let url = try await store(with: journalModel, rows: 3)
        let grown = model { $0.attributes.append(AttributeDescription(name: "spotName", type: .string, isOptional: true)) }
        let context = try makeRootContext(at: url, model: grown)
        try context.performAndWait {
            let entries = try context.fetch(FetchRequest(entityName: "JournalEntry"))
            #expect(entries.count == 3)
            #expect(entries[0]["spotName"] == nil)
            entries[0]["spotName"] = "Linda Mar"
            try context.save()
        }
        #expect(try count(try makeRootContext(at: url, model: grown), "JournalEntry", "spotName == 'Linda Mar'") == 1)
    }

    @Test func aNewEntityGetsATable() async throws {
        let url = try await store(with: journalModel, rows: 1)
        var grown = journalModel
        grown.entities.append(EntityDescription(name: "Spot", attributes: [AttributeDescription(name: "name", type: .string)],
                                                uniquenessConstraint: ["name"]))
        #expect(try count(try makeRootContext(at: url, model: grown), "Spot") == 0)
    }

    @Test func aTypeChangeFailsNamingTheEntityAndAttribute() async throws {
        let url = try await store(with: journalModel, rows: 1)
        // integer → string is a widening now (statement 57); string → integer is not.
        let changed = model { $0.attributes[2] = AttributeDescription(name: "height", type: .integer, isOptional: true) }
        let error = migrationError(url, changed)
        #expect(error?.entity == "JournalEntry")
        #expect(error?.attribute == "height")
    }

    @Test func aNewRequiredAttributeOnANonEmptyTableFails() async throws {
        let url = try await store(with: journalModel, rows: 1)
        let changed = model { $0.attributes.append(AttributeDescription(name: "spotName", type: .string)) }
        let error = migrationError(url, changed)
        #expect(error?.entity == "JournalEntry")
        #expect(error?.attribute == "spotName")
    }

    @Test func aNewRequiredAttributeOnAnEmptyTableIsAdded() async throws {
        let url = try await store(with: journalModel, rows: 0)
        let changed = model { $0.attributes.append(AttributeDescription(name: "spotName", type: .string)) }
        #expect(migrationError(url, changed) == nil)
    }

    @Test func aChangedKeyOnANonEmptyTableFails() async throws {
        let url = try await store(with: journalModel, rows: 2)
        let changed = model { $0.uniquenessConstraint = ["id", "date"] }
        let error = migrationError(url, changed)
        #expect(error?.entity == "JournalEntry")
        #expect(error?.attribute != nil)
    }

    @Test func aKeyThatStopsOrStartsBeingTheRowidRebuildsTheTableKeepingEveryID() async throws {
        let url = try await store(with: journalModel, rows: 3)
        let ids = try entriesByKey(try makeRootContext(at: url)).mapValues(\.id)
        #expect(ids.count == 3)
        // An optional key cannot be the rowid (it may be nil): `_pk` is again, the key gets its index.
        let optional = model { $0.attributes[0].isOptional = true }
        let context = try makeRootContext(at: url, model: optional)
        #expect(try storedRows(url, "SELECT name FROM pragma_table_info('JournalEntry') WHERE pk > 0") == [[.text("_pk")]])
        #expect(try storedRows(url, "SELECT name FROM pragma_index_list('JournalEntry')") == [[.text("swell_JournalEntry_key")]])
        #expect(try entriesByKey(context).mapValues(\.id) == ids)
        try context.performAndWait {
            insertEntry(context, id: 10, location: "no longer the rowid")
            try context.save()
        }
        // Required again: the key is the rowid again.
        let required = try makeRootContext(at: url)
        #expect(try storedRows(url, "SELECT name FROM pragma_table_info('JournalEntry') WHERE pk > 0") == [[.text("id")]])
        let again = try entriesByKey(required)
        #expect(again.count == 4)
        #expect(again.filter { $0.key != 10 }.mapValues(\.id) == ids)
        #expect(again[10]?.location == "no longer the rowid")
    }

    @Test func aFileThatIsNotAStoreFailsClearly() throws {
        let url = directory.file("not-a-store.sqlite")
        try Data("this is not sqlite, just text that is long enough to have a header".utf8).write(to: url)
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: journalModel).addPersistentStore(at: url)
        } throws: { error in
            guard let error = error as? StoreError, error.kind == .notAStore else { return false }
            return error.path == url.path
        }
        let folder = directory.file("folder.sqlite")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(throws: StoreError.self) {
            try PersistentStoreCoordinator(managedObjectModel: journalModel).addPersistentStore(at: folder)
        }
    }

    @Test func anUnusableModelIsRejected() throws {
        let bad = ManagedObjectModel(entities: [EntityDescription(name: "swell_things", attributes: [AttributeDescription(name: "a", type: .string)])])
        #expect(throws: ModelError.self) {
            try PersistentStoreCoordinator(managedObjectModel: bad).addPersistentStore(at: directory.file("bad.sqlite"))
        }
        let badKey = ManagedObjectModel(entities: [EntityDescription(name: "Thing", attributes: [AttributeDescription(name: "a", type: .string)],
                                                                     uniquenessConstraint: ["b"])])
        #expect(throws: ModelError.unknownKeyAttribute(entity: "Thing", attribute: "b")) {
            try PersistentStoreCoordinator(managedObjectModel: badKey).addPersistentStore(at: directory.file("bad2.sqlite"))
        }
    }

    /// The row limit is the model's rule (validate), counted over the stored columns: 255
    /// attributes and one to-one relationship fit, a 257th column does not.
    @Test func anEntityWiderThanAStoreRowIsAModelError() throws {
        func model(attributes: Int) -> ManagedObjectModel {
            var wide = EntityDescription(name: "Wide", attributes: (1...attributes).map { AttributeDescription(name: "a\($0)", type: .integer, isOptional: true) })
            wide.relationships = [RelationshipDescription(name: "owner", destination: "Owner", isOptional: true)]
            return ManagedObjectModel(entities: [wide, EntityDescription(name: "Owner", attributes: [AttributeDescription(name: "id", type: .integer)])])
        }
        try model(attributes: 255).validate()
        #expect(throws: ModelError.tooManyAttributes(entity: "Wide", count: 257, limit: 256)) { try model(attributes: 256).validate() }
        #expect(throws: ModelError.tooManyAttributes(entity: "Wide", count: 257, limit: 256)) {
            try PersistentStoreCoordinator(managedObjectModel: model(attributes: 256)).addPersistentStore(at: directory.storeURL("wide"))
        }
    }
}
